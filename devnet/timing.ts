import { CHECKPOINT_COST_STEPS, recommendedCheckpointEvery } from '../protocols/verification/sample.js'

// The devnet's challenge window, from the speed of this machine: a
// whistleblower replays every step of the task after the commitment (about
// as long as training it), then traces the disputed step and sends two
// transactions; the window is twice that path (docs/benchmarks.md, "Devnet
// timing"). Measured by training the first CALIBRATION_STEPS steps of the
// task itself just before it is submitted.

export const CALIBRATION_STEPS = 100
/** seconds for the trace of the disputed step (~4 s measured) and the dispute's two transactions (~1 s) */
export const DISPUTE_OVERHEAD_S = 5
export const WINDOW_MARGIN = 2
export const MIN_WINDOW_BLOCKS = 20

export interface WindowChoice { blocks: number, replaySeconds: number, windowSeconds: number }

export function challengeWindowFor (o: { steps: number, batchSize: number, samplesPerSec: number, blockTimeMs: number }): WindowChoice {
  if (!(o.samplesPerSec > 0) || !(o.blockTimeMs > 0)) throw new Error(`cannot size a challenge window from ${o.samplesPerSec} samples/s and ${o.blockTimeMs} ms blocks`)
  const replaySeconds = o.steps * o.batchSize / o.samplesPerSec
  const windowSeconds = WINDOW_MARGIN * (replaySeconds + DISPUTE_OVERHEAD_S)
  return { blocks: Math.max(MIN_WINDOW_BLOCKS, Math.ceil(windowSeconds * 1000 / o.blockTimeMs)), replaySeconds, windowSeconds }
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
export function checkpointSpacingFor (o: { steps: number, batchSize: number, samplesPerSec: number, codeMs: number, stateBytes: number }): { every: number, optimum: number, costSteps: number, stepMs: number } {
  if (!(o.samplesPerSec > 0) || !(o.codeMs >= 0)) throw new Error(`cannot space checkpoints from ${o.samplesPerSec} samples/s and ${o.codeMs} ms of coding`)
  const stepMs = o.batchSize / o.samplesPerSec * 1000
  const costSteps = CHECKPOINT_COST_STEPS + o.codeMs / stepMs
  const optimum = recommendedCheckpointEvery(o.steps, o.stateBytes, costSteps)
  return { every: Math.min(optimum, MAX_SPACING_FACTOR * recommendedCheckpointEvery(o.steps, o.stateBytes)), optimum, costSteps, stepMs }
}

/**
 * At most this many times task new's default spacing. A verifier replays each
 * sample from the checkpoint before it, so its replays cross a given step with
 * probability ≈ 22 (k + 1) / (2 · steps): the forced error is caught by a
 * verifier, not only by the whistleblower, that much more often, and a
 * verifier whose reject stands leaves the devnet's two-verifier quorum with no
 * replacement to draw (the task ends Unverified; docs/benchmarks.md, "Devnet
 * timing"). Twice the default at most doubles that chance (~6% → ~12% per
 * verifier at 1000 steps) and halves the coding.
 */
export const MAX_SPACING_FACTOR = 2

/** A GPT step costs ~10× an MLP step: fewer calibration steps give the same timing in a couple of seconds. */
export const GPT_CALIBRATION_STEPS = 20
