import { sha256, fromHex } from '../commit/merkle.js'
import { committedStep, segmentCount } from '../pol/segments.js'

// Which steps of a proof a verifier re-executes. The seed is the hash of a
// block produced after the proof was committed, so the solver cannot know it
// when it commits; mixing in the verifier's account gives every verifier a
// different sample, so together they cover more of the run.
//
// A verifier draws n distinct steps uniformly and, for each sampled step s,
// replays from the checkpoint before s up to s, comparing every state root on
// the way (samples in one checkpoint interval share one replay, up to the
// latest of them). Each sampled step is itself checked, so a solver whose
// faked steps are ANY set of at least a fraction f of the run escapes with
// probability ≤ (1-f)^n, whatever their placement. Sampling whole intervals
// would be cheaper per step only against faked steps spread at random; a
// solver that fakes whole intervals escapes each sampled interval with
// probability 1-f, so a sound sample must count steps, not interval lengths.
//
// With state roots every m > 1 steps (docs/training.md "State roots every m
// steps") the unit is a segment j (steps c_j + 1 … c_{j+1}): n distinct
// segments are drawn uniformly, each named by its last step c_{j+1} (1-based,
// the committed root its replay compares), and replayed from the checkpoint
// before c_j. A faked step spoils its segment's end root, and faking a fraction
// f of the steps spoils at least a fraction f of the segments, so the bound
// (1-f)^n holds per segment. At m = 1 a segment is a step and everything below
// is what it always was.

export interface Interval { index: number, fromStep: number, toStep: number }

/** What a verifier usually wants to catch: ≥ 10% faked steps, with ≥ 99% probability. */
export const DETECTION_GOAL = { fakedShare: 0.1, confidence: 0.99 } as const

export function intervalCount (steps: number, checkpointEvery: number): number {
  return Math.ceil(steps / checkpointEvery)
}

export function intervalAt (index: number, steps: number, checkpointEvery: number): Interval {
  const fromStep = index * checkpointEvery
  return { index, fromStep, toStep: Math.min(fromStep + checkpointEvery, steps) }
}

function u32 (b: Uint8Array): number {
  return ((b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3]) >>> 0
}

/** `count` distinct 1-based steps in [1, steps], uniform from the seed (hex) and the verifier's account (hex), ascending. */
export function sampleSteps (seedHex: string, accountHex: string, steps: number, count: number): number[] {
  if (!Number.isInteger(steps) || steps < 1) throw new Error(`steps must be a positive integer, got ${steps}`)
  const want = Math.min(Math.max(0, Math.floor(count)), steps)
  if (want === steps) return Array.from({ length: steps }, (_, i) => i + 1)
  const seed = fromHex(seedHex)
  const acct = fromHex(accountHex)
  const chosen = new Set<number>()
  const ctr = new Uint8Array(4)
  const limit = Math.floor(2 ** 32 / steps) * steps
  // bounded: each draw is accepted with probability > 1/2 and new with probability ≥ 1 - want/steps
  for (let i = 0; chosen.size < want && i < 64 * steps + 1024; i++) {
    new DataView(ctr.buffer).setUint32(0, i)
    // rejection sampling keeps the choice exactly uniform
    const r = u32(sha256(seed, acct, ctr))
    if (r >= limit) continue
    chosen.add(r % steps + 1)
  }
  return [...chosen].sort((a, b) => a - b)
}

/**
 * `count` distinct segments of a proof of `steps` steps with roots every `rootEvery` steps, uniform
 * from the seed and the account, each named by its last step c_{j+1} = min((j+1)·m, steps), ascending.
 * At m = 1: sampleSteps.
 */
export function sampleSegments (seedHex: string, accountHex: string, steps: number, rootEvery: number, count: number): number[] {
  if (rootEvery === 1) return sampleSteps(seedHex, accountHex, steps, count)
  return sampleSteps(seedHex, accountHex, segmentCount(steps, rootEvery), count).map(u => committedStep(u, steps, rootEvery))
}

/** The replays covering sampled steps: per checkpoint interval, from its checkpoint up to the latest sampled step in it. */
export function replaysFor (sampled: number[], steps: number, checkpointEvery: number): Interval[] {
  const byInterval = new Map<number, number>()
  for (const s of sampled) {
    if (!Number.isInteger(s) || s < 1 || s > steps) throw new Error(`sampled step ${s} is outside 1..${steps}`)
    const index = Math.floor((s - 1) / checkpointEvery)
    byInterval.set(index, Math.max(byInterval.get(index) ?? 0, s))
  }
  return [...byInterval.entries()].sort((a, b) => a[0] - b[0]).map(([index, toStep]) => ({ index, fromStep: index * checkpointEvery, toStep }))
}

/** Sampled steps (all verifiers together) so that faking a fraction f of the steps goes unnoticed with probability ≤ miss. */
export function samplesForDetection (fakedFraction: number, miss: number): number {
  if (!(fakedFraction > 0)) return Infinity
  if (fakedFraction >= 1) return 1
  if (!(miss > 0 && miss < 1)) throw new Error(`miss probability must be in (0, 1), got ${miss}`)
  return Math.max(1, Math.ceil(Math.log(miss) / Math.log(1 - fakedFraction)))
}

/** One verifier's share of the sample when `verifiers` sample independently (their misses multiply). */
export function samplesPerVerifier (verifiers: number, goal: { fakedShare: number, confidence: number } = DETECTION_GOAL): number {
  return Math.ceil(samplesForDetection(goal.fakedShare, 1 - goal.confidence) / Math.max(1, verifiers))
}

