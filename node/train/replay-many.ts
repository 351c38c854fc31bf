import { bytesEqual, fromHex, toHex } from '../../protocols/commit/merkle.js'
import { fastStateRoot } from './fast-commit.js'
import type { TensorData } from '../../protocols/commit/tensor.js'
import type { CheckpointRef } from '../../protocols/pol/proof.js'
import type { BackendChoice, BackendLog } from './backend.js'
import { checkpointBefore, openRun } from './run.js'
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

/**
 * A checkpoint the replay needs cannot be used: missing, corrupt, or not the
 * state the proof commits at its step. For a verifier that is a data-availability
 * problem of the solver's (docs/disputes.md, "Withheld checkpoints"), not a wrong step.
 */
export class CheckpointUnusable extends Error {
  constructor (readonly step: number, readonly reason: string) {
    super(`checkpoint ${step} cannot be replayed from: ${reason}`)
    this.name = 'CheckpointUnusable'
  }
}

export interface ReplayManyOptions extends Omit<ReplayOptions, 'step'> {
  /** 1-based steps, each re-executed from the nearest checkpoint before it (a verifier's sample) */
  steps: number[]
  /** called after each step's replay (progress) */
  onResult?: (r: ReplayResult, done: number, total: number) => void
}

/**
 * Replays several sampled steps in one engine with one trainer: the run, the
 * dataset and the model are set up once (≈ 0.1 s per replay saved), a sample
 * continues from where the previous one ended when that is at or after its own
 * checkpoint (so replaying every step loads one checkpoint), and state roots
 * are computed only around each sampled step. Stops at the first mismatch, as
 * a verifier needs only the first bad step. Throws CheckpointUnusable when a
 * checkpoint it needs is missing, corrupt or not the committed state.
 */
export async function replaySteps (o: ReplayManyOptions): Promise<ReplayResult[]> {
  const steps = [...new Set(o.steps)].sort((a, b) => a - b)
  if (steps.length === 0) throw new Error('no steps to replay')
  const { dir, program, phash, proof, ds } = await openRun(o, 'replay')
  if (proof.programHash !== phash) throw new Error(`proof.json is for program ${proof.programHash}, task.json hashes to ${phash}`)
  for (const s of steps) checkpointBefore(proof, s)
  // A checkpoint is loaded with only its manifest and data hash checked: the
  // replay hashes the state at s-1 anyway, and a state whose root is the
  // committed root of s-1 is a valid start for step s however it was obtained.
  // Only when a root disagrees is the checkpoint checked in full (each tensor's
  // commitment, its state root = the proof's root at its step), to tell a bad
  // checkpoint (a data-availability problem) from a bad step.
  const load = (ref: CheckpointRef, full: boolean): TensorData[] => {
    let ck: ReturnType<typeof readCheckpoint>
    try {
      ck = readCheckpoint(dir, ref.step, { programHash: phash, manifestHash: ref.manifestHash }, { commitments: full })
    } catch (e) {
      throw new CheckpointUnusable(ref.step, (e as Error).message)
    }
    if (ck.manifest.step !== ref.step) throw new CheckpointUnusable(ref.step, `the checkpoint is of step ${ck.manifest.step}`)
    if (ck.manifest.stateRoot !== proof.stateRoots[ref.step]) throw new CheckpointUnusable(ref.step, `its state root is not the proof's root of step ${ref.step}`)
    return ck.tensors
  }
  const trainer = await Trainer.create(program, ds)
  const results: ReplayResult[] = []
  try {
    // the root the previous sample ended on (a run of consecutive samples hashes each state once)
    let last: { step: number, root: string } | undefined
    for (const s of steps) {
      const t0 = performance.now()
      const ref = checkpointBefore(proof, s)
      // continue from where the previous sample ended (its roots matched) when that
      // is at or after this sample's checkpoint; protocols/verification/sample.ts
      // checkpointLoads lists the checkpoints this rule loads (a verifier fetches those)
      if (!(last !== undefined && ref.step <= last.step && last.step <= s - 1)) {
        trainer.loadState(load(ref, false), ref.step)
        last = undefined
      }
      // Only the sampled transition s-1 → s is claimed checked, so only the roots
      // at s-1 and s are computed (hashing a state costs about half a step):
      // if they match, the transition matches. A mismatch before s-1 is located
      // exactly by replaying from the checkpoint again with every root compared.
      const rootNow = (): string => toHex(fastStateRoot(trainer.stateTensors(), trainer.step))
      const same = (step: number, root: string): boolean => bytesEqual(fromHex(root), fromHex(proof.stateRoots[step]))
      let firstMismatch: number | undefined
      while (trainer.step < s - 1) trainer.runStep()
      const pre = last?.step === trainer.step ? last.root : rootNow()
      trainer.runStep()
      let actual = rootNow()
      if (same(s - 1, pre) && !same(s, actual)) {
        // the replay stood on the committed state s-1: step s itself differs
        firstMismatch = s
      } else if (!same(s - 1, pre)) {
        // somewhere between the checkpoint and s-1. Throws CheckpointUnusable when
        // the checkpoint is not the committed state; otherwise finds the first bad step
        trainer.loadState(load(ref, true), ref.step)
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
