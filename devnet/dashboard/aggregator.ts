import { stateString } from '../../actors/trace.js'
import type { CollectedResult } from '../../actors/ports.js'
import type { NarrowStep } from '../../protocols/dispute/narrowing.js'
import type { TraceEntry } from '../../actors/trace.js'
import { ChainWatch, type AccountRef, type ChainView } from './chain-watch.js'
import type { BalanceSample } from './balance-history.js'
import { PeerWatch, type DashboardPeer, type PeerView } from './peer-watch.js'

// Merges what every peer and the chain report into one view for the page:
// peers, tasks with their phase, disputes with their rounds, and a bounded
// buffer of trace entries from every peer's stream.

export interface AggregatorOptions {
  peers: DashboardPeer[]
  chainUrl?: string
  /** chain accounts to show (default: the dev chain's well-known accounts) */
  accounts?: AccountRef[]
  pollMs?: number
  /** trace entries kept in memory (all peers together) */
  traceCap?: number
}

export interface TaskWorker { peer: string, actorId: string, role: string, state: string, relation: string }
/** What the page draws for a task: its loss curve, the steps each verifier checked, the disputed and forced steps, the result. */
export interface TaskPictures {
  /** the solver's training loss by step (its progress reports) */
  curve?: { peer: string, phase: string, steps?: number, points: Array<[number, number]> }
  /** the trained model as the submitter evaluated it: test accuracy, or a text model's held-out loss, baseline and sample */
  result?: CollectedResult
  /** accepting or rejecting verdicts on chain, with the steps each verifier checked */
  samples: Array<{ verifier: string, accept: boolean, void: boolean, steps: number[] }>
  /** peers replaying every step (whistleblowers) */
  replayingAll: string[]
  disputed: Array<{ disputeId: string, step: number, status: string }>
  forcedStep?: number
  steps?: number
  checkpointEvery?: number
}
export interface TaskRow {
  id: string
  phase: string
  /** chain: read from the chain by the dashboard; peer:<name>: the chain's view as that peer reported it; actors: inferred */
  phaseSource: string
  chain?: ChainView['tasks'][number]
  workers: TaskWorker[]
  pictures: TaskPictures
}

export interface DisputeRound { time?: number, blockNumber?: number, source: 'trace' | 'chain' | 'gossip', peer?: string, actorId?: string, event: string, detail?: Record<string, unknown> }
export interface DisputeRow {
  id: string
  taskId?: string
  chain?: ChainView['disputes'][number]
  rounds: DisputeRound[]
  status: string
  /** ChallengerWon / DefenderWon (from the chain, or a peer's chain.disputeResolved trace) */
  verdict?: string
  /** winner account (hex) and how it was decided, from the chain's DisputeResolved event */
  winner?: string
  how?: string
  slashed?: string
  /** how the bisection narrowed (from the challenger's record), and the claim the chain ruled on */
  narrowing?: NarrowStep[]
  narrowedBy?: string
  claim?: { kind: string, reason: string }
}

export interface DashboardState {
  time: number
  peers: PeerView[]
  tasks: TaskRow[]
  disputes: DisputeRow[]
  chain: ChainView
  traces: TraceEntry[]
}

export type DashboardEvent = { type: 'state', state: DashboardState } | { type: 'trace', entry: TraceEntry } | { type: 'balance', sample: BalanceSample }

const STATE_TRACES = 300
const MAX_DISPUTE_ENTRIES = 2000

export class Aggregator {
  readonly watches: PeerWatch[]
  readonly chain: ChainWatch
  private readonly traces: TraceEntry[] = []
  private readonly traceKeys = new Set<string>()
  /** dispute-related entries, kept apart so a busy trace buffer does not evict a dispute's rounds */
  private readonly disputeEntries: TraceEntry[] = []
  private readonly listeners = new Set<(e: DashboardEvent) => void>()
  private readonly pollMs: number
  private readonly traceCap: number
  private running = false
  private readonly loops: Array<Promise<void>> = []
  private wake?: () => void