/** Probability that a sample of n distinct steps out of `steps` misses every one of `faked` faked steps (exact, hypergeometric). */
export function missProbability (steps: number, faked: number, n: number): number {
  if (faked <= 0) return 1
  if (n + faked > steps) return 0
  let p = 1
  for (let i = 0; i < n; i++) p *= (steps - faked - i) / (steps - i)
  return p
}

/**
 * The checkpoints a replay of `sampled` (1-based steps, any order) loads, given
 * the steps that have checkpoints: each sample continues from where the
 * previous one ended when that is at or after the sample's own checkpoint
 * (same interval, or the very next step), and otherwise starts from the latest
 * checkpoint at or before s - 1. node/train/replay-many.ts follows this rule;
 * a verifier fetches exactly these. A whistleblower replaying every step loads one.
 * With `rootEvery` m > 1 a sampled step names its segment j, which starts at
 * c_j = m·⌊(s - 1) / m⌋ and ends at c_{j+1} (docs/training.md).
 */
export function checkpointLoads (sampled: readonly number[], checkpointSteps: readonly number[], rootEvery = 1, steps = Infinity): number[] {
  const cks = [...checkpointSteps].sort((a, b) => a - b)
  const loads = new Set<number>()
  let at = -Infinity
  for (const s of [...new Set(sampled)].sort((a, b) => a - b)) {
    const from = rootEvery * Math.floor((s - 1) / rootEvery)
    let ref: number | undefined
    for (const c of cks) { if (c <= from) ref = c; else break }
    if (ref === undefined) throw new Error(`no checkpoint at or before step ${from}`)
    if (!(ref <= at && at <= from)) loads.add(ref)
    at = Math.max(at, Math.min(from + rootEvery, steps))
  }
  return [...loads].sort((a, b) => a - b)
}

/**
 * What one checkpoint costs the solver, in training steps of the mlp (~9 ms of
 * CPU): building and writing it in the hashing thread ~2.3 ms (its data hash,
 * a copy, the file; its commitments are the step's state root, computed
 * anyway) and publishing it by reference ~2–4 ms (the shard CIDs), measured
 * on the 2-core machine. The optimum below is flat around it.
 */
export const CHECKPOINT_COST_STEPS = 0.5
/**
 * What a checkpoint costs the solver per byte of state, in FLOPs of training
 * at the psk1 kernels' speed: the Adam mlp's 1.2 MB checkpoint costs ~2 ms to
 * build, hash and write and ~2–4 ms to publish, while its 39 MFLOP step takes
 * ~2.6 ms of CPU (~15 GFLOP/s): ~60 FLOPs a byte.
 */
export const CHECKPOINT_FLOPS_PER_BYTE = 60

/**
 * A checkpoint's cost in training steps of a task: CHECKPOINT_COST_STEPS,
 * unless its step does so little work per byte of state that a checkpoint
 * costs more steps (the Adam mlp on the psk1 kernels: ~1.9, so its default
 * spacing at 1000 steps is 9 rather than 5). A CNN's state is small for its
 * FLOPs: it keeps CHECKPOINT_COST_STEPS.
 */
export function checkpointCostSteps (stateBytes: number, stepFlops: number): number {
  if (!(stepFlops > 0) || !(stateBytes > 0)) return CHECKPOINT_COST_STEPS
  return Math.max(CHECKPOINT_COST_STEPS, stateBytes * CHECKPOINT_FLOPS_PER_BYTE / stepFlops)
}

/** Most checkpoints a task keeps by default, and most bytes (each checkpoint is the whole state, kept until settlement). */
export const MAX_DEFAULT_CHECKPOINTS = 1000
export const DEFAULT_CHECKPOINT_BUDGET_BYTES = 2 * 1024 ** 3

/**
 * A checkpoint spacing k that keeps the network's extra work small. The
 * verifiers replay ≈ (k + 1) / 2 steps for each of the 44 samples DETECTION_GOAL
 * needs, the solver pays CHECKPOINT_COST_STEPS per checkpoint (steps / k of
 * them): 22 (k + 1) + c · steps / k is least at k = √(c · steps / 22). So k grows
 * with the square root of the task: 5 at 1000 steps (verification replays ~13%
 * of the run, checkpoints ~10%), 15 at 10,000 (~3.5% + 3.3%); at most
 * MAX_DEFAULT_CHECKPOINTS checkpoints and, when the state's size is given,
 * DEFAULT_CHECKPOINT_BUDGET_BYTES of them (a large model checkpoints less often
 * and its verification replays more). `costSteps` replaces CHECKPOINT_COST_STEPS
 * when the caller measured a checkpoint's cost on its machine, erasure coding
 * included (the devnet does: devnet/timing.ts).
 */
export function recommendedCheckpointEvery (steps: number, stateBytes = 0, costSteps = CHECKPOINT_COST_STEPS): number {
  if (!Number.isInteger(steps) || steps < 1) throw new Error(`steps must be a positive integer, got ${steps}`)
  if (!(costSteps > 0) || !Number.isFinite(costSteps)) throw new Error(`a checkpoint's cost must be a positive number of steps, got ${costSteps}`)
  const n = samplesForDetection(DETECTION_GOAL.fakedShare, 1 - DETECTION_GOAL.confidence)
  const byDisk = Math.ceil(steps * Math.max(0, stateBytes) / DEFAULT_CHECKPOINT_BUDGET_BYTES)
  return Math.max(1, Math.ceil(steps / MAX_DEFAULT_CHECKPOINTS), byDisk, Math.min(steps, Math.round(Math.sqrt(costSteps * steps / (n / 2)))))
}
