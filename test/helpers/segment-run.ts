import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { commitTensor } from '../../protocols/commit/tensor.js'
import { datasetRootHex, disputeSkeletonRoot } from '../../protocols/dispute/index.js'
import { manifestHash, type CheckpointManifest } from '../../protocols/pol/checkpoint.js'
import { buildProof, validateProof, type ProofOfLearning } from '../../protocols/pol/proof.js'
import { committedSteps } from '../../protocols/pol/segments.js'
import { programHash, type TaskProgram } from '../../protocols/program/program.js'
import { RUN_INDEX_VERSION, type RunIndex } from '../../protocols/verification/run-index.js'
import { datasetCommitment, labelRows, type Dataset } from '../../node/train/dataset.js'
import { trainTask } from '../../node/train/run.js'
import { tapeStep } from '../../node/train/tape-recorder.js'
import { Trainer } from '../../node/train/trainer.js'
import type { TrainFaults } from '../../node/train/fault-spec.js'
import type { ShardService } from '../../node/shards/index.js'

// TEST SCAFFOLDING until the trainer writes m-spaced roots: a run of a
// program naming rootEvery m > 1, made from a run of the same program at
// m = 1 (train refuses m > 1). An honest (or identically faulted) run's
// states do not depend on m, so the m > 1 run directory is the m = 1 one
// with the program's rootEvery, its checkpoints' manifests naming that
// program, and a proof that keeps every m-th root (and the last).

const ckDir = (runDir: string, step: number): string => join(runDir, 'checkpoints', `step-${String(step).padStart(8, '0')}`)

/**
 * Trains `program` without its rootEvery into `scratch`, then writes the m > 1 run directory `runDir`;
 * `forcedStep`: a forced error's marked leaf (its post-state must be a multiple of m).
 */
export async function trainWithRootEvery (
  program: TaskProgram, ds: Dataset, scratch: string, runDir: string, faults?: TrainFaults, forcedStep?: number
): Promise<ProofOfLearning> {
  const m = program.rootEvery ?? 1
  const { rootEvery: _m, info: _i, ...perStep } = program as TaskProgram & { info?: unknown }
  await trainTask({
    program: perStep, outDir: scratch, dataset: ds, hashWorker: false, evaluate: false,
    ...(faults !== undefined ? { faults } : {}), ...(forcedStep !== undefined ? { forcedSteps: [forcedStep] } : {})
  })
  const p1 = validateProof(JSON.parse(readFileSync(join(scratch, 'proof.json'), 'utf8')))
  rmSync(runDir, { recursive: true, force: true })
  cpSync(scratch, runDir, { recursive: true })
  const phash = programHash(program)
  const { info: _info, ...bare } = program as TaskProgram & { info?: unknown }
  writeFileSync(join(runDir, 'task.json'), JSON.stringify(bare, null, 2) + '\n')
  const checkpoints = p1.checkpoints.map(c => {
    const file = join(ckDir(runDir, c.step), 'manifest.json')
    const manifest = { ...(JSON.parse(readFileSync(file, 'utf8')) as CheckpointManifest), programHash: phash }
    writeFileSync(file, JSON.stringify(manifest))
    return { step: c.step, manifestHash: manifestHash(manifest) }
  })
  const roots = committedSteps(p1.steps, m).map(s => p1.stateRoots[s])
  const proof = buildProof(phash, p1.runtime, roots, checkpoints, { rootEvery: m, steps: p1.steps })
  writeFileSync(join(runDir, 'proof.json'), JSON.stringify(proof, null, 2) + '\n')
  return validateProof(JSON.parse(readFileSync(join(runDir, 'proof.json'), 'utf8')))
}

/** What a submitter commits for a program (the engine's commitments job, in process). */
export async function commitmentsOf (program: TaskProgram, ds: Dataset): Promise<{ skeletonRoot: string, datasetRoot: string }> {
  const trainer = await Trainer.create(program, ds)
  const tape = tapeStep(trainer)
  trainer.dispose()
  const all = new Uint32Array(ds.trainSize).map((_, i) => i)
  const yRoot = commitTensor({ shape: [ds.trainSize, ds.classes], dtype: 'float32', values: labelRows(ds, all) }).root
  return { skeletonRoot: '0x' + disputeSkeletonRoot(tape.entries), datasetRoot: '0x' + datasetRootHex(datasetCommitment(ds).root, yRoot) }
}

/** The solver's run published as shards (as node/roles publishRun, without erasure coding): the run index CID. */
export async function publishRunIndex (shards: ShardService, taskId: number, runDir: string, proof: ProofOfLearning): Promise<string> {
  const reason = `task-${taskId}`
  const add = async (file: string, name: string, checkpoint = false): Promise<string> =>
    (await shards.addFile(file, { name, kind: checkpoint ? 'checkpoint' : 'file' }, { reason, byReference: checkpoint, provide: !checkpoint })).cid
  const checkpoints: RunIndex['checkpoints'] = []
  for (const c of proof.checkpoints) {
    checkpoints.push({ step: c.step, manifest: await add(join(ckDir(runDir, c.step), 'manifest.json'), `ckpt-${c.step}-manifest.json`, true), data: await add(join(ckDir(runDir, c.step), 'state.bin'), `ckpt-${c.step}-state.bin`, true) })
  }
  const index: RunIndex = {
    version: RUN_INDEX_VERSION,
    taskId,
    programHash: proof.programHash,
    proofRoot: proof.proofRoot,
    program: await add(join(runDir, 'task.json'), 'task.json'),
    proof: await add(join(runDir, 'proof.json'), 'proof.json'),
    checkpoints
  }
  return (await shards.addBytes(new TextEncoder().encode(JSON.stringify(index)), { name: `task-${taskId}-run-index.json`, kind: 'file' }, { reason })).cid
}