  constructor (readonly opts: AggregatorOptions) {
    this.pollMs = opts.pollMs ?? 1000
    this.traceCap = Math.max(100, opts.traceCap ?? 5000)
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
    const key = `${e.peer}/${e.time}/${e.seq}/${e.actorId}`
    if (this.traceKeys.has(key)) return // replayed after a reconnect
    this.traceKeys.add(key)
    this.traces.push(e)
    // peers' clocks and streams interleave: keep the buffer sorted by time (entries arrive nearly in order)
    for (let i = this.traces.length - 1; i > 0 && this.traces[i - 1].time > e.time; i--) {
      [this.traces[i - 1], this.traces[i]] = [this.traces[i], this.traces[i - 1]]
    }
    while (this.traces.length > this.traceCap) {
      const old = this.traces.shift()!
      this.traceKeys.delete(`${old.peer}/${old.time}/${old.seq}/${old.actorId}`)
    }
    if (isDisputeEntry(e)) {
      this.disputeEntries.push(e)
      if (this.disputeEntries.length > MAX_DISPUTE_ENTRIES) this.disputeEntries.shift()
    }
    this.emit({ type: 'trace', entry: e })
  }

  recentTraces (q: { peer?: string, actor?: string, limit?: number } = {}): TraceEntry[] {
    const limit = Math.min(q.limit ?? STATE_TRACES, this.traceCap)
    const out: TraceEntry[] = []
    for (let i = this.traces.length - 1; i >= 0 && out.length < limit; i--) {
      const e = this.traces[i]
      if ((q.peer == null || e.peer === q.peer) && (q.actor == null || e.actorId === q.actor)) out.push(e)
    }
    return out.reverse()
  }

  get traceCount (): number { return this.traces.length }

  /** The whole view; `full` false leaves out what goes out as events (recent traces, the balance history). */
  state (full = true): DashboardState {
    const peers = this.watches.map(w => w.view)
    return {
      time: Date.now(),
      peers,
      tasks: this.tasks(peers),
      disputes: this.disputes(peers),
      chain: full ? this.chain.view : { ...this.chain.view, history: undefined },
      traces: full ? this.recentTraces() : []
    }
  }

  private tasks (peers: PeerView[]): TaskRow[] {
    const rows = new Map<string, TaskRow>()
    const row = (id: string): TaskRow => {
      let r = rows.get(id)
      if (r == null) { r = { id, phase: 'unknown', phaseSource: 'actors', workers: [], pictures: { samples: [], replayingAll: [], disputed: [] } }; rows.set(id, r) }
      return r
    }
    for (const t of this.chain.view.tasks) Object.assign(row(t.id), { phase: t.phase, phaseSource: 'chain', chain: t })
    // without a chain of our own, a peer's view of the chain is the next best source
    for (const p of peers) {
      for (const t of p.tasks ?? []) {
        const r = row(String(t.taskId))
        if (r.phaseSource === 'actors' && typeof t.chain?.phase === 'string') Object.assign(r, { phase: t.chain.phase, phaseSource: `peer:${p.name}`, chain: t.chain })
      }
    }
    for (const p of peers) {
      for (const a of p.actors?.actors ?? []) {
        const ctx = a.context as {
          current?: number
          queue?: number[]
          jobs?: Array<{ taskId: number, stage: string }>
          history?: Array<{ taskId: number, outcome: string }>
          open?: number[]
          settled?: number[]
          results?: Record<string, { accuracy?: number }>
          pending?: Array<{ taskId: number }>
        }
        const state = stateText(a.state)
        const add = (id: number, relation: string): void => {
          row(String(id)).workers.push({ peer: p.name, actorId: a.id, role: roleOfId(a.id), state, relation })
        }
        const nums = (v: unknown): number[] => Array.isArray(v) ? v.filter((x): x is number => typeof x === 'number').slice(-32) : []
        // a submitter keeps its last task as `current` while idle: only a busy actor is "working" on it
        if (typeof ctx.current === 'number' && state !== 'idle') add(ctx.current, 'working')
        // solvers and verifiers work on several tasks at once: the others than `current`, with their stage
        for (const j of (Array.isArray(ctx.jobs) ? ctx.jobs : []).slice(0, 32)) if (typeof j?.taskId === 'number' && j.taskId !== ctx.current) row(String(j.taskId)).workers.push({ peer: p.name, actorId: a.id, role: roleOfId(a.id), state: String(j.stage), relation: 'working' })
        for (const q of nums(ctx.queue)) add(q, 'queued')
        // submitter: its open and settled tasks (with the trained model's accuracy once collected)
        for (const t of nums(ctx.open)) if (t !== ctx.current) add(t, 'submitted')
        const collected = Object.keys(ctx.results ?? {}).map(Number).filter(Number.isInteger)
        for (const t of new Set([...nums(ctx.settled), ...collected])) {
          const acc = ctx.results?.[String(t)]?.accuracy
          add(t, typeof acc === 'number' ? `settled (accuracy ${(acc * 100).toFixed(1)}%)` : 'settled')
        }
        // whistleblower: verdicts waiting to be re-checked
        for (const pnd of Array.isArray(ctx.pending) ? ctx.pending.slice(-32) : []) if (typeof pnd?.taskId === 'number') add(pnd.taskId, 'recheck queued')
        for (const h of Array.isArray(ctx.history) ? ctx.history.slice(-20) : []) if (typeof h?.taskId === 'number' && h.taskId >= 0) add(h.taskId, h.outcome)
      }
    }
    for (const r of rows.values()) if (r.phaseSource === 'actors') r.phase = inferPhase(r.workers)
    this.pictures(rows, peers)
    return [...rows.values()].sort((a, b) => Number(b.id) - Number(a.id))
  }

