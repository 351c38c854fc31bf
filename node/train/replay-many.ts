import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { bytesEqual, fromHex, toHex } from '../../protocols/commit/merkle.js'
import { commitSchemeOf } from '../../protocols/program/commit-scheme.js'
import { fastStateRootUnder } from './fast-commit.js'
import { dtypeBytes, sizeOf, valuesFromBytes, type TensorData } from '../../protocols/commit/tensor.js'
import { rootAtStep, rootEveryOfProof, type CheckpointRef } from '../../protocols/pol/proof.js'
import { committedStep, segmentOfStep } from '../../protocols/pol/segments.js'
import type { BackendChoice, BackendLog } from './backend.js'
import { checkpointBefore, openRun } from './run.js'
import { checkpointDir, readCheckpoint } from './store.js'
import { Trainer } from './trainer.js'
import { NanWatch } from './nan-watch.js'
import { firstNaNIndex } from '../../protocols/dispute/nan.js'
import { isForcedLeafOf } from '../../protocols/dispute/forced-leaf.js'

export interface ReplayOptions { proofDir: string, step: number, datasetDir?: string, backend?: BackendChoice, log?: BackendLog }
export interface ReplayResult {
  /** 1-based: the step whose committed root was compared (with roots every m > 1 steps, the end c_{j+1} of the segment) */
  step: number
  /** roots every m > 1 steps: the replayed segment j (steps c_j + 1 … c_{j+1}); absent at m = 1, where a segment is a step */
  segment?: number
  fromCheckpoint: number
  match: boolean
  expected: string
  actual: string
  /** first replayed committed step whose root differs (if any); at m > 1 a committed step (c_j or c_{j+1} when the replay stood on c_j): the step inside a segment is the dispute's to find */
  firstMismatch?: number
  /**
   * the unit's end `step` is committed as the forced mark of the replayed root
   * (a Truebit forced error: protocols/dispute/forced-leaf.ts). `match` is
   * false; the replay went on from the replayed (honest) state, so a later
   * mismatch is still found.
   */
  forcedStep?: number
  /** first replayed step (1-based) whose pre-state or an op output held a NaN: a complete proof commits none (docs/disputes.md, "NaN") */
  nanStep?: number
  seconds: number
}

/** Re-executes step `step` (1-based: state step-1 → step) from the nearest checkpoint; with roots every m > 1 steps, the segment holding it. */
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
  /**
   * 1-based steps, each re-executed from the nearest checkpoint before it (a verifier's sample).
   * With roots every m > 1 steps a step names the segment j holding it (a verifier names
   * a segment by its end c_{j+1}): the segment is replayed whole and its committed roots at
   * c_j and c_{j+1} compared.
   */
  steps: number[]
  /** called after each step's replay (progress) */
  onResult?: (r: ReplayResult, done: number, total: number) => void
  /**
   * Where a checkpoint's layout comes from: its manifest.json (default), or
   * the program's state tensors ('program'), for a verifier that fetched only
   * each checkpoint's data (state.bin) — see loadByProgram.
   */
  checkpointLayout?: 'manifest' | 'program'
}

/** What a replay unit compares: the committed roots of states `from` and `to` (from = to - 1 at m = 1). */
interface Unit { from: number, to: number, segment?: number }

/** The units replaying `steps` (sorted, distinct): at m = 1 the steps themselves, else the segments holding them. */
function unitsOf (steps: number[], total: number, m: number): Unit[] {
  if (m === 1) return steps.map(s => ({ from: s - 1, to: s }))
  const js = [...new Set(steps.map(s => segmentOfStep(s - 1, total, m).j))].sort((a, b) => a - b)
  return js.map(j => ({ from: committedStep(j, total, m), to: committedStep(j + 1, total, m), segment: j }))
}

/**
 * Replays several sampled steps in one engine with one trainer: the run, the
 * dataset and the model are set up once (≈ 0.1 s per replay saved), a sample
 * continues from where the previous one ended when that is at or after its own
 * checkpoint (so replaying every step loads one checkpoint), and state roots
 * are computed only around each sampled step. Stops at the first mismatch, as
 * a verifier needs only the first bad step; a forced error's marked leaf is
 * not one (it is reported as `forcedStep` and the replay goes on from the
 * honest state the solver continued from: a cheat after it is still found). Throws CheckpointUnusable when a
 * checkpoint it needs is missing, corrupt or not the committed state.
 */
