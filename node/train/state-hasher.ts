import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import type { TensorData } from '../../protocols/commit/tensor.js'
import { fastStateRoot } from './fast-commit.js'

// Computes per-step state roots. With a worker thread (compiled JS only), the
// hashing of step s overlaps the training of step s+1, which keeps the
// verifiable mode's overhead small on a multi-core machine; roots still come
// back strictly in submission order. Without it, hashing is inline.

export class StateHasher {
  private worker?: Worker
  private nextId = 0
  private readonly pending = new Map<number, { resolve: (r: Uint8Array) => void, reject: (e: Error) => void }>()
  private readonly inflight: Array<Promise<Uint8Array>> = []
  readonly mode: 'worker' | 'inline'

  constructor (opts: { worker?: boolean, maxInflight?: number } = {}) {
    const file = fileURLToPath(new URL('./state-hasher-worker.js', import.meta.url))
    const useWorker = opts.worker !== false && existsSync(file) && import.meta.url.endsWith('.js')
    this.maxInflight = opts.maxInflight ?? 3
    if (useWorker) {
      // hashing needs little heap; small limits keep the worker's RSS down
      this.worker = new Worker(file, { resourceLimits: { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 4 } })
      this.worker.on('message', (m: { id: number, root?: Uint8Array, error?: string, buffers?: ArrayBuffer[] }) => {
        if (m.buffers !== undefined && this.pool.length < this.maxInflight) this.pool.push(m.buffers.map(x => new Float32Array(x)))
        const p = this.pending.get(m.id)
        if (p === undefined) return
        this.pending.delete(m.id)
        if (m.error !== undefined || m.root === undefined) p.reject(new Error(`state hashing failed: ${m.error ?? 'no root'}`))
        else p.resolve(new Uint8Array(m.root))
      })
      this.worker.on('error', e => { for (const p of this.pending.values()) p.reject(e); this.pending.clear() })
    }
    this.mode = useWorker ? 'worker' : 'inline'
  }

  private readonly maxInflight: number
  private readonly pool: Float32Array[][] = []

  /** A set of state buffers handed back by the worker, to refill instead of allocating. */
  recycled (): Float32Array[] | undefined {
    return this.pool.pop()
  }

  /** Queues the root of `tensors` at `step`; the tensors' buffers are transferred (do not reuse them). */
  async submit (tensors: TensorData[], step: number): Promise<Uint8Array> {
    if (this.worker === undefined) return fastStateRoot(tensors, step)
    // bounded queue: wait for the oldest root when too many are in flight
    while (this.inflight.length >= this.maxInflight) await this.inflight.shift()
    const id = this.nextId++
    const p = new Promise<Uint8Array>((resolve, reject) => this.pending.set(id, { resolve, reject }))
    this.inflight.push(p)
    p.catch(() => {})
    const transfer = tensors.map(t => t.values.buffer as ArrayBuffer)
    this.worker.postMessage({ id, step, tensors }, transfer)
    return await p
  }

  /** Milliseconds the worker thread spent busy (event-loop active time), if there is one. */
  workerBusyMs (): number | undefined {
    return this.worker?.performance.eventLoopUtilization().active
  }

  async close (): Promise<void> {
    await Promise.allSettled(this.inflight)
    await this.worker?.terminate()
    this.worker = undefined
  }
}