  private pictures (rows: Map<string, TaskRow>, peers: PeerView[]): void {
    const accountName = new Map(this.chain.view.accounts.map(a => [a.accountId, a.name]))
    const peerOfAccount = (acct: string): string => {
      const a = this.chain.view.accounts.find(x => x.accountId === acct)
      return peers.find(p => a?.node != null && p.status?.peerId === a.node.peerId)?.name ?? accountName.get(acct) ?? acct.slice(0, 10) + '…'
    }
    for (const r of rows.values()) {
      const pic = r.pictures
      const c = r.chain
      if (c != null) {
        pic.steps = c.stepCount > 0 ? c.stepCount : c.steps
        pic.checkpointEvery = c.checkpointEvery
        pic.samples = c.verdicts.map(v => ({ verifier: peerOfAccount(v.verifier), accept: v.accept, void: v.void, steps: v.checkedSteps.slice(0, 4096) }))
        if (c.revealedForcedError != null) pic.forcedStep = c.revealedForcedError
      }
      pic.disputed = this.chain.view.disputes.filter(d => String(d.taskId) === r.id).map(d => ({ disputeId: d.id, step: d.disputedStep, status: d.status }))
    }
    for (const p of peers) {
      for (const w of p.progress ?? []) {
        const r = rows.get(String(w.taskId))
        if (r == null) continue
        if (w.curve != null && w.curve.length > 0 && (r.pictures.curve == null || r.pictures.curve.points.length <= w.curve.length)) {
          r.pictures.curve = { peer: p.name, phase: w.phase, steps: w.steps, points: w.curve }
        }
        if (w.phase === 'verifying' && p.role === 'whistleblower' && !r.pictures.replayingAll.includes(p.name)) r.pictures.replayingAll.push(p.name)
      }
      for (const a of p.actors?.actors ?? []) {
        const results = (a.context as { results?: Record<string, CollectedResult> }).results
        for (const [id, res] of Object.entries(results ?? {})) { const r = rows.get(id); if (r != null && res != null) r.pictures.result = res }
      }
    }
  }

