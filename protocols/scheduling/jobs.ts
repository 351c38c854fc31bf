// A peer's job scheduler: which training and replay jobs run now, which wait
// (first in, first out), and which are refused or dropped because they could
// not finish before their deadline on chain. Pure: times are passed in (ms),
// the host starts and stops the work.
//
// Why refuse rather than queue everything: a solver that sits on a task it
// cannot finish in time is slashed when the solve timeout passes, and the
// task waits that long for another solver; handing it back at once costs the
// task nothing and the solver no more than the timeout would.

export type JobKind = 'train' | 'verify'

export interface JobLimits {
  /** jobs running at once (CPU) */
  maxJobs: number
  /** bytes the running jobs may use together (memory) */
  maxMemory: number
}

export interface JobRequest {
  /** unique among the scheduler's jobs */
  id: string
  taskId: number
  kind: JobKind
  /** estimated peak memory of the job, bytes */
  memory: number
  /** estimated run time, ms */
  estimateMs: number
  /** the job must have finished by then (ms, same clock as `now`) */
  deadline: number
}

export interface Job extends JobRequest {
  state: 'queued' | 'running'
  queuedAt: number
  startedAt?: number
}

export type Admission =
  | { decision: 'run' }
  | { decision: 'queue', position: number, expectedStart: number }
  | { decision: 'refuse', reason: string }

export interface Pumped {
  /** jobs that start now (moved from the queue to running) */
  start: Job[]
  /** queued jobs that can no longer finish by their deadline: removed */
  drop: Array<{ job: Job, reason: string }>
}

export function validateLimits (l: JobLimits): JobLimits {
  if (!Number.isInteger(l.maxJobs) || l.maxJobs < 1) throw new Error(`maxJobs must be a positive integer, got ${l.maxJobs}`)
  if (!Number.isFinite(l.maxMemory) || l.maxMemory <= 0) throw new Error(`maxMemory must be a positive number of bytes, got ${l.maxMemory}`)
  return l
}

const MiB = 1024 * 1024
const mib = (b: number): string => `${Math.round(b / MiB)} MiB`

/**
 * When each queued job is expected to start, simulating the FIFO: a job
 * starts once the jobs before it started and enough running ones ended to
 * free a slot and its memory. A running job past its estimate is taken to end now.
 */
export function expectedStarts (running: readonly Job[], queued: readonly JobRequest[], limits: JobLimits, now: number): number[] {
  const live = running.map(j => ({ end: Math.max(now, (j.startedAt ?? now) + j.estimateMs), memory: j.memory }))
  let mem = live.reduce((s, j) => s + j.memory, 0)
  let t = now
  const out: number[] = []
  for (const q of queued) {
    live.sort((a, b) => a.end - b.end)
    while (live.length > 0 && (live.length >= limits.maxJobs || mem + q.memory > limits.maxMemory)) {
      const done = live.shift()!
      mem -= done.memory
      t = Math.max(t, done.end)
    }
    out.push(t)
    live.push({ end: t + q.estimateMs, memory: q.memory })
    mem += q.memory
  }
  return out
}

export class JobScheduler {
  private readonly running: Job[] = []
  private readonly queue: Job[] = []
  readonly limits: JobLimits

  constructor (limits: JobLimits) {
    this.limits = validateLimits({ ...limits })
  }

  get memoryInUse (): number { return this.running.reduce((s, j) => s + j.memory, 0) }

  snapshot (): { running: Job[], queued: Job[], limits: JobLimits, memoryInUse: number } {
    return { running: this.running.map(j => ({ ...j })), queued: this.queue.map(j => ({ ...j })), limits: { ...this.limits }, memoryInUse: this.memoryInUse }
  }

  has (id: string): boolean { return this.running.some(j => j.id === id) || this.queue.some(j => j.id === id) }

  /** Runs the job now, queues it, or refuses it (it could never run, or not finish in time). */
  admit (req: JobRequest, now: number): Admission {
    if (this.has(req.id)) throw new Error(`job ${req.id} is already scheduled`)
    if (req.memory > this.limits.maxMemory) return { decision: 'refuse', reason: `needs ${mib(req.memory)}, more than the ${mib(this.limits.maxMemory)} this peer gives its jobs` }
    const fitsNow = this.queue.length === 0 && this.running.length < this.limits.maxJobs && this.memoryInUse + req.memory <= this.limits.maxMemory
    const start = fitsNow ? now : expectedStarts(this.running, [...this.queue, req], this.limits, now).at(-1)!
    if (start + req.estimateMs > req.deadline) {
      const late = Math.round((start + req.estimateMs - req.deadline) / 1000)
      return { decision: 'refuse', reason: `would finish ~${late} s after its deadline (${this.running.length} running, ${this.queue.length} queued, ~${Math.round(req.estimateMs / 1000)} s of work)` }
    }
    if (fitsNow) {
      this.running.push({ ...req, state: 'running', queuedAt: now, startedAt: now })
      return { decision: 'run' }
    }
    this.queue.push({ ...req, state: 'queued', queuedAt: now })
    return { decision: 'queue', position: this.queue.length, expectedStart: start }
  }

  /** A running or queued job ended or was abandoned; returns what starts or drops as a result. */
  finish (id: string, now: number): Pumped {
    const r = this.running.findIndex(j => j.id === id)
    if (r >= 0) this.running.splice(r, 1)
    const q = this.queue.findIndex(j => j.id === id)
    if (q >= 0) this.queue.splice(q, 1)
    return this.pump(now)
  }

  /**
   * Drops queued jobs that can no longer finish in time (each drop makes room
   * for the ones behind it), then starts jobs from the head of the queue while
   * they fit: strictly FIFO, so a big job is never starved by small ones.
   */
  pump (now: number): Pumped {
    const drop: Pumped['drop'] = []
    for (let changed = true; changed;) {
      changed = false
      const starts = expectedStarts(this.running, this.queue, this.limits, now)
      const i = this.queue.findIndex((j, k) => starts[k] + j.estimateMs > j.deadline)
      if (i >= 0) {
        const [job] = this.queue.splice(i, 1)
        const late = Math.round((starts[i] + job.estimateMs - job.deadline) / 1000)
        drop.push({ job, reason: `queued since ${Math.round((now - job.queuedAt) / 1000)} s, it would finish ~${late} s after its deadline` })
        changed = true
      }
    }
    const start: Job[] = []
    while (this.queue.length > 0) {
      const head = this.queue[0]
      if (this.running.length >= this.limits.maxJobs || this.memoryInUse + head.memory > this.limits.maxMemory) break
      this.queue.shift()
      const job: Job = { ...head, state: 'running', startedAt: now }
      this.running.push(job)
      start.push(job)
    }
    return { start, drop }
  }
}
