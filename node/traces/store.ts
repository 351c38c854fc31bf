import type { Level } from 'level'
import type { TraceEntry } from '../../actors/trace.js'

// Actor traces in the peer's LevelDB, keyed by time then sequence so range
// scans by time are cheap; live subscribers get every new entry. Retention
// (maxEntries) counts what is on disk: the count starts from the stored
// entries, so the store does not grow by maxEntries at every restart.

export interface TraceQuery {
  actor?: string
  role?: string
  since?: number
  limit?: number
}

/** entries kept; past it the oldest 10 % are pruned */
export const MAX_TRACE_ENTRIES = 200_000
const enc = new TextEncoder()
const dec = new TextDecoder()

function key (e: TraceEntry): string {
  return `${String(e.time).padStart(15, '0')}-${String(e.seq).padStart(10, '0')}`
}

export function matches (e: TraceEntry, q: TraceQuery): boolean {
  return (q.actor == null || e.actorId === q.actor) && (q.role == null || e.role === q.role) && (q.since == null || e.time >= q.since)
}

export class TraceStore {
  private readonly listeners = new Set<(e: TraceEntry) => void>()
  private pending: TraceEntry[] = []
  private flushing?: Promise<void>
  private count = 0
  private closed = false
  /** the stored entries counted (keys only, once per start) */
  private readonly counted: Promise<void>

  constructor (private readonly db: Level<string, Uint8Array>, private readonly maxEntries = MAX_TRACE_ENTRIES) {
    this.counted = (async () => {
      let n = 0
      for await (const _k of this.db.keys()) n++
      this.count += n
    })().catch(() => {})
  }

  append (e: TraceEntry): void {
    if (this.closed) return
    this.pending.push(e)
    for (const l of this.listeners) { try { l(e) } catch {} }
    this.flushing ??= Promise.resolve().then(async () => await this.flush())
  }

  async flush (): Promise<void> {
    while (this.pending.length > 0) {
      const batch = this.pending
      this.pending = []
      await this.db.batch(batch.map(e => ({ type: 'put' as const, key: key(e), value: enc.encode(JSON.stringify(e)) })))
      this.count += batch.length
    }
    this.flushing = undefined
    await this.counted
    if (this.count > this.maxEntries) await this.prune()
  }

  private async prune (): Promise<void> {
    const drop = this.count - Math.floor(this.maxEntries * 0.9)
    let n = 0
    const keys: string[] = []
    for await (const k of this.db.keys({ limit: drop })) { keys.push(k); n++ }
    await this.db.batch(keys.map(k => ({ type: 'del' as const, key: k })))
    this.count -= n
  }

  /**
   * Entries in time order: from `since` on (the oldest first), or without
   * `since` the newest `limit` ones (what an operator asking for a trace wants).
   */
  async query (q: TraceQuery = {}): Promise<TraceEntry[]> {
    await this.flushing
    const out: TraceEntry[] = []
    const limit = Math.min(q.limit ?? 10_000, 100_000)
    const newest = q.since == null
    const range = newest ? { reverse: true } : { gte: String(q.since).padStart(15, '0') }
    for await (const v of this.db.values(range)) {
      const e = JSON.parse(dec.decode(v)) as TraceEntry
      if (matches(e, q)) out.push(e)
      if (out.length >= limit) break
    }
    return newest ? out.reverse() : out
  }

  /** entries stored (for retention) */
  async size (): Promise<number> {
    await this.counted
    await this.flushing
    return this.count
  }

  subscribe (fn: (e: TraceEntry) => void): () => void {
    this.listeners.add(fn)
    return () => this.listeners.delete(fn)
  }

  async close (): Promise<void> {
    await this.flushing
    await this.flush()
    this.closed = true
    this.listeners.clear()
  }
}
