import type { BackendChoice } from '../train/backend-choice.js'
import type { DivergenceCheck } from '../train/diverged-check.js'
import type { OpFault } from '../train/fault-spec.js'
import type { ReplayResult } from '../train/replay-many.js'
import type { SegmentRoots } from '../train/segment-roots.js'
import type { EvaluateResult, TrainResult } from '../train/run.js'

// The one way into the training engine. A host (a peer's ports, the dispute
// service, the CLI) hands the engine a job and gets back typed events: what
// the job is doing (progress, checkpoints written, log lines) and then its
// result or its error. A peer runs the engine in child processes and speaks
// these messages over the IPC channel (engine.ts, warm-engine.ts); the CLI
// runs the same jobs in its own process (jobs.ts) and prints from the same
// events. Every message is checked on receipt (protocol-check.ts).

export type CheckpointLayout = 'manifest' | 'program'

/** FAULT INJECTION and Truebit forced errors for a training or tape job (node/train/fault.ts, node/dispute/faults.ts). */
export interface EngineFaults {
  /** corrupt the first output of kernel `kernel` at 1-based step `step` */
  ops: OpFault[]
  /** perturb a weight after these 1-based steps (0: the initial state) */
  weights: number[]
  /** train on through a NaN and write a complete proof (an honest run ends at its first NaN) */
  nanThrough?: boolean
  /** stop before this 1-based step and commit a diverged proof with a made-up divergence point */
  fakeDivergence?: number
  /** Truebit forced errors at on-chain steps f: the leaf of each state f + 1 is committed marked (protocols/dispute/forced-leaf.ts), training goes on from the honest state */
  forcedSteps?: number[]
}

export function anyEngineFault (f: EngineFaults): boolean {
  return f.ops.length > 0 || f.weights.length > 0 || f.nanThrough === true || f.fakeDivergence !== undefined || (f.forcedSteps?.length ?? 0) > 0
}

/** Train a task program into a run directory (checkpoints, proof.json, model/). */
export interface TrainJob {
  kind: 'train'
  taskFile: string
  outDir: string
  resume?: boolean
  datasetDir?: string
  backend?: BackendChoice
  /** stop after this many completed steps */
  until?: number
  /** false: no test-set evaluation at the end */
  evaluate?: boolean
  /** plain training: no state roots, checkpoints or proof */
  plain?: boolean
  faults?: EngineFaults
}

/** Test-set accuracy (a GPT: held-out loss) of a saved model. */
export interface EvaluateJob { kind: 'evaluate', modelDir: string, datasetDir?: string, backend?: BackendChoice }

/** What a submitter commits on chain for a task: the skeleton root of a step's op tape and the dataset root. */
/** skeletonOnly: the dataset's root is known already (datasetRoot comes back empty) */
export interface CommitmentsJob { kind: 'commitments', taskFile: string, datasetDir?: string, skeletonOnly?: boolean }

/** Re-execute 1-based step `step` of a run from the nearest checkpoint and write its op tape with every value (tape-file.ts). */
export interface TapeJob {
  kind: 'tape'
  runDir: string
  step: number
  out: string
  datasetDir?: string
  /** challenger: include Merkle proofs of the batch rows (data claims) */
  datasetProofs?: boolean
  faults?: Pick<EngineFaults, 'ops' | 'weights'>
}

/** Every state root of one segment of a run (docs/disputes.md "Segments"): states first … first + length, re-executed from the checkpoint before it. */
export interface SegmentRootsJob {
  kind: 'segment-roots'
  runDir: string
  first: number
  length: number
  datasetDir?: string
  faults?: Pick<EngineFaults, 'ops' | 'weights'>
}

/** Load the task's backend and dataset, so that the next replay does not pay for them. */
/** `datasetRoot`: also compute the dataset's dataset_root (a verifier checks a dataset it fetched against the task's). */
export interface WarmJob { kind: 'warm', taskFile: string, datasetDir?: string, datasetRoot?: boolean }

/** Replay sampled 1-based steps of a run directory; stops at the first mismatch or unusable checkpoint. */
export interface ReplayJob { kind: 'replay', runDir: string, steps: number[], datasetDir?: string, checkpointLayout?: CheckpointLayout }

/** Re-run a diverged proof's last step from its checkpoint and find its first NaN. */
export interface DivergenceJob { kind: 'divergence', runDir: string, datasetDir?: string, checkpointLayout?: CheckpointLayout }

export type EngineJob = TrainJob | EvaluateJob | CommitmentsJob | TapeJob | WarmJob | ReplayJob | DivergenceJob | SegmentRootsJob
export type JobKind = EngineJob['kind']
export const JOB_KINDS: readonly JobKind[] = ['train', 'evaluate', 'commitments', 'tape', 'warm', 'replay', 'divergence', 'segment-roots']

export interface Commitments { skeletonRoot: string, datasetRoot: string }
export interface TapeSummary { step: number, entries: number, bytes: number, fromCheckpoint: number, stateRootAfter: string, seconds: number }
/** `datasetRoot` (hex): when asked for, of the dataset's files; absent when the task directory holds served rows (checked against the root already) */
export interface WarmResult { backend: string, datasetRows: number, datasetRoot?: string }
/** A checkpoint that cannot be used (missing, corrupt, not the committed state): a data-availability matter. */
export interface Unavailable { step: number, reason: string }
export type ReplayOutcome = { results: ReplayResult[], unavailable?: undefined } | { unavailable: Unavailable, results?: undefined }
export type DivergenceOutcome = { check: DivergenceCheck, unavailable?: undefined } | { unavailable: Unavailable, check?: undefined }

/** The result of each kind of job. */
export interface JobResults {
  train: TrainResult
  evaluate: EvaluateResult
  commitments: Commitments
  tape: TapeSummary
  warm: WarmResult
  replay: ReplayOutcome
  divergence: DivergenceOutcome
  'segment-roots': SegmentRoots
}
export type ResultOf<J extends EngineJob> = JobResults[J['kind']]

// ---- events while a job runs ----

/** Training progress, at most every half second and at the last step. */
export interface ProgressEvent { type: 'progress', step: number, steps: number, loss: number, samplesPerSec: number, etaSec: number }
/** A checkpoint of state `step` is on disk (with the roots before it). */
export interface CheckpointEvent { type: 'checkpoint', step: number }
/** A line the engine logs (backend choice, resume decisions, FAULT INJECTION warnings). */
export interface LogEvent { type: 'log', level: 'info' | 'warn', message: string }
export type JobEvent = ProgressEvent | CheckpointEvent | LogEvent

// ---- on the wire (host ⇄ engine process) ----

/** host → engine */
export type EngineRequest = EngineJob & { id: number }

/** engine → host: a job's event, its result or its error; `ready` once the process listens. */
export type EngineMessage =
  | { type: 'ready' }
  | (JobEvent & { id: number })
  | { type: 'done', id: number, kind: JobKind, result: JobResults[JobKind] }
  | { type: 'error', id: number, message: string }

/** A message that is not one of the above (or a result of the wrong shape). */
export class EngineProtocolError extends Error {
  constructor (message: string) {
    super(`engine protocol: ${message}`)
    this.name = 'EngineProtocolError'
  }
}
