import { u8aToHex } from '@polkadot/util'
import type { DevChain } from './chain.js'
import { RpcError } from './rpc-errors.js'
import type { StoredBlock } from './store.js'

// Blocks and storage as the RPC serves them, at any block the chain has.

/** The block `hash` (the head if undefined); an UnknownBlock error if the chain has none. */
export function blockAt (chain: DevChain, hash: string | undefined): StoredBlock {
  const h = hash ?? chain.head.hash
  const b = chain.blocks.get(h)
  if (b === undefined) throw new RpcError(4003, `Client error: UnknownBlock: header not found for ${h}`)
  return b
}

/** A storage value at a block: the head from memory, older blocks from the store's history. */
export async function storageAt (chain: DevChain, key: string, at: string | undefined): Promise<string | null> {
  const b = blockAt(chain, at)
  if (b.hash === chain.head.hash) {
    const v = chain.state.get(key)
    return v === undefined ? null : u8aToHex(v)
  }
  return await chain.store.valueAt(key, parseInt(b.header.number, 16)) ?? null
}

export async function keysAt (chain: DevChain, prefix: string, at: string | undefined): Promise<string[]> {
  const b = blockAt(chain, at)
  if (b.hash === chain.head.hash) return chain.keys().filter(k => k.startsWith(prefix))
  return await chain.store.keysAt(prefix, parseInt(b.header.number, 16))
}
