import { CHECKPOINT_COST_STEPS, recommendedCheckpointEvery } from '../protocols/verification/sample.js'

// The devnet's challenge window, from the speed of this machine: a
// whistleblower replays every step of the task after the commitment (about
// as long as training it), then tapes the disputed step and sends two
// transactions; the window is twice that path (docs/benchmarks.md, "Devnet
// timing"). Measured by training the first CALIBRATION_STEPS steps of the
// task itself just before it is submitted; never below what the chain takes
// (a drawn verifier's replay at the reference speed: minChallengeBlocks).

export const CALIBRATION_STEPS = 100
/** seconds for the tape of the disputed step (~4 s measured) and the dispute's two transactions (~1 s) */
export const DISPUTE_OVERHEAD_S = 5
export const WINDOW_MARGIN = 2
export const MIN_WINDOW_BLOCKS = 20

export interface WindowChoice { blocks: number, replaySeconds: number, windowSeconds: number }

/** `chainMin`: the fewest blocks the chain takes for the task (minChallengeBlocks); the window is never below it. */
export function challengeWindowFor (o: { steps: number, batchSize: number, samplesPerSec: number, blockTimeMs: number, chainMin?: number }): WindowChoice {
  if (!(o.samplesPerSec > 0) || !(o.blockTimeMs > 0)) throw new Error(`cannot size a challenge window from ${o.samplesPerSec} samples/s and ${o.blockTimeMs} ms blocks`)
  const replaySeconds = o.steps * o.batchSize / o.samplesPerSec
  const windowSeconds = WINDOW_MARGIN * (replaySeconds + DISPUTE_OVERHEAD_S)
  return { blocks: Math.max(MIN_WINDOW_BLOCKS, Math.ceil(windowSeconds * 1000 / o.blockTimeMs), o.chainMin ?? 0), replaySeconds, windowSeconds }
}

/**
 * The checkpoint spacing of the devnet's task, from this machine's measured
 * cost of a checkpoint in training steps: CHECKPOINT_COST_STEPS (its hash, file
 * and shard CIDs) plus its erasure coding (protocols/erasure, ~150 ms for the
 * MLP's 1.2 MB state, about 14 steps of ~11 ms), by the optimum of
 * recommendedCheckpointEvery. Coding was not in that constant: at the spacing
 * it gave (5 at 1000 steps) the solver coded 201 checkpoints for ~30 s, more
 * than twice the training.
 */
export function checkpointSpacingFor (
  o: { steps: number, batchSize: number, samplesPerSec: number, codeMs: number, stateBytes: number }
): { every: number, optimum: number, costSteps: number, stepMs: number } {
  if (!(o.samplesPerSec > 0) || !(o.codeMs >= 0)) throw new Error(`cannot space checkpoints from ${o.samplesPerSec} samples/s and ${o.codeMs} ms of coding`)
  const stepMs = o.batchSize / o.samplesPerSec * 1000
  const costSteps = CHECKPOINT_COST_STEPS + o.codeMs / stepMs
  const optimum = recommendedCheckpointEvery(o.steps, o.stateBytes, costSteps)
  return { every: Math.min(optimum, MAX_SPACING_FACTOR * recommendedCheckpointEvery(o.steps, o.stateBytes)), optimum, costSteps, stepMs }
}

/**
 * At most this many times task new's default spacing. The optimum weighs CPU
 * work; on the devnet's two cores the verifiers' replays also compete with the
 * whistleblower's full replay inside the challenge window, and a verifier
 * replays ≈ 22 (k + 1) / 2 steps: at most about an eighth of a 1000-step run
 * at twice the default (k = 10) instead of about a quarter at the optimum
 * (k ≈ 25), while the coding is still halved.
 */
export const MAX_SPACING_FACTOR = 2

/** A GPT step costs ~10× an MLP step: fewer calibration steps give the same timing in a couple of seconds. */
export const GPT_CALIBRATION_STEPS = 20

/** The solver's training and publishing, this many times the measured replay (a training takes about as long), plus publishing. */
export const SOLVE_MARGIN = 4
export const PUBLISH_ALLOWANCE_S = 30
export const MIN_SOLVE_BLOCKS = 600

/**
 * The solve timeout of the devnet's task: max(600 blocks, SOLVE_MARGIN × (its
 * measured training time + publishing)). A fixed max(600, steps) blocks assumed
 * MLP-sized steps: a GPT step is ~10× one, and a solver on a loaded machine
 * was slashed for training slower than that.
 */
export function solveTimeoutFor (o: { replaySeconds: number, blockTimeMs: number }): number {
  if (!(o.replaySeconds >= 0) || !(o.blockTimeMs > 0)) throw new Error(`cannot size a solve timeout from ${o.replaySeconds} s and ${o.blockTimeMs} ms blocks`)
  return Math.max(MIN_SOLVE_BLOCKS, Math.ceil(SOLVE_MARGIN * (o.replaySeconds + PUBLISH_ALLOWANCE_S) * 1000 / o.blockTimeMs))
}
