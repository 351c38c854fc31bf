import { availableParallelism, totalmem } from 'node:os'
import { Counter, Gauge, type Registry } from 'prom-client'
import type { RolePorts, PublishedRun, VerifyResult } from '../../actors/ports.js'
import type { validateProgram } from '../../protocols/program/program.js'
import { JobScheduler, type Job, type JobKind, type JobLimits, type Pumped } from '../../protocols/scheduling/jobs.js'
import { ENGINE_BASE_BYTES, SpeedEstimate, jobMemory, programSize } from '../../protocols/scheduling/estimate.js'
import type { ChainClient } from '../chain/client.js'
import type { Logger } from '../log.js'
import { BadCommitments } from './task-commitments.js'

// The peer's job scheduler at work: training and replay jobs ask it for a
// slot (CPU: --max-jobs, memory: --max-job-memory) before they start, wait in
// FIFO order when there is none, and are handed back when they could not
// finish before their deadline on chain: a solver releases the task (the fee
// is no more than the timeout slash it would otherwise pay, and the task goes
// to another solver at once instead of after the solve timeout), a verifier
// drops the check and says so in its log.

export interface SchedulerOptions {
  /** training/replay jobs at once; default: os.availableParallelism() */
  maxJobs?: number
  /** bytes all running jobs may use; default: half the machine's memory */
  maxJobMemory?: number
}

export type ValidProgram = ReturnType<typeof validateProgram>

export class JobRefused extends Error {
  constructor (message: string) { super(message); this.name = 'JobRefused' }
}

export interface SchedulerDeps {
  chain: () => Promise<ChainClient>
  /** the task's program (from its announcement), for the memory and time estimates */
  program: (taskId: number) => Promise<ValidProgram>
  log: Logger
  registry: Registry
}

/** Blocks left until `deadlineBlock` are worth this many ms; blocks the commitment itself needs are kept aside. */
const SAFETY_BLOCKS = 2
const PUMP_MS = 2000
const PROGRAM_WAIT_MS = 10_000
/** a training that fails is tried this many times before the task is handed back */
const TRAIN_ATTEMPTS = 3
const RETRY_MS = 5000

export function defaultLimits (o: SchedulerOptions = {}): JobLimits {
  return { maxJobs: o.maxJobs ?? availableParallelism(), maxMemory: o.maxJobMemory ?? Math.floor(totalmem() / 2) }
}

/** Block time as this peer sees it (the chain does not publish one): from the heads it read. */
class BlockClock {
  private first?: { block: number, at: number }
  private last?: { block: number, at: number }
  constructor (private readonly fallbackMs = 1000) {}
  see (block: number, at: number): void {
    this.first ??= { block, at }
    if (this.last === undefined || block > this.last.block) this.last = { block, at }
  }

  get msPerBlock (): number {
    if (this.first === undefined || this.last === undefined || this.last.block - this.first.block < 3) return this.fallbackMs
    return (this.last.at - this.first.at) / (this.last.block - this.first.block)
  }
}

interface Waiter { resolve: () => void, reject: (e: Error) => void, onDrop?: () => Promise<void> }

export class PeerScheduler {
  readonly scheduler: JobScheduler
  readonly speed = new SpeedEstimate()
  private readonly clock = new BlockClock()
  private readonly waiters = new Map<string, Waiter>()
  /** jobs handed back or dropped (bounded), for status */
  readonly refused: Array<{ at: string, taskId: number, kind: JobKind, reason: string }> = []
  private readonly outcomes: Counter<'kind' | 'outcome'>
  private timer?: NodeJS.Timeout
  private seq = 0

  constructor (limits: JobLimits, private readonly deps: SchedulerDeps) {
    this.scheduler = new JobScheduler(limits)
    this.outcomes = new Counter({ name: 'proofswarm_jobs_total', help: 'Training and verification jobs by outcome: run (at once), queued, refused (could not finish in time, or too big), dropped (from the queue, deadline out of reach)', labelNames: ['kind', 'outcome'], registers: [deps.registry] })
    const sched = this.scheduler
    new Gauge({
      name: 'proofswarm_jobs',
      help: 'Training and verification jobs running or queued on this peer',
      labelNames: ['kind', 'state'],
      registers: [deps.registry],
      collect () {
        const s = sched.snapshot()
        for (const kind of ['train', 'verify'] as const) {
          this.set({ kind, state: 'running' }, s.running.filter(j => j.kind === kind).length)
          this.set({ kind, state: 'queued' }, s.queued.filter(j => j.kind === kind).length)
        }
      }
    })
    new Gauge({ name: 'proofswarm_job_memory_bytes', help: 'Estimated memory of the running jobs', registers: [deps.registry], collect () { this.set(sched.memoryInUse) } })
    new Gauge({ name: 'proofswarm_job_limits', help: 'The scheduler\'s limits: max_jobs, max_memory_bytes', labelNames: ['limit'], registers: [deps.registry], collect () { this.set({ limit: 'max_jobs' }, sched.limits.maxJobs); this.set({ limit: 'max_memory_bytes' }, sched.limits.maxMemory) } })
  }

