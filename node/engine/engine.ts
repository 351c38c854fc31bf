import { fork, type ChildProcess } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Logger } from '../log.js'
import { parseMessage } from './protocol-check.js'
import type { EngineJob, EngineMessage, JobEvent, ResultOf } from './protocol.js'

// The host's side of an engine process (engine-server.ts): a child that
// loads TensorFlow.js so the peer never does. tfjs-wasm blocks the event loop
// for whole steps, its emscripten glue installs process-wide crash handlers,
// a process runs one tfjs backend, and a crash of the engine must not take the
// peer down: so the engine is a process, and jobs and their events cross the
// IPC channel as the typed messages of protocol.ts, each checked on receipt.
// Nothing is read from the engine's stdout (it is not even a pipe); its
// stderr is kept only to say why it died.

const SERVER = join(dirname(fileURLToPath(import.meta.url)), 'engine-server.js')

export interface EngineProcessOptions {
  env?: NodeJS.ProcessEnv
  /** `exit`: the process ends once its jobs are done (a one-shot engine) */
  onExit?: (code: number | null, signal: NodeJS.Signals | null) => void
}

interface Pending { kind: EngineJob['kind'], what: string, onEvent?: (e: JobEvent) => void, resolve: (v: unknown) => void, reject: (e: Error) => void }

/** One engine process: jobs run one at a time in the order they are sent. */
export class EngineProcess {
  readonly child: ChildProcess
  private nextId = 1
  private readonly pending = new Map<number, Pending>()
  private stderrTail = ''
  private failure: Error | undefined

  constructor (private readonly log: Logger, o: EngineProcessOptions = {}) {
    this.child = fork(SERVER, [], { execArgv: [], stdio: ['ignore', 'ignore', 'pipe', 'ipc'], serialization: 'advanced', env: o.env ?? process.env })
    this.child.stderr?.on('data', (d: Buffer) => { this.stderrTail = (this.stderrTail + d.toString()).slice(-2000) })
    this.child.on('message', (m: unknown) => this.receive(m))
    this.child.on('exit', (code, signal) => {
      // jobs in flight die with the process
      const why = this.failure?.message ?? `the engine exited (${signal ?? `code ${code}`})${this.stderrTail !== '' ? `: ${this.stderrTail.trim().split('\n').slice(-3).join(' | ')}` : ''}`
      for (const [id, p] of this.pending) {
        this.pending.delete(id)
        p.reject(new Error(`${p.what} failed: ${why}`))
      }
      o.onExit?.(code, signal)
    })
    this.child.on('error', err => this.log.warn({ err: err.message }, 'engine process error'))
    log.debug({ pid: this.child.pid }, 'engine process started')
  }

  get alive (): boolean { return this.child.exitCode === null && this.child.signalCode === null && this.child.connected }
  get pid (): number | undefined { return this.child.pid }
  get busy (): boolean { return this.pending.size > 0 }

  /** Runs `job` in this process; its events go to `onEvent` as they come. */
  async run<J extends EngineJob> (job: J, what: string, onEvent?: (e: JobEvent) => void): Promise<ResultOf<J>> {
    const id = this.nextId++
    return await new Promise<ResultOf<J>>((resolve, reject) => {
      this.pending.set(id, { kind: job.kind, what, onEvent, resolve: resolve as (v: unknown) => void, reject })
      this.child.send({ ...job, id }, err => {
        if (err == null) return
        this.pending.delete(id)
        reject(new Error(`${what}: cannot reach the engine: ${err.message}`))
      })
    })
  }

  /** Asks the process to end once it has nothing left to do (it exits when its channel closes). */
  release (): void {
    if (this.child.connected) this.child.disconnect()
  }

  /** Ends the process; `why`: what its jobs in flight fail with (default: how it exited). */
  kill (signal: NodeJS.Signals = 'SIGTERM', why?: string): void {
    if (why !== undefined) this.failure ??= new Error(why)
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal)
  }

  private receive (raw: unknown): void {
    let m: EngineMessage
    try {
      m = parseMessage(raw)
    } catch (err) {
      // an engine that speaks anything else is not trusted with the jobs it holds
      this.log.warn({ err: (err as Error).message }, 'malformed message from the engine: stopping it')
      this.kill('SIGKILL', (err as Error).message)
      return
    }
    if (m.type === 'ready') return
    const p = this.pending.get(m.id)
    if (p === undefined) return
    if (m.type === 'done') {
      this.pending.delete(m.id)
      if (m.kind !== p.kind) p.reject(new Error(`${p.what} failed: engine protocol: a ${m.kind} result for a ${p.kind} job`))
      else p.resolve(m.result)
    } else if (m.type === 'error') {
      this.pending.delete(m.id)
      p.reject(new Error(`${p.what} failed: ${m.message}`))
    } else {
      const { id: _id, ...event } = m
      p.onEvent?.(event)
    }
  }
}

export interface EngineRun<T> { result: Promise<T>, kill: () => void, pid: number | undefined }

/**
 * Runs one job in a fresh engine process that ends with it: training starts
 * from a clean tfjs state every time, and a task's engine gives its memory back.
 */
export function runEngineJob<J extends EngineJob> (
  job: J, log: Logger, what: string, o: { onEvent?: (e: JobEvent) => void, timeoutMs?: number, env?: NodeJS.ProcessEnv, signal?: AbortSignal } = {}
): EngineRun<ResultOf<J>> {
  let exited!: () => void
  const gone = new Promise<void>(resolve => { exited = resolve })
  const engine = new EngineProcess(log, { env: o.env, onExit: () => exited() })
  const timer = o.timeoutMs != null ? setTimeout(() => engine.kill('SIGKILL', `no result within ${o.timeoutMs} ms`), o.timeoutMs) : undefined
  // the one who asked no longer wants the result (e.g. the task went to another solver)
  const abort = (): void => engine.kill('SIGTERM', 'aborted')
  if (o.signal?.aborted === true) abort()
  else o.signal?.addEventListener('abort', abort, { once: true })
  const result = (async () => {
    try {
      return await engine.run(job, what, o.onEvent)
    } finally {
      if (timer != null) clearTimeout(timer)
      o.signal?.removeEventListener('abort', abort)
      engine.release()
      // resolved once the process is gone, as its memory is (it exits when its channel closes; a stuck one is killed)
      const stuck = setTimeout(() => engine.kill('SIGKILL'), 10_000)
      await gone
      clearTimeout(stuck)
    }
  })()
  log.debug({ kind: job.kind, pid: engine.pid }, `${what} started`)
  return { result, kill: () => engine.kill(), pid: engine.pid }
}
