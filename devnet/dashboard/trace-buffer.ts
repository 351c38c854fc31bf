import type { TraceEntry } from '../../actors/trace.js'

// The dashboard's trace entries from every peer's stream: deduplicated (streams
// replay history after a reconnect), sorted by time, bounded; dispute entries
// also kept apart so a busy buffer does not evict a dispute's rounds.

const MAX_DISPUTE_ENTRIES = 2000

export class TraceBuffer {
  private readonly traces: TraceEntry[] = []
  private readonly keys = new Set<string>()
  /** dispute-related entries, kept apart so a busy trace buffer does not evict a dispute's rounds */
  readonly disputeEntries: TraceEntry[] = []

  constructor (readonly cap: number) {}

  /** Adds one entry; false if it was a replay. */
  add (e: TraceEntry): boolean {
    const key = `${e.peer}/${e.time}/${e.seq}/${e.actorId}`
    if (this.keys.has(key)) return false // replayed after a reconnect
    this.keys.add(key)
    this.traces.push(e)
    // peers' clocks and streams interleave: keep the buffer sorted by time (entries arrive nearly in order)
    for (let i = this.traces.length - 1; i > 0 && this.traces[i - 1].time > e.time; i--) {
      [this.traces[i - 1], this.traces[i]] = [this.traces[i], this.traces[i - 1]]
    }
    while (this.traces.length > this.cap) {
      const old = this.traces.shift()!
      this.keys.delete(`${old.peer}/${old.time}/${old.seq}/${old.actorId}`)
    }
    if (isDisputeEntry(e)) {
      this.disputeEntries.push(e)
      if (this.disputeEntries.length > MAX_DISPUTE_ENTRIES) this.disputeEntries.shift()
    }
    return true
  }

  /** The newest `limit` entries (of a peer, an actor), oldest first. */
  recent (q: { peer?: string, actor?: string }, limit: number): TraceEntry[] {
    const out: TraceEntry[] = []
    for (let i = this.traces.length - 1; i >= 0 && out.length < limit; i--) {
      const e = this.traces[i]
      if ((q.peer == null || e.peer === q.peer) && (q.actor == null || e.actorId === q.actor)) out.push(e)
    }
    return out.reverse()
  }

  get size (): number { return this.traces.length }
}

function isDisputeEntry (e: TraceEntry): boolean {
  return e.event.startsWith('dispute.') || e.event.startsWith('chain.dispute') || e.detail?.disputeId != null
}
