import { AsyncLocalStorage } from 'node:async_hooks'
import { Counter, Gauge, type Registry } from 'prom-client'
import type { Logger } from '../log.js'
import type { ChainClient, ChainEvent } from '../chain/client.js'
import type { ShardService } from '../shards/index.js'
import { ROLE_NAMES } from '../../protocols/roles.js'

// What an operator looks at when something is wrong: the chain link (endpoint,
// account, connection state, head), the recent failures (fetches, chain,
// verification) and the node's task, role, verification and dispute metrics.
// Kept apart from node/metrics.ts (libp2p and gossip series).

export type FailureKind = 'fetch' | 'chain' | 'verification'
export interface Failure { at: string, kind: FailureKind, taskId?: number, message: string }

const MAX_FAILURES = 50

export type ChainState = 'none' | 'connecting' | 'connected' | 'disconnected' | 'failed'
export interface ChainStatus { url: string | null, account: string | null, state: ChainState, since: string, head?: number, lastError?: string }

/** The task phase each pallet event puts a task in (the chain's own phases). */
const PHASE_OF: Record<string, string> = {
  TaskSubmitted: 'Unassigned',
  TaskExpired: 'Expired',
  SolverSelected: 'Solving',
  SolverTimedOut: 'Unassigned',
  TaskReleased: 'Unassigned',
  ProofCommitted: 'Verifying'
}
export const TASK_PHASES = ['Unassigned', 'Solving', 'Verifying', 'Settled', 'Failed', 'Unverified', 'Expired', 'Faulted'] as const

export class Observability {
  private readonly failures: Failure[] = []
  private readonly phases = new Map<number, string>()
  private chainClient?: ChainClient
  /** the task the current async call chain works for: a failed fetch is charged to it */
  private readonly taskScope = new AsyncLocalStorage<number>()
  readonly chain: ChainStatus
  readonly fetchFailures: Counter<'what'>
  readonly verifications: Counter<'result'>
  readonly disputes: Counter<'event'>
  readonly chainFailures: Counter

  constructor (registry: Registry, chain: { url?: string, account?: string }, roles: () => string[], private readonly log: Logger) {
    this.chain = { url: chain.url ?? null, account: null, state: chain.url != null && chain.account != null ? 'connecting' : 'none', since: new Date().toISOString() }
    this.fetchFailures = new Counter({ name: 'proofswarm_fetch_failures_total', help: 'Shard fetches (program, dataset, proof, checkpoints) that failed', labelNames: ['what'], registers: [registry] })
    this.verifications = new Counter({ name: 'proofswarm_verifications_total', help: 'Verifications and whistleblower re-checks this peer finished, by result (accept, reject, error)', labelNames: ['result'], registers: [registry] })
    this.disputes = new Counter({ name: 'proofswarm_disputes_total', help: 'Disputes this peer took part in: opened (by or against it), won, lost', labelNames: ['event'], registers: [registry] })
    this.chainFailures = new Counter({ name: 'proofswarm_chain_failures_total', help: 'Chain connection failures and disconnections', registers: [registry] })
    const phases = this.phases
    new Gauge({
      name: 'proofswarm_tasks',
      help: 'Tasks this peer has seen on chain since it started, by phase',
      labelNames: ['phase'],
      registers: [registry],
      collect () {
        const counts = new Map<string, number>(TASK_PHASES.map(p => [p, 0]))
        for (const p of phases.values()) counts.set(p, (counts.get(p) ?? 0) + 1)
        for (const [p, n] of counts) this.set({ phase: p }, n)
      }
    })
    new Gauge({
      name: 'proofswarm_role',
      help: 'Roles this peer has (1) or not (0)',
      labelNames: ['role'],
      registers: [registry],
      collect () {
        const mine = roles()
        for (const r of ROLE_NAMES) this.set({ role: r }, mine.includes(r) ? 1 : 0)
      }
    })
    // prom-client calls collect with `this` bound to the gauge: the peer's state comes through closures
    const head = async (): Promise<number | undefined> => await this.head()
    const connected = (): boolean => this.chain.state === 'connected'
    new Gauge({
      name: 'proofswarm_chain_height',
      help: 'Best block number of the chain this peer uses (the last one seen while disconnected: see proofswarm_chain_connected)',
      registers: [registry],
      async collect () {
        const h = await head()
        if (h != null) this.set(h)
      }
    })
    new Gauge({
      name: 'proofswarm_chain_connected',
      help: '1 while the chain connection is up',
      registers: [registry],
      collect () { this.set(connected() ? 1 : 0) }
    })
  }

  fail (kind: FailureKind, message: string, taskId?: number): void {
    this.log.warn({ kind, ...(taskId != null ? { taskId } : {}) }, `${kind} failed: ${message}`)
    this.failures.push({ at: new Date().toISOString(), kind, message, ...(taskId != null ? { taskId } : {}) })
    if (this.failures.length > MAX_FAILURES) this.failures.splice(0, this.failures.length - MAX_FAILURES)
    if (kind === 'chain') this.chainFailures.inc()
  }

