import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { commitSchemeOf } from '../../protocols/program/commit-scheme.js'
import type { CheckpointRef, ProofOfLearning } from '../../protocols/pol/proof.js'
import { programHash, rootEveryOf, type TaskProgram } from '../../protocols/program/program.js'
import { initBackend, type BackendChoice, type BackendLog } from './backend.js'
import { datasetBatches, servedRunIn, type BatchSource, type ServedRun } from './batch-source.js'
import type { Dataset } from './dataset.js'
import { cachedDatasetFor } from './dataset-cache.js'
import { readCheckpoint, readJson, readProgram, readProof } from './store.js'
import { Trainer } from './trainer.js'
import { tapeStep, type StepTape } from './tape-recorder.js'

// A finished run's directory opened again for re-execution (replay, taping,
// dispute taping): its program, proof, dataset and the checkpoint a step
// starts from.

export interface RunAtOptions { proofDir: string, step: number, datasetDir?: string, backend?: BackendChoice, log?: BackendLog }

/** A run directory opened at step `step` (1-based): its program, proof, dataset and the nearest checkpoint before the step. */
export interface RunAt {
  dir: string
  program: TaskProgram
  phash: string
  proof: ProofOfLearning
  ref: CheckpointRef
  ds: Dataset
  /** the batch bytes: the dataset's rows, or the rows served on chain that the directory holds */
  batches: BatchSource
  /** the served rows, when the batches are theirs */
  served?: ServedRun
  ck: ReturnType<typeof readCheckpoint>
}

/** A run directory opened for re-execution: its program, proof and dataset, on the task's runtime. */
export type OpenRun = Omit<RunAt, 'ref' | 'ck'>

/**
 * What replay, taping and dispute taping share: open the run, check the runtime, load the dataset.
 * A directory holding served rows (batch-source.ts SERVED_ROWS_FILE) is replayed from them, not from a dataset directory.
 */
export async function openRun (o: Omit<RunAtOptions, 'step'>, what: string): Promise<OpenRun> {
  const dir = resolve(o.proofDir)
  const program = readProgram(join(dir, 'task.json'))
  const phash = programHash(program)
  const proof: ProofOfLearning = readProof(dir, rootEveryOf(program))
  const run = existsSync(join(dir, 'run.json')) ? readJson(join(dir, 'run.json'), 'run info') as { datasetDir?: string } : {}
  const backend = await initBackend(o.backend ?? 'auto', program.runtime, o.log)
  if (backend.runtime !== program.runtime) throw new Error(`${what} needs the task's runtime ${program.runtime}, but backend ${backend.name} implements ${backend.runtime}`)
  const served = program.dataset.kind === 'idx' ? servedRunIn(dir, program.dataset, program) : undefined
  if (served !== undefined) return { dir, program, phash, proof, ds: served.ds, batches: served.batches, served }
  const ds = cachedDatasetFor(program.dataset, o.datasetDir ?? run.datasetDir)
  return { dir, program, phash, proof, ds, batches: datasetBatches(ds) }
}

/** The checkpoint a re-execution of 1-based step `step` starts from: the latest at or before step - 1. */
export function checkpointBefore (proof: ProofOfLearning, step: number): CheckpointRef {
  // a diverged proof's last step (steps + 1) is taped too: it ends at its divergence point
  const last = proof.steps + (proof.divergence !== undefined ? 1 : 0)
  if (!Number.isInteger(step) || step < 1 || step > last) throw new Error(`step must be in [1, ${last}], got ${step}`)
  const ref = proof.checkpoints.filter(c => c.step <= step - 1).pop()
  if (ref === undefined) throw new Error(`no checkpoint at or before step ${step - 1}`)
  return ref
}

/** openRun, then the nearest checkpoint before `o.step`. */
export async function openRunAt (o: RunAtOptions, what: string): Promise<RunAt> {
  const r = await openRun(o, what)
  const ref = checkpointBefore(r.proof, o.step)
  const ck = readCheckpoint(r.dir, ref.step, { programHash: r.phash, manifestHash: ref.manifestHash }, { stateCommitment: commitSchemeOf(r.program) })
  return { ...r, ref, ck }
}

export interface TapeOptions { proofDir: string, step: number, datasetDir?: string, backend?: BackendChoice, log?: BackendLog }

/** Op tape of step `step` (1-based) of a run, re-executed from the nearest checkpoint. */
export async function tapeRunStep (o: TapeOptions): Promise<StepTape> {
  const { program, ref, ds, batches, ck } = await openRunAt(o, 'taping')
  const trainer = await Trainer.create(program, ds, batches)
  try {
    trainer.loadState(ck.tensors, ref.step)
    while (trainer.step < o.step - 1) trainer.runStep()
    return tapeStep(trainer)
  } finally {
    trainer.dispose()
  }
}
