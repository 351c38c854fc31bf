import { base58btc } from 'multiformats/bases/base58'

// The chain binds a node's account to a libp2p peer id, and everyone dials a
// solver (for checkpoints, for a dispute) at the peer id its account
// registered. A binding must therefore prove possession of the peer's key: an
// account could otherwise register somebody else's peer id (squatting it, or
// sending challengers to a peer that has nothing to answer). The peer signs
// DOMAIN ‖ genesis hash ‖ account with its libp2p identity key; the chain
// recovers the public key from the peer id itself.
//
// Only Ed25519 peer ids (js-libp2p's default, "12D3KooW…") are bound: their
// id is the identity multihash of the protobuf public key, so the key is in
// the id and no lookup is needed.

export const PEER_BINDING_DOMAIN = new TextEncoder().encode('proofswarm/register-peer/v1:')

// identity multihash (code 0x00, length 36) of the protobuf PublicKey {Type: Ed25519 (1), Data: 32 bytes}
const ED25519_PREFIX = Uint8Array.of(0x00, 0x24, 0x08, 0x01, 0x12, 0x20)

export type Ed25519Verify = (message: Uint8Array, signature: Uint8Array, publicKey: Uint8Array) => boolean

/** The payload a peer's key signs to bind it to `account` on the chain with `genesis`. */
export function peerBindingPayload (genesis: Uint8Array, account: Uint8Array): Uint8Array {
  const out = new Uint8Array(PEER_BINDING_DOMAIN.length + genesis.length + account.length)
  out.set(PEER_BINDING_DOMAIN)
  out.set(genesis, PEER_BINDING_DOMAIN.length)
  out.set(account, PEER_BINDING_DOMAIN.length + genesis.length)
  return out
}

/** The Ed25519 public key inside a peer id string, or undefined for any other kind of peer id. */
export function ed25519KeyOfPeerId (peerId: string): Uint8Array | undefined {
  let bytes: Uint8Array
  try { bytes = base58btc.baseDecode(peerId) } catch { return undefined }
  if (bytes.length !== ED25519_PREFIX.length + 32) return undefined
  for (let i = 0; i < ED25519_PREFIX.length; i++) if (bytes[i] !== ED25519_PREFIX[i]) return undefined
  return bytes.slice(ED25519_PREFIX.length)
}

/** The peer id string of an Ed25519 public key (what js-libp2p prints). */
export function peerIdOfEd25519 (publicKey: Uint8Array): string {
  if (publicKey.length !== 32) throw new RangeError('an Ed25519 public key has 32 bytes')
  const bytes = new Uint8Array(ED25519_PREFIX.length + 32)
  bytes.set(ED25519_PREFIX); bytes.set(publicKey, ED25519_PREFIX.length)
  return base58btc.baseEncode(bytes)
}

export type PeerBindingCheck = { ok: true } | { ok: false, reason: 'UnsupportedPeerId' | 'PeerKeyNotProven' }

/** Whether `signature` proves that the holder of `peerId`'s key binds it to `account` on the chain with `genesis`. */
export function checkPeerBinding (peerId: string, genesis: Uint8Array, account: Uint8Array, signature: Uint8Array, verify: Ed25519Verify): PeerBindingCheck {
  const key = ed25519KeyOfPeerId(peerId)
  if (key === undefined) return { ok: false, reason: 'UnsupportedPeerId' }
  let good = false
  try { good = signature.length === 64 && verify(peerBindingPayload(genesis, account), signature, key) } catch { good = false }
  return good ? { ok: true } : { ok: false, reason: 'PeerKeyNotProven' }
}