  stop (): void {
    if (this.timer !== undefined) clearInterval(this.timer)
    this.timer = undefined
  }

  /** What status and the tasks list show. */
  view (): { limits: JobLimits, memoryInUse: number, running: Job[], queued: Job[], refused: PeerScheduler['refused'], msPerStep: number, msPerBlock: number } {
    const s = this.scheduler.snapshot()
    return { ...s, refused: this.refused.slice(-20), msPerStep: this.speed.train(1000) / 1000, msPerBlock: Math.round(this.clock.msPerBlock) }
  }

  /** Wraps the ports' training and replays so each asks for a slot first. */
  wrap<T extends RolePorts> (ports: T): T {
    const train = ports.train.bind(ports)
    const verify = ports.verify.bind(ports)
    ports.train = async (taskId: number, signal?: AbortSignal): Promise<PublishedRun> => {
      const chain = await this.deps.chain()
      // handing it back at once: another solver gets it now rather than after the solve timeout
      const handBack = async (why: string): Promise<void> => {
        const out = await chain.releaseTask(taskId).then(() => 'released on chain', (err: Error) => `release failed: ${err.message}`)
        this.deps.log.warn({ taskId }, `task ${taskId} handed back (${why}; ${out})`)
      }
      for (let attempt = 1; ; attempt++) {
        const task = await chain.task(taskId)
        if (task == null) throw new Error(`task ${taskId} does not exist on chain`)
        // a selection heard late (a catch-up, a slow event): the task may have moved on since
        if (task.phase !== 'Solving' || task.solver !== chain.accountId) throw new Error(`task ${taskId} is no longer this peer's to solve (phase ${task.phase})`)
        const program = await this.programOrUndefined(taskId)
        try {
          return await this.run({ kind: 'train', taskId, program, deadlineBlock: task.deadline, estimateMs: this.speed.train(task.steps), signal, observe: ms => { this.speed.observeTrain(task.steps, ms) } },
            async () => await train(taskId, signal), async () => { await handBack('it could not finish in time') })
        } catch (err) {
          if (err instanceof JobRefused || signal?.aborted === true) throw err
          // a trap, not a passing failure: it goes back at once (the fee, not the slash its disputes would cost)
          if (err instanceof BadCommitments) {
            await handBack(err.message)
            throw err
          }
          // most failures under load pass (an announcement heard late, a fetch that timed out): try again while
          // the deadline allows (the next admission checks it); a task this peer cannot train goes back, not to the timeout
          if (attempt >= TRAIN_ATTEMPTS) {
            await handBack(`training failed ${attempt} times: ${(err as Error).message}`)
            throw err
          }
          this.deps.log.warn({ taskId, attempt, err: (err as Error).message }, `training of task ${taskId} failed: trying again`)
          await new Promise(resolve => setTimeout(resolve, RETRY_MS))
        }
      }
    }
    // a whistleblower's re-check replays through verify (node-ports.ts): scheduled there, once
    // the sample size passes through: a whistleblower's re-check replays every step, not a verifier's sample
    ports.verify = async (taskId: number, sampleCount?: number): Promise<VerifyResult> => {
      const chain = await this.deps.chain()
      const task = await chain.task(taskId)
      if (task == null) throw new Error(`task ${taskId} does not exist on chain`)
      const mine = await chain.myAssignment(taskId)
      const program = await this.programOrUndefined(taskId)
      return await this.run({ kind: 'verify', taskId, program, deadlineBlock: mine?.deadline ?? task.challengeEnd, estimateMs: this.speed.verify(), observe: ms => { this.speed.observeVerify(ms) } }, async () => await verify(taskId, sampleCount))
    }
    return ports
  }

  private async programOrUndefined (taskId: number): Promise<ValidProgram | undefined> {
    // the estimate must not hold the job up: the job fetches the program itself anyway
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<never>((_resolve, reject) => { timer = setTimeout(() => reject(new Error(`not fetched within ${PROGRAM_WAIT_MS} ms`)), PROGRAM_WAIT_MS) })
    try { return await Promise.race([this.deps.program(taskId), late]) } catch (err) {
      this.deps.log.debug({ taskId, err: (err as Error).message }, 'no program for the job estimate: a default size is assumed')
      return undefined
    } finally { clearTimeout(timer) }
  }

