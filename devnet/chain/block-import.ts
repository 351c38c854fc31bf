import { u8aToHex } from '@polkadot/util'
import type { StateChanges } from './block-authoring.js'
import { pad, type StoreOp, type StoredBlock } from './store.js'

// How a block lands in the chain's state and store (the key layout is in
// store.ts): memory first, so readers see it synchronously, and the LevelDB
// writes of the same change as one batch.

export interface StateImport {
  ops: StoreOp[]
  changedKeys: string[]
  /** a key was added or removed (the sorted key list must be rebuilt) */
  keySetChanged: boolean
}

/** Applies block `number`'s changes to `state`; returns the current-value and history writes. */
export function importState (state: Map<string, Uint8Array>, changes: StateChanges, number: number): StateImport {
  const ops: StoreOp[] = []
  const changedKeys: string[] = []
  let keySetChanged = false
  for (const [k, v] of changes) {
    changedKeys.push(k)
    if (v === null) {
      if (state.delete(k)) keySetChanged = true
      ops.push({ type: 'del', key: `c!${k}` }, { type: 'put', key: `h!${k}!${pad(number)}`, value: '' })
    } else {
      if (!state.has(k)) keySetChanged = true
      state.set(k, v)
      const hex = u8aToHex(v)
      ops.push({ type: 'put', key: `c!${k}`, value: hex }, { type: 'put', key: `h!${k}!${pad(number)}`, value: hex })
    }
  }
  return { ops, changedKeys, keySetChanged }
}

/** The block, its number index, the new head and finalized marks, and the pool entries it consumed or dropped. */
export function blockOps (block: StoredBlock, number: number, finalized: number, leftPool: string[]): StoreOp[] {
  const ops: StoreOp[] = [{ type: 'put', key: `b!${block.hash}`, value: JSON.stringify(block) }, { type: 'put', key: `n!${pad(number)}`, value: block.hash },
    { type: 'put', key: 'm!head', value: String(number) }, { type: 'put', key: 'm!finalized', value: String(finalized) }]
  for (const t of leftPool) ops.push({ type: 'del', key: `p!${t}` })
  return ops
}

/** Genesis: its state (current and as of block 0), the block, the metadata and the randomness author's seed. */
export function genesisOps (state: Map<string, Uint8Array>, changes: StateChanges, block: StoredBlock, randomnessSeed: Uint8Array): StoreOp[] {
  const ops: StoreOp[] = []
  for (const [k, v] of changes) {
    if (v === null) continue
    state.set(k, v)
    const hex = u8aToHex(v)
    ops.push({ type: 'put', key: `c!${k}`, value: hex }, { type: 'put', key: `h!${k}!${pad(0)}`, value: hex })
  }
  ops.push({ type: 'put', key: `b!${block.hash}`, value: JSON.stringify(block) }, { type: 'put', key: `n!${pad(0)}`, value: block.hash },
    { type: 'put', key: 'm!head', value: '0' }, { type: 'put', key: 'm!finalized', value: '0' }, { type: 'put', key: 'm!genesis', value: block.hash },
    { type: 'put', key: 'm!randomness-key', value: u8aToHex(randomnessSeed) })
  return ops
}
