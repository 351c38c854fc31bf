import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import { fromHex } from '../../protocols/commit/merkle.js'
import type { CodedCheckpoint } from '../../protocols/erasure/index.js'
import { codeCheckpoint } from './coded-run.js'
import { checkpointDir } from '../train/store.js'

// Erasure coding of checkpoints in worker threads. Coding a checkpoint is
// CPU-bound (~150 ms for the devnet's 1.2 MB MLP state, docs/benchmarks.md,
// "Devnet timing"): done on the peer's event loop it stalled the peer (its
// libp2p streams, its chain client) for the whole run's coding. Workers also
// let the solver code each checkpoint as soon as training writes it
// (CodeAhead), so that most of the coding overlaps training. Without the
// compiled worker (tsx/vitest run the .ts sources) jobs run inline.

export interface CodingJob { id: number, dir: string, step: number }
export type CodingReply = { id: number, step: number, dataBytes: number, chunkRoot: string, error?: undefined } | { id: number, error: string }

interface Slot { worker: Worker, busy?: { id: number, resolve: (c: CodedCheckpoint) => void, reject: (e: Error) => void } }

export class CodingPool {
  private readonly slots: Slot[] = []
  private readonly waiting: Array<{ job: CodingJob, resolve: (c: CodedCheckpoint) => void, reject: (e: Error) => void }> = []
  private nextId = 0
  private closed = false
  readonly mode: 'worker' | 'inline'

  constructor (threads: number) {
    const file = fileURLToPath(new URL('./coding-worker.js', import.meta.url))
    const useWorker = existsSync(file) && import.meta.url.endsWith('.js')
    this.mode = useWorker ? 'worker' : 'inline'
    if (!useWorker) return
    for (let i = 0; i < Math.max(1, threads); i++) {
      const slot: Slot = { worker: new Worker(file) }
      slot.worker.on('message', (r: CodingReply) => this.done(slot, r))
      slot.worker.on('error', e => this.fail(slot, e))
      slot.worker.on('exit', code => { if (!this.closed) this.fail(slot, new Error(`erasure-coding worker exited (code ${code})`)) })
      slot.worker.unref()
      this.slots.push(slot)
    }
  }

  get threads (): number { return this.slots.length }
  /** jobs queued or running */
  get pending (): number { return this.waiting.length + this.slots.filter(s => s.busy != null).length }

  /** Codes one checkpoint directory (idempotent, see codeCheckpoint). */
  async code (dir: string, step: number): Promise<CodedCheckpoint> {
    if (this.closed) throw new Error('the erasure-coding pool is closed')
    if (this.mode === 'inline') return codeCheckpoint(dir, step)
    return await new Promise((resolve, reject) => {
      this.waiting.push({ job: { id: this.nextId++, dir, step }, resolve, reject })
      this.pump()
    })
  }

  private pump (): void {
    for (const s of this.slots) {
      if (s.busy != null || this.waiting.length === 0) continue
      const w = this.waiting.shift()!
      s.busy = { id: w.job.id, resolve: w.resolve, reject: w.reject }
      s.worker.ref()
      s.worker.postMessage(w.job)
    }
  }

  private done (s: Slot, r: CodingReply): void {
    const b = s.busy
    s.busy = undefined
    s.worker.unref()
    if (b != null && b.id === r.id) {
      if (r.error !== undefined) b.reject(new Error(`erasure coding failed: ${r.error}`))
      else b.resolve({ step: r.step, dataBytes: r.dataBytes, chunkRoot: fromHex(r.chunkRoot) })
    }
    this.pump()
  }

  private fail (s: Slot, e: Error): void {
    s.busy?.reject(e)
    s.busy = undefined
    this.slots.splice(this.slots.indexOf(s), 1)
    if (this.slots.length === 0) for (const w of this.waiting.splice(0)) w.reject(e)
  }

  async close (): Promise<void> {
    this.closed = true
    for (const w of this.waiting.splice(0)) w.reject(new Error('the erasure-coding pool is closed'))
    await Promise.all(this.slots.map(async s => await s.worker.terminate()))
    this.slots.length = 0
  }
}

/**
 * Codes a run's checkpoints while training writes them: `poll()` (called on
 * each progress report) queues every checkpoint whose manifest exists — the
 * manifest is written after the state file, both atomically (node/train/store.ts),
 * so its presence means the data is complete. One job at a time, so coding
 * takes at most one thread from training. A checkpoint rewritten later (a
 * resume, a fault) is coded again by the final pass: codeCheckpoint keeps a
 * coding only while it is newer than the data.
 */
export class CodeAhead {
  private readonly seen = new Set<number>()
  private readonly queue: number[] = []
  private running?: Promise<void>
  private stopped = false
  coded = 0
  errors = 0

  constructor (private readonly runDir: string, private readonly pool: CodingPool) {}

  poll (): void {
    if (this.stopped || this.pool.mode === 'inline') return
    const root = join(this.runDir, 'checkpoints')
    let names: string[]
    try { names = readdirSync(root) } catch { return }
    for (const n of names) {
      const m = /^step-(\d{8})$/.exec(n)
      if (m == null) continue
      const step = Number(m[1])
      if (this.seen.has(step) || !existsSync(join(root, n, 'manifest.json'))) continue
      this.seen.add(step)
      this.queue.push(step)
    }
    this.running ??= this.drain().finally(() => { this.running = undefined })
  }

  private async drain (): Promise<void> {
    while (!this.stopped && this.queue.length > 0) {
      const step = this.queue.shift()!
      // an error here is retried by the final pass, which reports it
      try { await this.pool.code(checkpointDir(this.runDir, step), step); this.coded++ } catch { this.errors++ }
    }
  }

  /** Waits until everything queued so far is coded. */
  async drained (): Promise<void> {
    while (this.running != null) await this.running
  }

  /** Stops queueing and waits for the job in flight. */
  async stop (): Promise<void> {
    this.stopped = true
    this.queue.length = 0
    await this.running
  }
}
