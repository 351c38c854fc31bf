// Which checkpoints a run has, computed from the chain's task alone: what a
// verifier that cannot obtain the published run challenges from
// (protocols/verification/chain-run.ts withheldRunCheckpoints).

/** Checkpoint steps of a run: every checkpoint_every steps and the last (node/train/run.ts; the chain's isCheckpointStep). */
export function checkpointStepsOf (stepCount: number, checkpointEvery: number): number[] {
  const out: number[] = []
  for (let s = 0; s < stepCount; s += checkpointEvery) out.push(s)
  out.push(stepCount)
  return out
}
