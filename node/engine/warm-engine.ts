import type { Logger } from '../log.js'
import { EngineProcess } from './engine.js'
import type { CheckpointLayout, DivergenceOutcome, EngineJob, ReplayOutcome, ResultOf, WarmResult } from './protocol.js'

// A verifying peer's long-lived engine process: one per runtime, started on
// first use, restarted after it dies (idle exit, crash, kill). TensorFlow.js
// stays out of the peer process, as with the one-shot engines of engine.ts,
// but a verifier that checks task after task no longer pays the engine's
// start-up (~0.7 s: module load, wasm compile, dataset read and hash) and its
// dataset load each time.

export type { ReplayOutcome } from './protocol.js'

export class WarmEngine {
  private engine: EngineProcess | undefined
  /** the runtime the running engine was asked for (undefined: not said) */
  private runtime: string | undefined

  constructor (private readonly log: Logger, private readonly env: NodeJS.ProcessEnv = process.env) {}

  /**
   * Starts the engine (if needed) and loads the task's backend and dataset, so the first replay does not pay for them.
   * `runtime`: the task's pinned runtime; an engine running another one is replaced (a process runs one tfjs backend).
   */
  async warm (taskFile: string, datasetDir?: string, runtime?: string, o: { datasetRoot?: boolean } = {}): Promise<WarmResult> {
    this.use(runtime)
    return await this.request({ kind: 'warm', taskFile, datasetDir, ...(o.datasetRoot === true ? { datasetRoot: true } : {}) }, 'engine warm-up')
  }

  /**
   * Replays sampled steps of a run directory (node/train/replay-many.ts); stops at the first mismatch or unusable checkpoint.
   * `checkpointLayout: 'program'`: the checkpoints are data files only (state.bin, no manifest.json), laid out as the program's state.
   */
  async replay (runDir: string, steps: number[], datasetDir?: string, runtime?: string, checkpointLayout?: CheckpointLayout): Promise<ReplayOutcome> {
    this.use(runtime)
    return await this.request({ kind: 'replay', runDir, steps, datasetDir, checkpointLayout }, `replay of ${steps.length} step(s)`)
  }

  /** Re-runs a diverged proof's last step from its checkpoint and finds its first NaN (node/train/diverged-check.ts). */
  async checkDivergence (runDir: string, datasetDir?: string, runtime?: string, checkpointLayout?: CheckpointLayout): Promise<DivergenceOutcome> {
    this.use(runtime)
    return await this.request({ kind: 'divergence', runDir, datasetDir, checkpointLayout }, 'divergence check')
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
    return this.engine?.pid
  }

  stop (): void {
    const e = this.engine
    this.engine = undefined
    e?.kill('SIGTERM')
  }

  private async request<J extends EngineJob> (job: J, what: string): Promise<ResultOf<J>> {
    if (this.engine === undefined || !this.engine.alive) {
      const engine = new EngineProcess(this.log, { env: this.env, onExit: () => { if (this.engine === engine) this.engine = undefined } })
      this.engine = engine
    }
    return await this.engine.run(job, what)
  }
}
