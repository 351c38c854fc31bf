import { dirname } from 'node:path'
import { commitTensor } from '../../protocols/commit/tensor.js'
import { datasetRootHex, disputeSkeletonRoot } from '../../protocols/dispute/index.js'
import { initBackend, type BackendLog } from '../train/backend.js'
import { servedRunIn } from '../train/batch-source.js'
import { cachedDatasetFor } from '../train/dataset-cache.js'
import { datasetRootOfRows } from '../train/dataset-root.js'
import { datasetCommitment, labelRows, loadDatasetFor } from '../train/dataset.js'
import { checkDivergence } from '../train/diverged-check.js'
import { CheckpointUnusable, replaySteps } from '../train/replay-many.js'
import { evaluateSaved, trainTask } from '../train/run.js'
import { readProgram } from '../train/store.js'
import { tapeStep } from '../train/tape-recorder.js'
import { Trainer } from '../train/trainer.js'
import type { CommitmentsJob, EngineJob, JobEvent, JobResults, ResultOf, TrainJob } from './protocol.js'
import { tapeForDispute } from './tape-job.js'
import { segmentRoots } from '../train/segment-roots.js'

// The engine's work, one function per kind of job (protocol.ts). It loads
// TensorFlow.js: a peer runs it in an engine process (engine-server.ts), the
// CLI in its own process. What a job does while it runs goes to `emit`.

export type Emit = (e: JobEvent) => void

/** Runs one job to its result; its progress, checkpoints and log lines go to `emit`. */
export async function runJob<J extends EngineJob> (job: J, emit: Emit): Promise<ResultOf<J>> {
  return await (JOBS[job.kind] as unknown as (j: J, emit: Emit) => Promise<ResultOf<J>>)(job, emit)
}

const logTo = (emit: Emit): BackendLog => ({ info: message => emit({ type: 'log', level: 'info', message }), warn: message => emit({ type: 'log', level: 'warn', message }) })

/** A checkpoint that cannot be used is an answer (a data-availability matter), not a failure of the job. */
async function orUnavailable<T> (f: () => Promise<T>): Promise<T | { unavailable: { step: number, reason: string } }> {
  try {
    return await f()
  } catch (e) {
    if (e instanceof CheckpointUnusable) return { unavailable: { step: e.step, reason: e.reason } }
    throw e
  }
}

async function train (j: TrainJob, emit: Emit): Promise<JobResults['train']> {
  const f = j.faults
  return await trainTask({
    program: readProgram(j.taskFile),
    outDir: j.outDir,
    datasetDir: j.datasetDir,
    backend: j.backend ?? 'auto',
    resume: j.resume === true,
    until: j.until,
    evaluate: j.evaluate,
    ...(j.plain === true ? { verifiable: false } : {}),
    log: logTo(emit),
    onProgress: p => emit({ type: 'progress', ...p }),
    onCheckpoint: step => emit({ type: 'checkpoint', step }),
    ...(f?.nanThrough === true ? { haltOnNaN: false } : {}),
    ...(f?.fakeDivergence !== undefined ? { fakeDivergence: f.fakeDivergence } : {}),
    ...(f?.forcedSteps !== undefined ? { forcedSteps: f.forcedSteps } : {}),
    faults: { ops: f?.ops ?? [], weights: f?.weights ?? [] }
  })
}

/** What disputes prove against (docs/disputes.md): the skeleton with constants, inputs and labels. */
async function commitments (j: CommitmentsJob): Promise<JobResults['commitments']> {
  const program = readProgram(j.taskFile)
  const ds = loadDatasetFor(program.dataset, j.datasetDir)
  await initBackend('auto', program.runtime)
  const trainer = await Trainer.create(program, ds)
  const tape = tapeStep(trainer)
  trainer.dispose()
  if (j.skeletonOnly === true) return { skeletonRoot: disputeSkeletonRoot(tape.entries), datasetRoot: '' }
  const all = new Uint32Array(ds.trainSize).map((_, i) => i)
  const yRoot = commitTensor({ shape: [ds.trainSize, ds.classes], dtype: 'float32', values: labelRows(ds, all) }).root
  return { skeletonRoot: disputeSkeletonRoot(tape.entries), datasetRoot: datasetRootHex(datasetCommitment(ds).root, yRoot) }
}

const JOBS: { [K in keyof JobResults]: (j: Extract<EngineJob, { kind: K }>, emit: Emit) => Promise<JobResults[K]> } = {
  train,
  evaluate: async (j, emit) => await evaluateSaved({ modelDir: j.modelDir, datasetDir: j.datasetDir, backend: j.backend, log: logTo(emit) }),
  commitments,
  tape: async j => await tapeForDispute({
    runDir: j.runDir, step: j.step, out: j.out, datasetDir: j.datasetDir, datasetProofs: j.datasetProofs, faults: j.faults
  }),
  warm: async j => {
    const program = readProgram(j.taskFile)
    const backend = await initBackend('auto', program.runtime)
    if (backend.runtime !== program.runtime) throw new Error(`this engine runs ${backend.runtime}, the task needs ${program.runtime}`)
    // a verifier replaying from rows served on chain has no dataset files to load
    const served = program.dataset.kind === 'idx' ? servedRunIn(dirname(j.taskFile), program.dataset, program) : undefined
    if (served !== undefined) return { backend: backend.name, datasetRows: served.ds.trainSize }
    const ds = cachedDatasetFor(program.dataset, j.datasetDir)
    return { backend: backend.name, datasetRows: ds.trainSize, ...(j.datasetRoot === true ? { datasetRoot: datasetRootOfRows(ds) } : {}) }
  },
  replay: async j => await orUnavailable(
    async () => ({ results: await replaySteps({ proofDir: j.runDir, steps: j.steps, datasetDir: j.datasetDir, checkpointLayout: j.checkpointLayout }) })
  ),
  divergence: async j => await orUnavailable(
    async () => ({ check: await checkDivergence({ proofDir: j.runDir, datasetDir: j.datasetDir, checkpointLayout: j.checkpointLayout }) })
  ),
  'segment-roots': async j => await segmentRoots({ proofDir: j.runDir, first: j.first, length: j.length, datasetDir: j.datasetDir, faults: j.faults })
}
