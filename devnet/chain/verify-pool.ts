import { existsSync } from 'node:fs'
import { cpus } from 'node:os'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import type { Logger } from '../../node/log.js'
import { verifySignature, type SignatureJob } from './runtime/signature.js'

// Signature verification off the chain's main thread. sr25519 verification
// (~0.85 ms) was most of the cost of admitting a transfer; a few worker
// threads run it in parallel while the main thread decodes, answers RPC and
// builds blocks. Jobs submitted in the same tick are sent as one batch per
// worker, so the message overhead stays small. Without workers (size 0, or
// when the compiled worker script is missing, as under vitest from sources)
// verification runs inline and the result is the same.

interface Pending { job: SignatureJob, resolve: (ok: boolean) => void }
interface Slot { worker: Worker, ready: Promise<void>, inflight: number, batches: Map<number, Pending[]> }

/** Number of verify workers: PROOFSWARM_CHAIN_VERIFY_WORKERS, else one per core but one (for the main thread), 1..4. */
export function defaultVerifyWorkers (): number {
  const env = process.env.PROOFSWARM_CHAIN_VERIFY_WORKERS
  if (env !== undefined && env !== '') {
    const n = Number(env)
    if (Number.isInteger(n) && n >= 0 && n <= 64) return n
  }
  return Math.max(1, Math.min(4, cpus().length - 1))
}

export class VerifyPool {
  private readonly slots: Slot[] = []
  private queue: Pending[] = []
  private flushScheduled = false
  private nextBatch = 1
  private closed = false

  constructor (size: number, private readonly log?: Logger) {
    const url = new URL('./verify-worker.js', import.meta.url)
    if (size > 0 && !existsSync(fileURLToPath(url))) {
      log?.warn({ url: url.href }, 'verify worker script not found (running from sources?): verifying inline')
      size = 0
    }
    for (let i = 0; i < size; i++) this.spawn(url)
  }

  get size (): number { return this.slots.length }

  private spawn (url: URL): void {
    const worker = new Worker(url)
    worker.unref()
    const slot: Slot = {
      worker,
      inflight: 0,
      batches: new Map(),
      ready: new Promise((resolve, reject) => {
        worker.once('message', () => resolve())
        worker.once('error', reject)
      })
    }
    slot.ready.catch(() => {})
    worker.on('message', (m: { id?: number, ok?: Uint8Array }) => {
      if (m.id === undefined || m.ok === undefined) return
      const batch = slot.batches.get(m.id)
      if (batch === undefined) return
      slot.batches.delete(m.id)
      slot.inflight -= batch.length
      batch.forEach((p, i) => p.resolve(m.ok?.[i] === 1))
    })
    worker.on('error', e => { this.log?.error({ err: e.message }, 'verify worker failed'); this.retire(slot) })
    worker.on('exit', () => this.retire(slot))
    this.slots.push(slot)
  }

  /** A dead worker's jobs are verified inline; the pool carries on with the others. */
  private retire (slot: Slot): void {
    const i = this.slots.indexOf(slot)
    if (i >= 0) this.slots.splice(i, 1)
    for (const batch of slot.batches.values()) for (const p of batch) p.resolve(verifySignature(p.job))
    slot.batches.clear()
  }

  verify (job: SignatureJob): Promise<boolean> {
    if (this.slots.length === 0 || this.closed) return Promise.resolve(verifySignature(job))
    return new Promise(resolve => {
      this.queue.push({ job, resolve })
      if (!this.flushScheduled) {
        this.flushScheduled = true
        setImmediate(() => this.flush())
      }
    })
  }

  private flush (): void {
    this.flushScheduled = false
    const jobs = this.queue
    this.queue = []
    if (this.slots.length === 0) { for (const p of jobs) p.resolve(verifySignature(p.job)); return }
    // hand each worker a share, least loaded first, in chunks so results flow back steadily
    const CHUNK = 64
    for (let i = 0; i < jobs.length; i += CHUNK) {
      const batch = jobs.slice(i, i + CHUNK)
      const slot = this.slots.reduce((a, b) => (b.inflight < a.inflight ? b : a))
      const id = this.nextBatch++
      slot.batches.set(id, batch)
      slot.inflight += batch.length
      slot.worker.postMessage({ id, jobs: batch.map(p => p.job) })
    }
  }

  async close (): Promise<void> {
    this.closed = true
    const slots = [...this.slots]
    await Promise.all(slots.map(async s => { await s.worker.terminate() }))
  }
}
