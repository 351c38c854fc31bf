import { bytesEqual, fromHex, toHex } from '../../protocols/commit/merkle.js'
import { fastStateRoot } from './fast-commit.js'
import { openRunAt, type ReplayOptions, type ReplayResult } from './run.js'
import { readCheckpoint } from './store.js'
import { Trainer } from './trainer.js'

export interface ReplayManyOptions extends Omit<ReplayOptions, 'step'> {
  /** 1-based steps, each re-executed from the nearest checkpoint before it (a verifier's sample) */
  steps: number[]
  /** called after each step's replay (progress) */
  onResult?: (r: ReplayResult, done: number, total: number) => void
}

/**
 * Replays several steps in one engine with one trainer: the run, the dataset
 * and the model are set up once (≈ 0.1 s per replay saved), and a sampled step
 * later in the interval the previous replay stopped in continues from there
 * instead of reloading the checkpoint. Stops at the first mismatch, as a
 * verifier needs only the first bad step.
 */
export async function replaySteps (o: ReplayManyOptions): Promise<ReplayResult[]> {
  const steps = [...new Set(o.steps)].sort((a, b) => a - b)
  if (steps.length === 0) throw new Error('no steps to replay')
  const { dir, program, phash, proof, ds } = await openRunAt({ ...o, step: steps[0] }, 'replay')
  if (proof.programHash !== phash) throw new Error(`proof.json is for program ${proof.programHash}, task.json hashes to ${phash}`)
  for (const s of steps) if (!Number.isInteger(s) || s < 1 || s > proof.steps) throw new Error(`step must be in [1, ${proof.steps}], got ${s}`)
  const trainer = await Trainer.create(program, ds)
  const results: ReplayResult[] = []
  try {
    let loadedFrom = -1
    for (const s of steps) {
      const t0 = performance.now()
      const ref = proof.checkpoints.filter(c => c.step <= s - 1).pop()
      if (ref === undefined) throw new Error(`no checkpoint at or before step ${s - 1}`)
      // continue within the same interval when the trainer already stands there, with every root so far matching
      if (loadedFrom !== ref.step || trainer.step > s - 1) {
        const ck = readCheckpoint(dir, ref.step, { programHash: phash, manifestHash: ref.manifestHash })
        if (ck.manifest.stateRoot !== proof.stateRoots[ref.step]) throw new Error(`checkpoint ${ref.step} state root disagrees with the proof`)
        trainer.loadState(ck.tensors, ref.step)
        loadedFrom = ref.step
      }
      let firstMismatch: number | undefined
      let actual = trainer.step === s ? proof.stateRoots[s] : ''
      while (trainer.step < s) {
        trainer.runStep()
        actual = toHex(fastStateRoot(trainer.stateTensors(), trainer.step))
        if (firstMismatch === undefined && !bytesEqual(fromHex(actual), fromHex(proof.stateRoots[trainer.step]))) firstMismatch = trainer.step
      }
      const expected = proof.stateRoots[s]
      const r: ReplayResult = { step: s, fromCheckpoint: ref.step, match: actual === expected, expected, actual, firstMismatch, seconds: (performance.now() - t0) / 1000 }
      results.push(r)
      o.onResult?.(r, results.length, steps.length)
      if (!r.match || r.firstMismatch != null) break
    }
    return results
  } finally {
    trainer.dispose()
  }
}
