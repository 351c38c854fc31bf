import { u8aConcat, u8aToHex } from '@polkadot/util'
import { hashKey, type RuntimeTypes } from './metadata.js'
import type { Plain } from './codec.js'
import { toPlain } from './codec.js'
import type { AccountInfo } from './account-info.js'
import { decodeAccountInfo, emptyAccountInfo, encodeAccountInfo } from './fast-codec.js'

// Key/value state with nested write overlays. A dispatch runs in a child
// overlay that is committed on success and dropped on failure, like
// Substrate's transactional storage layers. Keys are 0x-hex storage keys.

export interface StateReader {
  get: (key: string) => Uint8Array | undefined
}

export class Overlay implements StateReader {
  readonly changes = new Map<string, Uint8Array | null>()
  /** the storage items (`pallet.item`) written in this layer, its committed children's included */
  readonly items = new Set<string>()

  constructor (readonly base: StateReader) {}

  get (key: string): Uint8Array | undefined {
    const c = this.changes.get(key)
    if (c !== undefined) return c ?? undefined
    return this.base.get(key)
  }

  set (key: string, value: Uint8Array): void { this.changes.set(key, value) }
  delete (key: string): void { this.changes.set(key, null) }
  child (): Overlay { return new Overlay(this) }

  /** Merges this layer into its parent overlay. */
  commit (): void {
    if (!(this.base instanceof Overlay)) throw new Error('commit needs a parent overlay')
    for (const [k, v] of this.changes) this.base.changes.set(k, v)
    for (const i of this.items) this.base.items.add(i)
    this.changes.clear()
    this.items.clear()
  }
}

// Storage keys are pure functions of (item, key): memoised per runtime, since
// encoding + hashing a key through createType costs more than the transfer
// itself. Only string/number keys are cached; the map is bounded.
const KEY_CACHE = new WeakMap<RuntimeTypes, Map<string, string>>()
const KEY_CACHE_MAX = 100_000

const DECODED = new WeakMap<Uint8Array, { type: string, value: Plain }>()

// Writes per storage item (`pallet.item`), in any layer, since the process
// started: a value derived from a few items stays valid while their counts do
// not change (a write in a layer later dropped counts too: the value is then
// recomputed, never stale).
const WRITES = new Map<string, number>()
export const writesOf = (item: string): number => WRITES.get(item) ?? 0
function noteWrite (state: Overlay, pallet: string, item: string): void {
  const i = `${pallet}.${item}`
  WRITES.set(i, (WRITES.get(i) ?? 0) + 1)
  state.items.add(i)
}

function isAccountInfo (pallet: string, item: string): boolean { return pallet === 'System' && item === 'Account' }

/** Typed access to the storage items declared in the spec. */
export class Storage {
  constructor (readonly types: RuntimeTypes, readonly state: Overlay) {}

  key (pallet: string, item: string, key?: Plain): string {
    const cacheable = typeof key === 'string' || typeof key === 'number' || key === undefined
    let cache = KEY_CACHE.get(this.types)
    if (cache === undefined) { cache = new Map(); KEY_CACHE.set(this.types, cache) }
    const ck = cacheable ? `${pallet}.${item}\u0000${typeof key}\u0000${String(key)}` : ''
    if (cacheable) {
      const hit = cache.get(ck)
      if (hit !== undefined) return hit
    }
    const info = this.types.storage(pallet, item)
    let out: string
    if (info.keyType === undefined) out = u8aToHex(info.prefix)
    else {
      if (key === undefined) throw new Error(`${pallet}.${item} needs a key`)
      const enc = this.types.registry.createType(info.keyType, key).toU8a()
      out = u8aToHex(u8aConcat(info.prefix, hashKey(info.spec.hasher ?? 'Blake2_128Concat', enc)))
    }
    if (cacheable) {
      if (cache.size >= KEY_CACHE_MAX) cache.clear()
      cache.set(ck, out)
    }
    return out
  }

  /** Optional items: undefined when absent; Default items: the zero value. */
  get<T = Plain> (pallet: string, item: string, key?: Plain): T | undefined {
    const info = this.types.storage(pallet, item)
    const raw = this.state.get(this.key(pallet, item, key))
    if (raw === undefined) {
      if (isAccountInfo(pallet, item)) return emptyAccountInfo() as T
      if (info.spec.modifier === 'Optional') return undefined
      return toPlain(this.types.registry.createType(info.valueType)) as T
    }
    if (isAccountInfo(pallet, item)) {
      const fast = decodeAccountInfo(raw)
      if (fast !== undefined) return fast as T
    }
    // stored values are never mutated in place (every write stores new bytes), so
    // a decoded value can be remembered per bytes object; callers get a copy
    const memo = DECODED.get(raw)
    if (memo !== undefined && memo.type === info.valueType) return structuredClone(memo.value) as T
    const value = toPlain(this.types.registry.createType(info.valueType, raw))
    DECODED.set(raw, { type: info.valueType, value })
    return structuredClone(value) as T
  }

  /** Like get but the item must exist (Default items always do). */
  read<T = Plain> (pallet: string, item: string, key?: Plain): T {
    const v = this.get<T>(pallet, item, key)
    if (v === undefined) throw new Error(`${pallet}.${item} missing`)
    return v
  }

  put (pallet: string, item: string, key: Plain | undefined, value: unknown): void {
    noteWrite(this.state, pallet, item)
    if (isAccountInfo(pallet, item)) {
      this.state.set(this.key(pallet, item, key), encodeAccountInfo(value as AccountInfo))
      return
    }
    const info = this.types.storage(pallet, item)
    this.state.set(this.key(pallet, item, key), this.types.registry.createType(info.valueType, value).toU8a())
  }

  putRaw (pallet: string, item: string, key: Plain | undefined, value: Uint8Array): void {
    noteWrite(this.state, pallet, item)
    this.state.set(this.key(pallet, item, key), value)
  }

  remove (pallet: string, item: string, key?: Plain): void {
    noteWrite(this.state, pallet, item)
    this.state.delete(this.key(pallet, item, key))
  }
}