  private async run<R> (
    o: {
      kind: JobKind
      taskId: number
      program: ValidProgram | undefined
      deadlineBlock: number
      estimateMs: number
      signal?: AbortSignal
      observe: (ms: number) => void
    },
    work: () => Promise<R>, onRefused?: () => Promise<void>
  ): Promise<R> {
    const chain = await this.deps.chain()
    const best = await chain.bestNumber()
    const now = Date.now()
    this.clock.see(best, now)
    // a verifier's check and a whistleblower's re-check of one task are two jobs
    const id = `${o.kind}-${o.taskId}-${++this.seq}`
    const deadline = now + (o.deadlineBlock - best - SAFETY_BLOCKS) * this.clock.msPerBlock
    const memory = o.program !== undefined ? jobMemory(programSize(o.program)) : Math.ceil(ENGINE_BASE_BYTES * 1.5)
    const a = this.scheduler.admit({ id, taskId: o.taskId, kind: o.kind, memory, estimateMs: o.estimateMs, deadline }, now)
    this.outcomes.inc({ kind: o.kind, outcome: a.decision })
    if (a.decision === 'refuse') {
      this.noteRefused(o.taskId, o.kind, a.reason)
      this.deps.log.warn({ taskId: o.taskId, kind: o.kind, reason: a.reason }, o.kind === 'train' ? `not taking task ${o.taskId}: ${a.reason}` : `dropping the check of task ${o.taskId}: ${a.reason}`)
      await onRefused?.()
      throw new JobRefused(`${o.kind} job for task ${o.taskId} refused: ${a.reason}`)
    }
    if (a.decision === 'queue') {
      this.deps.log.info({ taskId: o.taskId, kind: o.kind, position: a.position, expectedStartSec: Math.round((a.expectedStart - now) / 1000) }, `${o.kind} job for task ${o.taskId} queued`)
      this.ensureTimer()
      await new Promise<void>((resolve, reject) => {
        this.waiters.set(id, { resolve, reject, onDrop: onRefused })
        o.signal?.addEventListener('abort', () => {
          if (!this.waiters.delete(id)) return
          this.apply(this.scheduler.finish(id, Date.now()))
          reject(new Error(`${o.kind} job for task ${o.taskId} cancelled while queued`))
        }, { once: true })
      })
    }
    try {
      const t0 = Date.now()
      const r = await work()
      // run time only (not the wait): what the next estimates need
      o.observe(Date.now() - t0)
      return r
    } finally {
      this.apply(this.scheduler.finish(id, Date.now()))
    }
  }

  private noteRefused (taskId: number, kind: JobKind, reason: string): void {
    this.refused.push({ at: new Date().toISOString(), taskId, kind, reason })
    if (this.refused.length > 100) this.refused.splice(0, this.refused.length - 100)
  }

  private apply (p: Pumped): void {
    for (const { job, reason } of p.drop) {
      const w = this.waiters.get(job.id)
      this.waiters.delete(job.id)
      this.outcomes.inc({ kind: job.kind, outcome: 'dropped' })
      this.noteRefused(job.taskId, job.kind, reason)
      this.deps.log.warn({ taskId: job.taskId, kind: job.kind, reason }, `dropping the queued ${job.kind} job of task ${job.taskId}: ${reason}`)
      if (w === undefined) continue
      void (w.onDrop?.() ?? Promise.resolve()).catch(() => {}).finally(() => { w.reject(new JobRefused(`${job.kind} job for task ${job.taskId} dropped: ${reason}`)) })
    }
    for (const job of p.start) {
      const w = this.waiters.get(job.id)
      this.waiters.delete(job.id)
      this.deps.log.info({ taskId: job.taskId, kind: job.kind, waitedSec: Math.round((Date.now() - job.queuedAt) / 1000) }, `${job.kind} job for task ${job.taskId} starts`)
      w?.resolve()
    }
    if (this.waiters.size === 0) this.stop()
  }

  /** While jobs wait, queued ones whose deadline went out of reach are dropped without waiting for a running job to end. */
  private ensureTimer (): void {
    if (this.timer !== undefined) return
    this.timer = setInterval(() => { this.apply(this.scheduler.pump(Date.now())) }, PUMP_MS)
    this.timer.unref()
  }
}
