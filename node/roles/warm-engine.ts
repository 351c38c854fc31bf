import { fork, type ChildProcess } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Logger } from '../log.js'
import type { ReplaySummary } from './engine.js'
import type { DivergenceCheck } from '../train/diverged-check.js'

// The peer's side of node/roles/engine-server.ts: one warm engine process per
// runtime, started on first use, restarted after it dies (idle exit, crash,
// kill). TensorFlow.js stays out of the peer process, as with the one-shot
// children of engine.ts, but a verifier that checks task after task no longer
// pays the engine's start-up and dataset load each time.

const SERVER = join(dirname(fileURLToPath(import.meta.url)), 'engine-server.js')

export type ReplayOutcome = { results: ReplaySummary[], unavailable?: undefined } | { unavailable: { step: number, reason: string }, results?: undefined }

interface Pending { resolve: (v: unknown) => void, reject: (e: Error) => void, what: string, child: ChildProcess }

export class WarmEngine {
  private child: ChildProcess | undefined
  private nextId = 1
  private readonly pending = new Map<number, Pending>()
  private stderrTail = ''
  /** the runtime the running engine was asked for (undefined: not said) */
  private runtime: string | undefined

  constructor (private readonly log: Logger, private readonly env: NodeJS.ProcessEnv = process.env) {}

  /**
   * Starts the engine (if needed) and loads the task's backend and dataset, so the first replay does not pay for them.
   * `runtime`: the task's pinned runtime; an engine running another one is replaced (a process runs one tfjs backend).
   */
  async warm (taskFile: string, datasetDir?: string, runtime?: string): Promise<{ backend: string, datasetRows: number }> {
    this.use(runtime)
    return await this.request({ cmd: 'warm', taskFile, datasetDir }, 'engine warm-up') as { backend: string, datasetRows: number }
  }

  /**
   * Replays sampled steps of a run directory (node/train/replay-many.ts); stops at the first mismatch or unusable checkpoint.
   * `checkpointLayout: 'program'`: the checkpoints are data files only (state.bin, no manifest.json), laid out as the program's state.
   */
  async replay (runDir: string, steps: number[], datasetDir?: string, runtime?: string, checkpointLayout?: 'manifest' | 'program'): Promise<ReplayOutcome> {
    this.use(runtime)
    return await this.request({ cmd: 'replay', runDir, steps, datasetDir, checkpointLayout }, `replay of ${steps.length} step(s)`) as ReplayOutcome
  }

  /** Re-runs a diverged proof's last step from its checkpoint and finds its first NaN (node/train/diverged-check.ts). */
  async checkDivergence (runDir: string, datasetDir?: string, runtime?: string, checkpointLayout?: 'manifest' | 'program'): Promise<{ check: DivergenceCheck, unavailable?: undefined } | { unavailable: { step: number, reason: string }, check?: undefined }> {
    this.use(runtime)
    return await this.request({ cmd: 'divergence', runDir, datasetDir, checkpointLayout }, 'divergence check') as { check: DivergenceCheck }
  }

  private use (runtime: string | undefined): void {
    if (runtime === undefined) return
    if (this.runtime !== undefined && this.runtime !== runtime) {
      this.log.info({ from: this.runtime, to: runtime }, 'restarting the warm engine for another runtime')
      this.stop()
    }
    this.runtime = runtime
  }

  get pid (): number | undefined {
    return this.child?.pid
  }

  stop (): void {
    const c = this.child
    this.child = undefined
    if (c != null && c.exitCode === null) c.kill('SIGTERM')
  }

  private start (): ChildProcess {
    if (this.child != null && this.child.exitCode === null && this.child.connected) return this.child
    const child = fork(SERVER, [], { execArgv: [], stdio: ['ignore', 'ignore', 'pipe', 'ipc'], env: this.env })
    this.stderrTail = ''
    child.stderr?.on('data', (d: Buffer) => { this.stderrTail = (this.stderrTail + d.toString()).slice(-2000) })
    child.on('message', (m: { id?: number, ok?: boolean, result?: unknown, error?: string }) => {
      if (m.id === undefined) return
      const p = this.pending.get(m.id)
      if (p === undefined) return
      this.pending.delete(m.id)
      if (m.ok === true) p.resolve(m.result)
      else p.reject(new Error(`${p.what} failed: ${m.error ?? 'unknown error'}`))
    })
    child.on('exit', (code, signal) => {
      if (this.child === child) this.child = undefined
      // jobs in flight die with the process (not those already sent to its successor)
      for (const [id, p] of this.pending) {
        if (p.child !== child) continue
        this.pending.delete(id)
        p.reject(new Error(`${p.what} failed: the engine exited (${signal ?? `code ${code}`})${this.stderrTail !== '' ? `: ${this.stderrTail.trim().split('\n').slice(-3).join(' | ')}` : ''}`))
      }
    })
    child.on('error', err => this.log.warn({ err: err.message }, 'engine process error'))
    this.child = child
    this.log.debug({ pid: child.pid }, 'warm engine started')
    return child
  }

  private async request (body: Record<string, unknown>, what: string): Promise<unknown> {
    const child = this.start()
    const id = this.nextId++
    return await new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, what, child })
      child.send({ id, ...body }, err => {
        if (err == null) return
        this.pending.delete(id)
        reject(new Error(`${what}: cannot reach the engine: ${err.message}`))
      })
    })
  }
}
