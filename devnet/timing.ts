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
