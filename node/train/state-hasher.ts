import { existsSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { fileURLToPath } from 'node:url'
import { MessageChannel, Worker, receiveMessageOnPort, type MessagePort } from 'node:worker_threads'
import type { TensorData } from '../../protocols/commit/tensor.js'
import { runHashJob, type HashJob, type HashResult } from './hash-job.js'

// Computes per-step state roots (and writes checkpoints) off the training
// thread. The training loop only copies the state out of the backend into a
// state slot (`buffers`) and posts it to a worker thread, so step s+1 trains
// while the worker hashes state s. Slots are SharedArrayBuffers, shared with
// the worker rather than transferred: transferring (detaching) an ArrayBuffer
// invalidates V8's array-buffer-detaching protector for the whole thread, after
// which every optimized loop over typed arrays checks for detachment — the
// JavaScript kernels (the cpu backend, the cnn's Conv2DBackpropFilter on wasm)
// ran 20–25% slower in verifiable mode for that alone (docs/training.md).
// A slot is the worker's until its reply arrives. Replies are polled
// synchronously (receiveMessageOnPort) every step, so slots are freed without
// the loop yielding to the event loop. When the worker is `depth` states
// behind, the training thread hashes the next state itself rather than wait.
// Results keep submission order. Without a worker (tsx/vitest run the .ts
// sources, hashWorker: false, or a process that may use one core), jobs run
// inline: on one core a second thread overlaps nothing, and measured in real
// runs it cost more CPU than hashing inline (its start-up, a second isolate
// compiling the hashing path, the hand-over and thread switches; docs/training.md
// "One core: inline").

export interface SubmitResult { root: Uint8Array, manifestHash?: string }

interface Pending { resolve: (r: SubmitResult) => void, reject: (e: Error) => void }
interface Slot { buffer: ArrayBufferLike, views: Float32Array[], sizes: string, free: boolean }

export class StateHasher {
  private worker?: Worker
  private port?: MessagePort
  private nextId = 0
  private readonly pending = new Map<number, Pending>()
  /** every submitted job's result, until the job is done */
  private readonly queue = new Map<number, Promise<SubmitResult>>()
  private readonly slots: Slot[] = []
  /** the slot each job in the worker's hands reads from */
  private readonly lent = new Map<number, Slot>()
  private failure?: Error
  /** jobs the training thread hashed itself because the worker was `depth` jobs behind */
  inlineJobs = 0
  readonly mode: 'worker' | 'inline'
  readonly depth: number

  /** `worker`: hash on a worker thread (default: when the process may use more than one core) */
  constructor (opts: { worker?: boolean, depth?: number } = {}) {
    const file = fileURLToPath(new URL('./state-hasher-worker.js', import.meta.url))
    const useWorker = (opts.worker ?? availableParallelism() > 1) && existsSync(file) && import.meta.url.endsWith('.js')
    this.depth = Math.max(1, opts.depth ?? 4)
    if (useWorker) {
      const { port1, port2 } = new MessageChannel()
      // hashing needs little heap (state slots are shared, not copied);
      // small limits keep the worker's RSS down
      this.worker = new Worker(file, {
        workerData: { port: port1 }, transferList: [port1], resourceLimits: { maxOldGenerationSizeMb: 32, maxYoungGenerationSizeMb: 2 }
      })
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
    const slot = this.lent.get(m.id)
    if (slot !== undefined) { slot.free = true; this.lent.delete(m.id) }
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

  /**
   * A state slot to fill and submit: one float32 array per state tensor of the
   * given element counts, over one buffer (shared with the worker when there is
   * one). Slots come back when the worker is done with them, so a training loop
   * allocates depth + 2 of them at most.
   */
  buffers (sizes: readonly number[]): Float32Array[] {
    this.drain()
    const key = sizes.join(',')
    let slot = this.slots.find(x => x.free && x.sizes === key)
    if (slot === undefined) {
      const bytes = sizes.reduce((a, n) => a + n * 4, 0)
      const buffer = this.worker !== undefined ? new SharedArrayBuffer(bytes) : new ArrayBuffer(bytes)
      let off = 0
      const views = sizes.map(n => { const v = new Float32Array(buffer, off, n); off += n * 4; return v })
      slot = { buffer, views, sizes: key, free: false }
      // slots of an old shape (another task) are dropped once free
      for (let i = this.slots.length - 1; i >= 0; i--) if (this.slots[i].free && this.slots[i].sizes !== key) this.slots.splice(i, 1)
      this.slots.push(slot)
    }
    slot.free = false
    return slot.views
  }

  private slotOf (tensors: readonly TensorData[]): Slot | undefined {
    const b = tensors[0]?.values.buffer
    return b === undefined ? undefined : this.slots.find(x => x.buffer === b)
  }

  /**
   * Queues the root of `tensors` at `step` (and, with `checkpoint`, writing the
   * checkpoint). Tensors in a slot from `buffers` are shared with the worker
   * (the slot is free again once it is done); other tensors are copied to it.
   * Never waits: when `depth` jobs are queued the job runs here, inline.
   */
  async submit (job: Omit<HashJob, 'id'>): Promise<{ result: Promise<SubmitResult> }> {
    if (this.failure !== undefined) throw this.failure
    const slot = this.slotOf(job.tensors)
    if (this.worker === undefined) {
      try { return { result: Promise.resolve(runHashJob({ ...job, id: 0 })) } } finally { if (slot !== undefined) slot.free = true }
    }
    this.drain()
    if (this.queue.size >= this.depth) {
      // The worker is behind: hash this state here instead of waiting. On a
      // loaded machine (autogroup scheduling shares one CPU budget among the
      // process's threads) a thread that waits for another gains nothing, so
      // the training thread does the work itself and the worker helps with
      // what CPU it gets; with a free core the queue never fills.
      this.inlineJobs++
      try { return { result: Promise.resolve(runHashJob({ ...job, id: -1 })) } } finally { if (slot !== undefined) slot.free = true }
    }
    const id = this.nextId++
    const p = new Promise<SubmitResult>((resolve, reject) => this.pending.set(id, { resolve, reject }))
    p.catch(() => {})
    this.queue.set(id, p)
    if (slot !== undefined) this.lent.set(id, slot)
    // no transfer list: shared slots are shared, anything else is copied (never detached, see the top)
    this.port?.postMessage({ ...job, id } satisfies HashJob)
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
