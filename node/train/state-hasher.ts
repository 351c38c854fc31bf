import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { MessageChannel, Worker, receiveMessageOnPort, type MessagePort } from 'node:worker_threads'
import type { TensorData } from '../../protocols/commit/tensor.js'
import { runHashJob, type HashJob, type HashResult } from './hash-job.js'

// Computes per-step state roots (and writes checkpoints) off the training
// thread. The training loop only copies the state out of the backend into a
// recycled buffer and transfers it (no copy) to a worker thread, so step s+1
// trains while the worker hashes state s. Replies are polled synchronously (receiveMessageOnPort)
// every step, so buffers are recycled without the loop yielding to the event
// loop. When the worker is `depth` states behind, the training thread hashes
// the next state itself rather than wait. Results keep submission order. Without a worker
// (tsx/vitest run the .ts sources, or hashWorker: false), jobs run inline.

export interface SubmitResult { root: Uint8Array, manifestHash?: string }

interface Pending { resolve: (r: SubmitResult) => void, reject: (e: Error) => void }

export class StateHasher {
  private worker?: Worker
  private port?: MessagePort
  private nextId = 0
  private readonly pending = new Map<number, Pending>()
  /** every submitted job's result, until the job is done */
  private readonly queue = new Map<number, Promise<SubmitResult>>()
  private readonly pool: Float32Array[][] = []
  private failure?: Error
  /** jobs the training thread hashed itself because the worker was `depth` jobs behind */
  inlineJobs = 0
  readonly mode: 'worker' | 'inline'
  readonly depth: number

  constructor (opts: { worker?: boolean, depth?: number } = {}) {
    const file = fileURLToPath(new URL('./state-hasher-worker.js', import.meta.url))
    const useWorker = opts.worker !== false && existsSync(file) && import.meta.url.endsWith('.js')
    this.depth = Math.max(1, opts.depth ?? 4)
    if (useWorker) {
      const { port1, port2 } = new MessageChannel()
      // hashing needs little heap (state buffers are transferred, not copied);
      // small limits keep the worker's RSS down
      this.worker = new Worker(file, { workerData: { port: port1 }, transferList: [port1], resourceLimits: { maxOldGenerationSizeMb: 32, maxYoungGenerationSizeMb: 2 } })
      this.port = port2
      port2.on('message', (m: HashResult) => this.handle(m))
      const fail = (e: Error): void => {
        this.failure ??= e
        for (const p of this.pending.values()) p.reject(e)
        this.pending.clear()
        this.queue.clear()
      }
      this.worker.on('error', fail)
      this.worker.on('exit', code => { if (this.worker !== undefined) fail(new Error(`state hashing worker exited (code ${code})`)) })
    }
    this.mode = useWorker ? 'worker' : 'inline'
  }

  private handle (m: HashResult): void {
    // two spare sets suffice: the loop takes one per step and the worker returns one per job
    if (m.views !== undefined && this.pool.length < 2 && m.views.every(v => v instanceof Float32Array)) this.pool.push(m.views as Float32Array[])
    this.queue.delete(m.id)
    const p = this.pending.get(m.id)
    if (p === undefined) return
    this.pending.delete(m.id)
    if (m.error !== undefined || m.root === undefined) p.reject(new Error(`state hashing failed: ${m.error ?? 'no root'}`))
    else p.resolve({ root: new Uint8Array(m.root), manifestHash: m.manifestHash })
  }

  /** Delivers replies already sent by the worker, without yielding. */
  private drain (): void {
    if (this.port === undefined) return
    for (let m = receiveMessageOnPort(this.port); m !== undefined; m = receiveMessageOnPort(this.port)) this.handle(m.message as HashResult)
  }

  /** A set of state buffers handed back by the worker, to refill instead of allocating. */
  recycled (): Float32Array[] | undefined {
    this.drain()
    return this.pool.pop()
  }

  /**
   * Queues the root of `tensors` at `step` (and, with `checkpoint`, writing the
   * checkpoint); the tensors' buffers are transferred (do not reuse them).
   * Never waits: when `depth` jobs are queued the job runs here, inline.
   */
  async submit (job: Omit<HashJob, 'id'>): Promise<{ result: Promise<SubmitResult> }> {
    if (this.failure !== undefined) throw this.failure
    if (this.worker === undefined) return { result: Promise.resolve(runHashJob({ ...job, id: 0 })) }
    this.drain()
    if (this.queue.size >= this.depth) {
      // The worker is behind: hash this state here instead of waiting. On a
      // loaded machine (autogroup scheduling shares one CPU budget among the
      // process's threads) a thread that waits for another gains nothing, so
      // the training thread does the work itself and the worker helps with
      // what CPU it gets; with a free core the queue never fills.
      this.inlineJobs++
      const r = runHashJob({ ...job, id: -1 })
      if (this.pool.length < 2 && job.tensors.every(t => t.values instanceof Float32Array)) this.pool.push(job.tensors.map(t => t.values as Float32Array))
      return { result: Promise.resolve(r) }
    }
    const id = this.nextId++
    const p = new Promise<SubmitResult>((resolve, reject) => this.pending.set(id, { resolve, reject }))
    p.catch(() => {})
    this.queue.set(id, p)
    const transfer = [...new Set(job.tensors.map(t => t.values.buffer as ArrayBuffer))]
    this.port?.postMessage({ ...job, id } satisfies HashJob, transfer)
    return { result: p }
  }

  /** Milliseconds the worker thread spent busy (event-loop active time), if there is one. */
  workerBusyMs (): number | undefined {
    return this.worker?.performance.eventLoopUtilization().active
  }

  async close (): Promise<void> {
    await Promise.allSettled([...this.queue.values()])
    const w = this.worker
    this.worker = undefined
    this.port?.close()
    await w?.terminate()
  }
}

export type { TensorData }
