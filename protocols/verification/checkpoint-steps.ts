import { checkpointLoads } from './sample.js'

// Which checkpoints a run has and which one a sample needs first: what a
// verifier challenges (a data-availability challenge) when it cannot obtain
// the published run at all, computed from the chain's task alone.

/** Checkpoint steps of a run: every checkpoint_every steps and the last (node/train/run.ts; the chain's isCheckpointStep). */
export function checkpointStepsOf (stepCount: number, checkpointEvery: number): number[] {
  const out: number[] = []
  for (let s = 0; s < stepCount; s += checkpointEvery) out.push(s)
  out.push(stepCount)
  return out
}

/** The first checkpoint a replay of `sampled` (1-based steps; at m > 1 naming segments) loads. */
export function firstNeededCheckpoint (sampled: number[], stepCount: number, checkpointEvery: number, rootEvery = 1): number {
  const loads = checkpointLoads(sampled, checkpointStepsOf(stepCount, checkpointEvery), rootEvery, stepCount)
  return loads.length === 0 ? 0 : Math.min(...loads)
}