  /** Newest first. */
  recentFailures (limit = 10): Failure[] {
    return this.failures.slice(-limit).reverse()
  }

  failedFetches (taskId: number): number {
    return this.failures.filter(f => f.kind === 'fetch' && f.taskId === taskId).length
  }

  private setState (state: ChainState, error?: string): void {
    this.chain.state = state
    this.chain.since = new Date().toISOString()
    if (error != null) this.chain.lastError = error
  }

  chainConnecting (): void { this.setState('connecting') }

  chainFailed (err: Error): void {
    this.setState('failed', err.message)
    this.fail('chain', err.message)
  }

  /** Follows the client's WebSocket: a dropped connection shows in `status` and the metrics. */
  chainConnected (c: ChainClient): void {
    this.chainClient = c
    this.chain.account = c.address
    this.setState('connected')
    c.api.on('disconnected', () => {
      if (this.chain.state === 'disconnected') return
      this.setState('disconnected', `lost the connection to ${this.chain.url ?? 'the chain'}`)
      this.fail('chain', `lost the connection to ${this.chain.url ?? 'the chain'}`)
    })
    c.api.on('connected', () => { if (this.chain.state === 'disconnected') this.setState('connected') })
  }

  /** The chain's best block, or undefined when not connected (bounded: a hung chain does not hang `status`). */
  async head (): Promise<number | undefined> {
    const c = this.chainClient
    if (c == null || this.chain.state !== 'connected') return undefined
    const h = await Promise.race([
      c.bestNumber().catch(() => undefined), new Promise<undefined>(resolve => { setTimeout(() => resolve(undefined), 2000).unref() })
    ])
    if (h != null) this.chain.head = h
    return h
  }

  /** Pallet events: task phases, and disputes this peer is a party to. */
  onChainEvent (e: ChainEvent, me: string): void {
    if (e.section !== 'arbitration') return
    const d = e.data as Record<string, unknown>
    const taskId = d.taskId != null ? Number(d.taskId) : undefined
    if (taskId != null) {
      if (e.method === 'TaskSettled') this.phases.set(taskId, d.success === true ? 'Settled' : 'Failed')
      else if (e.method === 'TaskUnverified') {
        this.phases.set(taskId, 'Unverified')
        this.log.warn({ taskId, standing: Number(d.standing) }, 'task ended UNVERIFIED: too few verdicts stood after every extension; nobody was paid for the proof')
      } else if (e.method === 'TaskFaulted') {
        this.phases.set(taskId, 'Faulted')
        this.log.error({ taskId, refunded: String(d.refunded) }, 'task FAULTED: the chain\'s block hook failed on it and quarantined it; escrow refunded, nobody paid or slashed')
      } else if (PHASE_OF[e.method] != null) this.phases.set(taskId, PHASE_OF[e.method])
    }
    if (e.method === 'DisputeOpened' && (d.challenger === me || d.defender === me)) this.disputes.inc({ event: 'opened' })
    if (e.method === 'DisputeResolved' && (d.winner === me || d.loser === me)) this.disputes.inc({ event: d.winner === me ? 'won' : 'lost' })
  }

  /** The shard service, with every failed fetch recorded (charged to the task of the call, see `forTask`). */
  recordingShards (shards: ShardService): ShardService {
    const fail = (what: string, err: unknown): never => {
      this.fetchFailures.inc({ what })
      this.fail('fetch', `${what}: ${(err as Error).message}`, this.taskScope.getStore())
      throw err
    }
    return new Proxy(shards, {
      get: (target, prop, receiver) => {
        const v = Reflect.get(target, prop, receiver) as unknown
        if (prop === 'fetchBytes' || prop === 'fetchToFile') {
          return async (...args: unknown[]) => await (v as (...a: unknown[]) => Promise<unknown>).apply(target, args).catch(err => fail(prop === 'fetchBytes' ? 'bytes' : 'file', err))
        }
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v
      }
    })
  }

  /**
   * Wraps the task methods of the role ports (first argument: a task id) so
   * that what fails inside them is charged to that task, and counts the
   * results of verifications and re-checks.
   */
  instrumentPorts<T extends object> (ports: T): T {
    const o = ports as Record<string, unknown>
    for (const name of ['train', 'commitProof', 'verify', 'recheckVerdict', 'submitVerdict', 'collectResult', 'challengeAvailability', 'challengeDataset']) {
      const orig = o[name]
      if (typeof orig !== 'function') continue
      // recheckVerdict replays through verify: counted there, once
      const counted = name === 'verify'
      o[name] = async (taskId: number, ...rest: unknown[]) => await this.taskScope.run(taskId, async () => {
        try {
          const r = await (orig as (...a: unknown[]) => Promise<unknown>).call(ports, taskId, ...rest)
          if (counted) this.verifications.inc({ result: (r as { accept?: boolean }).accept === true ? 'accept' : 'reject' })
          return r
        } catch (err) {
          if (counted) {
            this.verifications.inc({ result: 'error' })
            this.fail('verification', (err as Error).message, taskId)
          }
          throw err
        }
      })
    }
    return ports
  }
}
