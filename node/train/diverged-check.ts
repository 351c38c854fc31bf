import { bytesEqual, fromHex } from '../../protocols/commit/merkle.js'
import type { TensorData } from '../../protocols/commit/tensor.js'
import { firstNaNIndex, firstNaNOf } from '../../protocols/dispute/nan.js'
import { rootAtStep } from '../../protocols/pol/proof.js'
import type { BackendChoice, BackendLog } from './backend.js'
import { commitSchemeOf } from '../../protocols/program/commit-scheme.js'
import { fastStateRootUnder } from './fast-commit.js'
import { CheckpointUnusable, loadByProgram } from './replay-many.js'
import { openRun } from './run.js'
import { readCheckpoint } from './store.js'
import { tapeStep } from './tape-recorder.js'
import { Trainer } from './trainer.js'

// A verifier's check of a diverged proof's last step (docs/disputes.md,
// "NaN: a NaN ends the run"): step k is re-run from the checkpoint of state
// k under the tape recorder; the proof stands only if state k holds no NaN and the
// first op output holding one is the proof's divergence point. State k is the
// proof's last leaf (leaf ⌈k / m⌉ with a root every m steps: k is always committed).

export interface DivergenceCheck {
  /** 1-based engine step of the diverged transition (k + 1) */
  step: number
  ok: boolean
  /** where our tape of the step holds its first NaN (output > 0: another output than 0), if anywhere */
  found?: { entry: number, flat: number, output: number }
  /** state k itself holds a NaN: state tensor t, element flat */
  stateNan?: { t: number, flat: number }
  reason: string
}

export async function checkDivergence (o: { proofDir: string, datasetDir?: string, backend?: BackendChoice, log?: BackendLog, checkpointLayout?: 'manifest' | 'program' }): Promise<DivergenceCheck> {
  const { dir, program, phash, proof, ds, batches } = await openRun(o, 'divergence check')
  const d = proof.divergence
  if (d === undefined) throw new Error('the proof did not diverge')
  const k = proof.steps
  const ref = proof.checkpoints.find(c => c.step === k)
  if (ref === undefined) throw new CheckpointUnusable(k, 'a diverged proof must publish a checkpoint of its last state')
  const root = rootAtStep(proof, k)
  const trainer = await Trainer.create(program, ds, batches)
  try {
    let tensors: TensorData[]
    if (o.checkpointLayout === 'program') tensors = loadByProgram(dir, ref, true, trainer, root)
    else {
      try {
        tensors = readCheckpoint(dir, k, { programHash: phash, manifestHash: ref.manifestHash }, { stateCommitment: commitSchemeOf(program) }).tensors
      } catch (e) { throw new CheckpointUnusable(k, (e as Error).message) }
      if (!bytesEqual(fastStateRootUnder(commitSchemeOf(program), tensors, k), fromHex(root))) throw new CheckpointUnusable(k, `its state root is not the proof's root of step ${k}`)
    }
    const step = k + 1
    for (let t = 0; t < tensors.length; t++) {
      const flat = firstNaNIndex(tensors[t].dtype, tensors[t].values)
      if (flat >= 0) return { step, ok: false, stateNan: { t, flat }, reason: `state ${k} holds a NaN (tensor ${t}, element ${flat})` }
    }
    trainer.loadState(tensors, k)
    const found = firstNaNOf(tapeStep(trainer).values.map(v => v.outputs))
    if (found === undefined) return { step, ok: false, reason: `step ${step} produces no NaN` }
    const ok = found.output === 0 && found.entry === d.entry && found.flat === d.flat
    return { step, ok, found, reason: ok ? `step ${step} first produces a NaN at entry ${d.entry}, element ${d.flat}, as the proof says` : `step ${step} first produces a NaN at entry ${found.entry}, element ${found.flat}, not at entry ${d.entry}, element ${d.flat}` }
  } finally {
    trainer.dispose()
  }
}
