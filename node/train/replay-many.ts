import { bytesEqual, fromHex, toHex } from '../../protocols/commit/merkle.js'
import { fastStateRoot } from './fast-commit.js'
import type { BackendChoice, BackendLog } from './backend.js'
import { openRunAt } from './run.js'
import { readCheckpoint } from './store.js'
import { Trainer } from './trainer.js'

export interface ReplayOptions { proofDir: string, step: number, datasetDir?: string, backend?: BackendChoice, log?: BackendLog }
export interface ReplayResult {
  step: number
  fromCheckpoint: number
  match: boolean
  expected: string
  actual: string
  /** first replayed step whose root differs (if any) */
  firstMismatch?: number
  seconds: number
}

/** Re-executes step `step` (1-based: state step-1 → step) from the nearest checkpoint. */
export async function replayStep (o: ReplayOptions): Promise<ReplayResult> {
  const { step, ...rest } = o
  return (await replaySteps({ ...rest, steps: [step] }))[0]
}

export interface ReplayManyOptions extends Omit<ReplayOptions, 'step'> {
  /** 1-based steps, each re-executed from the nearest checkpoint before it (a verifier's sample) */
  steps: number[]
  /** called after each step's replay (progress) */
  onResult?: (r: ReplayResult, done: number, total: number) => void
}

/**
 * Replays several sampled steps in one engine with one trainer: the run, the
 * dataset and the model are set up once (≈ 0.1 s per replay saved), a sampled
 * step later in the interval the previous replay stopped in continues from
 * there, and state roots are computed only around each sampled step. Stops at
 * the first mismatch, as a verifier needs only the first bad step.
 */
export async function replaySteps (o: ReplayManyOptions): Promise<ReplayResult[]> {
  const steps = [...new Set(o.steps)].sort((a, b) => a - b)
  if (steps.length === 0) throw new Error('no steps to replay')
  const { dir, program, phash, proof, ds, ref: firstRef, ck: firstCk } = await openRunAt({ ...o, step: steps[0] }, 'replay')
  if (proof.programHash !== phash) throw new Error(`proof.json is for program ${proof.programHash}, task.json hashes to ${phash}`)
  for (const s of steps) if (!Number.isInteger(s) || s < 1 || s > proof.steps) throw new Error(`step must be in [1, ${proof.steps}], got ${s}`)
  if (firstCk.manifest.stateRoot !== proof.stateRoots[firstRef.step]) throw new Error(`checkpoint ${firstRef.step} state root disagrees with the proof`)
  const trainer = await Trainer.create(program, ds)
  const results: ReplayResult[] = []
  try {
    trainer.loadState(firstCk.tensors, firstRef.step)
    let loadedFrom = firstRef.step
    // the root the previous sample ended on (a run of consecutive samples hashes each state once)
    let last: { step: number, root: string } | undefined
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
      // Only the sampled transition s-1 → s is claimed checked, so only the roots
      // at s-1 and s are computed (hashing a state costs about as much as a step):
      // if they match, the transition matches. A mismatch is then located exactly
      // by replaying the interval again with every root compared.
      const rootNow = (): string => toHex(fastStateRoot(trainer.stateTensors(), trainer.step))
      const same = (step: number, root: string): boolean => bytesEqual(fromHex(root), fromHex(proof.stateRoots[step]))
      let firstMismatch: number | undefined
      while (trainer.step < s - 1) trainer.runStep()
      const pre = trainer.step === ref.step ? proof.stateRoots[ref.step] : last?.step === trainer.step ? last.root : rootNow()
      trainer.runStep()
      let actual = rootNow()
      if (!same(s - 1, pre) || !same(s, actual)) {
        const ck = readCheckpoint(dir, ref.step, { programHash: phash, manifestHash: ref.manifestHash })
        trainer.loadState(ck.tensors, ref.step)
        while (trainer.step < s) {
          trainer.runStep()
          actual = rootNow()
          if (firstMismatch === undefined && !same(trainer.step, actual)) firstMismatch = trainer.step
        }
      }
      last = { step: s, root: actual }
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
