import { generateKeyPair, privateKeyFromProtobuf, privateKeyToProtobuf } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import type { PeerId, PrivateKey } from '@libp2p/interface'
import type { Level } from 'level'

const KEY = 'identity/ed25519'

export interface Identity {
  privateKey: PrivateKey
  peerId: PeerId
  created: boolean
}

/** Loads the peer's Ed25519 key from its database, creating it on first start. */
export async function loadOrCreateIdentity (meta: Level<string, Uint8Array>): Promise<Identity> {
  const stored = await meta.get(KEY)
  if (stored != null) {
    const privateKey = privateKeyFromProtobuf(stored)
    return { privateKey, peerId: peerIdFromPrivateKey(privateKey), created: false }
  }
  const privateKey = await generateKeyPair('Ed25519')
  await meta.put(KEY, privateKeyToProtobuf(privateKey))
  return { privateKey, peerId: peerIdFromPrivateKey(privateKey), created: true }
}
