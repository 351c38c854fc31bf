import type { TraceEntry } from '../../actors/trace.js'
import { ChainWatch, type AccountRef } from './chain-watch.js'
import { PeerWatch, type DashboardPeer } from './peer-watch.js'
import { TraceBuffer } from './trace-buffer.js'
import { taskRows } from './task-rows.js'
import { disputeRows } from './dispute-rows.js'
import type { DashboardEvent, DashboardState } from './view-types.js'

// Merges what every peer and the chain report into one view for the page:
// peers, tasks with their phase, disputes with their rounds, and a bounded
// buffer of trace entries from every peer's stream. The tables are built in
// task-rows.ts and dispute-rows.ts; here: polling, the trace stream, listeners.

export type { DashboardEvent, DashboardState, DisputeRound, DisputeRow, TaskPictures, TaskRow, TaskWorker } from './view-types.js'
export { stateText } from './task-rows.js'

export interface AggregatorOptions {
  peers: DashboardPeer[]
  chainUrl?: string
  /** chain accounts to show (default: the dev chain's well-known accounts) */
  accounts?: AccountRef[]
  pollMs?: number
  /** trace entries kept in memory (all peers together) */
  traceCap?: number
}

const STATE_TRACES = 300

export class Aggregator {
  readonly watches: PeerWatch[]
  readonly chain: ChainWatch
  private readonly traces: TraceBuffer
  private readonly listeners = new Set<(e: DashboardEvent) => void>()
  private readonly pollMs: number
  private readonly traceCap: number
  private running = false
  private readonly loops: Array<Promise<void>> = []
  private wake?: () => void

  constructor (readonly opts: AggregatorOptions) {
    this.pollMs = opts.pollMs ?? 1000
    this.traceCap = Math.max(100, opts.traceCap ?? 5000)
    this.traces = new TraceBuffer(this.traceCap)
    this.watches = opts.peers.map(p => new PeerWatch(p, e => this.addTrace(e), Math.min(this.traceCap, 2000)))
    this.chain = new ChainWatch(opts.chainUrl, opts.accounts)
    this.chain.onSample = sample => this.emit({ type: 'balance', sample })
  }

  start (): void {
    if (this.running) return
    this.running = true
    this.loops.push(this.loop(async () => {
      await Promise.all(this.watches.map(async w => await w.poll()))
      // periodic states leave the traces and the balance history out: they go out one by one as "trace" and "balance" events
      this.emit({ type: 'state', state: this.state(false) })
    }, this.pollMs))
    if (this.opts.chainUrl != null) this.loops.push(this.loop(async () => await this.chain.poll(), this.pollMs))
    for (const w of this.watches) this.loops.push(w.follow())
  }

  async stop (): Promise<void> {
    this.running = false
    for (const w of this.watches) w.stop()
    this.wake?.()
    await this.chain.stop()
    await Promise.race([Promise.all(this.loops), new Promise(resolve => setTimeout(resolve, 3000).unref())])
    this.listeners.clear()
  }

  subscribe (fn: (e: DashboardEvent) => void): () => void {
    this.listeners.add(fn)
    return () => this.listeners.delete(fn)
  }

  private emit (e: DashboardEvent): void {
    for (const l of this.listeners) { try { l(e) } catch {} }
  }

  private async loop (fn: () => Promise<void>, ms: number): Promise<void> {
    while (this.running) {
      const started = Date.now()
      await fn().catch(() => {})
      const wait = Math.max(50, ms - (Date.now() - started))
      await new Promise<void>(resolve => { const t = setTimeout(resolve, wait); t.unref(); this.wake = () => { clearTimeout(t); resolve() } })
    }
  }

  /** Adds one entry (deduplicated: streams replay history after a reconnect). */
  addTrace (e: TraceEntry): void {
    if (this.traces.add(e)) this.emit({ type: 'trace', entry: e })
  }

  recentTraces (q: { peer?: string, actor?: string, limit?: number } = {}): TraceEntry[] {
    return this.traces.recent(q, Math.min(q.limit ?? STATE_TRACES, this.traceCap))
  }

  get traceCount (): number { return this.traces.size }

  /** The whole view; `full` false leaves out what goes out as events (recent traces, the balance history). */
  state (full = true): DashboardState {
    const peers = this.watches.map(w => w.view)
    return {
      time: Date.now(),
      peers,
      tasks: taskRows(this.chain.view, peers),
      disputes: disputeRows(this.chain.view, peers, this.traces.disputeEntries),
      chain: full ? this.chain.view : { ...this.chain.view, history: undefined },
      traces: full ? this.recentTraces() : []
    }
  }
}