export async function replaySteps (o: ReplayManyOptions): Promise<ReplayResult[]> {
  const steps = [...new Set(o.steps)].sort((a, b) => a - b)
  if (steps.length === 0) throw new Error('no steps to replay')
  const { dir, program, phash, proof, ds, batches } = await openRun(o, 'replay')
  if (proof.programHash !== phash) throw new Error(`proof.json is for program ${proof.programHash}, task.json hashes to ${phash}`)
  for (const s of steps) {
    checkpointBefore(proof, s)
    // a diverged proof's last step has no committed root: it is checked by diverged-check.ts
    if (s > proof.steps) throw new Error(`step ${s} has no committed root to replay to (the proof has ${proof.steps} steps)`)
  }
  const m = rootEveryOfProof(proof)
  // the roots compared are under the program's scheme (docs/training.md "Chunked roots: design")
  const scheme = commitSchemeOf(program)
  const committedRoot = (step: number): string => rootAtStep(proof, step)
  // A checkpoint is loaded with only its manifest and data hash checked: the
  // replay hashes the state at s-1 anyway, and a state whose root is the
  // committed root of s-1 is a valid start for step s however it was obtained
  // (at m > 1: c_j for segment j; a checkpoint is always a committed state).
  // Only when a root disagrees is the checkpoint checked in full (each tensor's
  // commitment, its state root = the proof's root at its step), to tell a bad
  // checkpoint (a data-availability problem) from a bad step.
  const load = (ref: CheckpointRef, full: boolean): TensorData[] => {
    if (o.checkpointLayout === 'program') return loadByProgram(dir, ref, full, trainer, committedRoot(ref.step))
    let ck: ReturnType<typeof readCheckpoint>
    try {
      ck = readCheckpoint(dir, ref.step, { programHash: phash, manifestHash: ref.manifestHash }, { commitments: full, stateCommitment: scheme })
    } catch (e) {
      throw new CheckpointUnusable(ref.step, (e as Error).message)
    }
    if (ck.manifest.step !== ref.step) throw new CheckpointUnusable(ref.step, `the checkpoint is of step ${ck.manifest.step}`)
    if (ck.manifest.stateRoot !== committedRoot(ref.step)) throw new CheckpointUnusable(ref.step, `its state root is not the proof's root of step ${ref.step}`)
    return ck.tensors
  }
  const trainer = await Trainer.create(program, ds, batches)
  const results: ReplayResult[] = []
  // a NaN in a replayed state or op output: the solver should have ended its run there
  const watch = new NanWatch()
  let nanStep: number | undefined
  const runStep = (): void => {
    watch.seen = false
    trainer.runStep()
    if (watch.seen) nanStep ??= trainer.step
  }
  const loadState = (tensors: TensorData[], step: number): void => {
    if (tensors.some(t => firstNaNIndex(t.dtype, t.values) >= 0)) nanStep ??= step + 1
    trainer.loadState(tensors, step)
  }
  try {
    // the root the previous sample ended on (a run of consecutive samples hashes each state once)
    let last: { step: number, root: string } | undefined
    const units = unitsOf(steps, proof.steps, m)
    for (const { from, to, segment } of units) {
      const t0 = performance.now()
      const ref = checkpointBefore(proof, from + 1)
      // continue from where the previous sample ended (its roots matched) when that
      // is at or after this sample's checkpoint; protocols/verification/sample.ts
      // checkpointLoads lists the checkpoints this rule loads (a verifier fetches those)
      if (!(last !== undefined && ref.step <= last.step && last.step <= from)) {
        loadState(load(ref, false), ref.step)
        last = undefined
      }
      // Only the sampled unit from → to is claimed checked (the transition s-1 → s,
      // or segment j from c_j to c_{j+1}), so only the roots at its ends are computed
      // (hashing a state costs about half a step): if they match, the unit matches.
      // A mismatch before `from` is located exactly by replaying from the checkpoint
      // again with every committed root compared.
      const rootNow = (): string => toHex(fastStateRootUnder(scheme, trainer.stateTensors(), trainer.step))
      const same = (step: number, root: string): boolean => bytesEqual(fromHex(root), fromHex(committedRoot(step)))
      // a committed leaf marked as a forced error of the replayed state: that state is what the solver continued from
      const marked = (step: number, root: string): boolean => isForcedLeafOf(fromHex(committedRoot(step)), fromHex(root))
      const agrees = (step: number, root: string): boolean => same(step, root) || marked(step, root)
      const committed = (step: number): boolean => step % m === 0 || step === proof.steps
      let firstMismatch: number | undefined
      while (trainer.step < from) runStep()
      const pre = last?.step === trainer.step ? last.root : rootNow()
      while (trainer.step < to) runStep()
      let actual = rootNow()
      if (agrees(from, pre) && !agrees(to, actual)) {
        // the replay stood on the committed state `from`: this unit itself differs
        firstMismatch = to
      } else if (!agrees(from, pre)) {
        // somewhere between the checkpoint and `from`. Throws CheckpointUnusable when
        // the checkpoint is not the committed state; otherwise finds the first bad committed step
        loadState(load(ref, true), ref.step)
        while (trainer.step < to) {
          runStep()
          if (!committed(trainer.step)) continue
          actual = rootNow()
          if (firstMismatch === undefined && !agrees(trainer.step, actual)) firstMismatch = trainer.step
        }
      }
      last = { step: to, root: actual }
      const expected = committedRoot(to)
      const forced = firstMismatch === undefined && marked(to, actual)
      const r: ReplayResult = {
        step: to, ...(segment !== undefined ? { segment } : {}), fromCheckpoint: ref.step, match: actual === expected, expected, actual, firstMismatch,
        ...(forced ? { forcedStep: to } : {}),
        seconds: (performance.now() - t0) / 1000, ...(nanStep !== undefined ? { nanStep } : {})
      }
      results.push(r)
      o.onResult?.(r, results.length, units.length)
      if ((!r.match && r.forcedStep === undefined) || r.firstMismatch != null || r.nanStep != null) break
    }
    return results
  } finally {
    watch.dispose()
    trainer.dispose()
  }
}