  private disputes (peers: PeerView[]): DisputeRow[] {
    const rows = new Map<string, DisputeRow>()
    const row = (id: string): DisputeRow => {
      let r = rows.get(id)
      if (r == null) { r = { id, rounds: [], status: 'unknown' }; rows.set(id, r) }
      return r
    }
    for (const d of this.chain.view.disputes) Object.assign(row(d.id), { chain: d, taskId: String(d.taskId), status: d.status })
    for (const ev of this.chain.view.events) {
      const id = ev.data.disputeId
      if (id == null) continue
      const r = row(String(id))
      r.rounds.push({ source: 'chain', blockNumber: ev.blockNumber, event: `${ev.section}.${ev.method}`, detail: ev.data })
      if (ev.method === 'DisputeResolved') {
        r.winner = String(ev.data.winner)
        r.how = ev.data.how != null ? String(ev.data.how) : undefined
        r.slashed = ev.data.slashed != null ? String(ev.data.slashed) : undefined
      }
    }
    // dispute announcements heard over gossip (every peer has the same ones: deduplicated)
    const heard = new Set<string>()
    for (const p of peers) {
      for (const t of p.tasks ?? []) {
        for (const m of t.gossip?.disputes ?? []) {
          const k = JSON.stringify(m)
          if (m.disputeId == null || heard.has(k)) continue
          heard.add(k)
          const r = row(String(m.disputeId))
          r.taskId ??= String(t.taskId)
          r.rounds.push({ source: 'gossip', peer: p.name, event: `gossip.dispute.${String(m.phase)}`, detail: { challenger: m.challenger, defender: m.defender, ...(m.detail != null ? { detail: m.detail } : {}) } })
        }
      }
    }
    for (const e of this.disputeEntries) {
      const d = e.detail ?? {}
      const id = d.disputeId != null ? String(d.disputeId) : (d.taskId != null ? `task ${String(d.taskId)}` : 'unattributed')
      const r = row(id)
      if (r.taskId == null && d.taskId != null) r.taskId = String(d.taskId)
      r.rounds.push({ source: 'trace', time: e.time, peer: e.peer, actorId: e.actorId, event: e.event, detail: e.detail })
      if (e.event === 'chain.disputeResolved' && (d.winner === 'challenger' || d.winner === 'defender')) {
        r.verdict ??= d.winner === 'challenger' ? 'ChallengerWon' : 'DefenderWon'
        if (r.status === 'unknown') r.status = r.verdict
      }
    }
    // the bisection's narrowing, as its challenger records it (move by move while it plays), and
    // the moves that reached the chain (forced, or answers to a force), merged by message number
    for (const p of peers) {
      for (const f of p.disputes ?? []) {
        if (f.role !== 'challenger' || f.narrowing == null || f.narrowing.length === 0) continue
        const r = row(String(f.disputeId))
        r.narrowing = f.narrowing
        r.narrowedBy = p.name
        r.taskId ??= f.taskId != null ? String(f.taskId) : undefined
      }
    }
    for (const [id, onChain] of Object.entries(this.chain.view.chainMoves)) {
      const r = rows.get(id)
      if (r == null || onChain.length === 0) continue
      const bySeq = new Map((r.narrowing ?? []).map(n => [n.seq, n]))
      const added = onChain.filter(n => !bySeq.has(n.seq))
      if (added.length === 0) continue
      for (const n of added) bySeq.set(n.seq, n)
      r.narrowing = [...bySeq.values()].sort((a, b) => a.seq - b.seq)
      r.narrowedBy = r.narrowedBy != null ? `${r.narrowedBy} and the chain` : 'the chain (moves forced on chain)'
    }
    for (const ev of this.chain.view.events) {
      if (ev.method !== 'Adjudicated' || ev.data.disputeId == null) continue
      row(String(ev.data.disputeId)).claim = { kind: utf8(ev.data.kind), reason: utf8(ev.data.reason) }
    }
    for (const r of rows.values()) {
      if (r.status === 'unknown' && r.rounds.length > 0) r.status = 'Open'
      if (r.chain != null && r.chain.status !== 'Open') r.verdict = r.chain.status
    }
    return [...rows.values()].sort((a, b) => (Number(b.id) || 0) - (Number(a.id) || 0))
  }
}

/** Vec<u8> event fields arrive as 0x-hex */
function utf8 (v: unknown): string {
  const s = String(v)
  return /^0x[0-9a-f]*$/i.test(s) ? Buffer.from(s.slice(2), 'hex').toString('utf8') : s
}

function isDisputeEntry (e: TraceEntry): boolean {
  return e.event.startsWith('dispute.') || e.event.startsWith('chain.dispute') || e.detail?.disputeId != null
}

// the same text the trace recorder writes (full leaf paths, comma-separated)
export const stateText = stateString

function roleOfId (id: string): string { return id.split('#')[0] }

// Without the chain, the phase is read from what the actors are doing with the task.
function inferPhase (workers: TaskWorker[]): string {
  const has = (pred: (w: TaskWorker) => boolean): boolean => workers.some(pred)
  if (has(w => w.relation.startsWith('settled'))) return 'Settled'
  if (has(w => w.role === 'solver' && w.relation === 'working' && /training|committing/.test(w.state))) return 'Solving'
  if (has(w => w.relation === 'working' && /defending|challenging/.test(w.state))) return 'Disputed'
  if (has(w => w.relation === 'working' && (w.role === 'verifier' || /awaitingVerdicts/.test(w.state)))) return 'Verifying'
  if (has(w => w.relation === 'queued' || w.relation === 'submitted')) return 'Queued'
  return workers.length > 0 ? workers[workers.length - 1].relation : 'unknown'
}
