import { compactToU8a, hexToU8a, u8aConcat, u8aToHex } from '@polkadot/util'
import { blake2AsU8a } from '@polkadot/util-crypto'
import { RANDOMNESS_ENGINE_ID } from '../../protocols/randomness.js'
import type { ApplyOutcome, Runtime, ValidTx } from './runtime/executive.js'
import type { BlockEnv, EventOut } from './runtime/context.js'
import type { RuntimeTypes } from './runtime/metadata.js'
import type { StateReader } from './runtime/state.js'
import type { StoredHeader } from './store.js'

// What a block is made of, computed without touching the chain: the runtime
// run over the pool's ready transactions, the header that commits to the
// result, and its hash. The host imports and announces it.

export const ZERO_HASH = '0x' + '00'.repeat(32)

export type StateChanges = Map<string, Uint8Array | null>

export interface ExecutedBlock {
  included: ValidTx[]
  events: EventOut[]
  changes: StateChanges
}

/**
 * Runs one block over `ready` (in inclusion order), taking at most `max`
 * transactions; those that can never be included (stale, invalid) are added to
 * `dropped`, those waiting for an earlier nonce stay in the pool.
 */
export function executeBlock (
  runtime: Runtime, base: StateReader, env: BlockEnv, ready: Iterable<{ tx: ValidTx }>, max: number, dropped: string[]
): ExecutedBlock {
  const builder = runtime.initializeBlock(base, env)
  const included: ValidTx[] = []
  for (const e of ready) {
    if (included.length >= max) break
    let r: ApplyOutcome
    // a throw before the dispatch's own layer (a bug in the nonce bookkeeping, say) drops the
    // transaction: kept in the pool, it would fail every block after this one too
    try { r = builder.apply(e.tx) } catch { dropped.push(e.tx.hash); continue }
    if (r.included) included.push(e.tx)
    else if (r.reason !== 'future') dropped.push(e.tx.hash)
  }
  const events = builder.finalize()
  return { included, events, changes: builder.state.changes }
}

/** State root: a hash chain over the state diffs (not a trie root; see docs/pallet-interface.md). */
export function nextStateRoot (previous: string, changes: StateChanges): string {
  const diff = [...changes.keys()].sort().map(k => u8aConcat(hexToU8a(k), changes.get(k) ?? Uint8Array.of(0xff)))
  return u8aToHex(blake2AsU8a(u8aConcat(hexToU8a(previous), blake2AsU8a(u8aConcat(...diff)))))
}

/** The header of block `number` holding `included`, with its author's randomness VRF. */
export function blockHeader (
  types: RuntimeTypes, parentHash: string, number: number, stateRoot: string, included: ValidTx[], randomness: string
): StoredHeader {
  return {
    parentHash,
    number: '0x' + number.toString(16),
    stateRoot,
    extrinsicsRoot: u8aToHex(blake2AsU8a(u8aConcat(compactToU8a(included.length), ...included.map(t => t.bytes)))),
    // the randomness VRF rides in the header like BABE's pre-digest, so the block hash commits to it
    digest: { logs: [types.registry.createType('DigestItem', { PreRuntime: [RANDOMNESS_ENGINE_ID, randomness] }).toHex()] }
  }
}

/** The genesis header: its state root hashes the whole genesis state. */
export function genesisHeader (changes: StateChanges): StoredHeader {
  const stateRoot = u8aToHex(blake2AsU8a(u8aConcat(...[...changes.keys()].sort().map(k => u8aConcat(hexToU8a(k), changes.get(k) ?? new Uint8Array())))))
  return { parentHash: ZERO_HASH, number: '0x0', stateRoot, extrinsicsRoot: u8aToHex(blake2AsU8a(Uint8Array.of(0))), digest: { logs: [] } }
}

export function headerHash (types: RuntimeTypes, h: StoredHeader): string {
  return types.registry.createType('Header', h).hash.toHex()
}