/**
 * A checkpoint's state read from its data file alone, laid out as the
 * program's state tensors (the order, shapes and dtypes the solver's trainer
 * wrote them in: protocols/pol/checkpoint.ts buildCheckpoint). The manifest
 * adds nothing a sample's replay needs: it hashes the state at s-1 anyway,
 * and a state whose root is the committed root of s-1 is a valid start
 * however it was obtained. Saves a verifier one shard fetch per checkpoint
 * (its manifest.json: ~a quarter of the checkpoint's transfer CPU, being a
 * whole request for 2.6 kB) and the data's sha256. The full check, when a
 * root disagrees, compares the data's state root with the proof's root of
 * the checkpoint's step: unequal means a bad checkpoint (data availability),
 * equal means a bad step.
 */
export function loadByProgram (dir: string, ref: CheckpointRef, full: boolean, trainer: Trainer, committedRoot: string): TensorData[] {
  const file = join(checkpointDir(dir, ref.step), 'state.bin')
  let data: Uint8Array
  try {
    const b = readFileSync(file)
    // a plain Uint8Array view: valuesFromBytes slices, and Buffer#slice is a view, not a copy
    data = new Uint8Array(b.buffer, b.byteOffset, b.byteLength)
  } catch (e) {
    throw new CheckpointUnusable(ref.step, `checkpoint data missing: ${(e as Error).message}`)
  }
  const layout = trainer.stateLayout().map(t => ({ ...t, bytes: sizeOf(t.shape) * dtypeBytes(t.dtype) }))
  const bytes = layout.reduce((n, t) => n + t.bytes, 0)
  if (data.length !== bytes) throw new CheckpointUnusable(ref.step, `checkpoint data is ${data.length} bytes, the program's state is ${bytes}`)
  let off = 0
  const tensors = layout.map(t => {
    const values = valuesFromBytes(t.dtype, data.subarray(off, off + t.bytes))
    off += t.bytes
    return { shape: t.shape, dtype: t.dtype, values }
  })
  if (full && !bytesEqual(fastStateRootUnder(trainer.commitScheme, tensors, ref.step), fromHex(committedRoot))) {
    throw new CheckpointUnusable(ref.step, `its data does not hash to the proof's state root of step ${ref.step} (commitment mismatch)`)
  }
  return tensors
}
