import { u8aToHex, hexToU8a } from '@polkadot/util'
import { blake2AsU8a, ed25519PairFromSeed, ed25519Sign } from '@polkadot/util-crypto'
import { peerBindingPayload, peerIdOfEd25519 } from '../../protocols/identity/peer-binding.js'

// Real Ed25519 libp2p peer identities for chain tests: register_node takes the
// peer key's signature of the binding (protocols/identity/peer-binding.ts).

export interface TestPeer { peerId: string, publicKey: Uint8Array, sign: (payload: Uint8Array) => Uint8Array }

/** A deterministic peer identity per name. */
export function testPeer (name: string): TestPeer {
  const pair = ed25519PairFromSeed(blake2AsU8a(`proofswarm test peer ${name}`, 256))
  return { peerId: peerIdOfEd25519(pair.publicKey), publicKey: pair.publicKey, sign: m => ed25519Sign(m, pair) }
}

/** register_node arguments for `account` on the chain with `genesis`, binding the peer named `peerName`. */
export function registerArgs (
  genesis: string, account: string, peerName: string, roles: number, stake: bigint
): { peerId: string, roles: number, stake: bigint, peerSig: string } {
  const p = testPeer(peerName)
  return {
    peerId: u8aToHex(new TextEncoder().encode(p.peerId)), roles, stake, peerSig: u8aToHex(p.sign(peerBindingPayload(hexToU8a(genesis), hexToU8a(account))))
  }
}
