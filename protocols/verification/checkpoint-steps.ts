// Which checkpoints a run has, computed from the chain's task alone: what a
// verifier that cannot obtain the published run challenges from
// (protocols/verification/chain-run.ts withheldRunCheckpoints), and which of
// them the chain lets an assigned verifier challenge.

/** Checkpoint steps of a run: every checkpoint_every steps and the last (node/train/run.ts; the chain's isCheckpointStep). */
export function checkpointStepsOf (stepCount: number, checkpointEvery: number): number[] {
  const out: number[] = []
  for (let s = 0; s < stepCount; s += checkpointEvery) out.push(s)
  out.push(stepCount)
  return out
}

/**
 * Why a run's published checkpoint list (its run index's, or its proof.json's) is not the
 * task's: undefined when it lists exactly checkpointStepsOf. A replay loads the latest listed
 * checkpoint before each sampled step, so a list that leaves out one of the task's checkpoints
 * makes an honest verifier replay from further back than its window allows, and one that adds
 * a step makes it load a checkpoint the chain does not let it challenge (NotCheckpointStep,
 * CheckpointNotNeeded): withheld, its reject would rest on nothing and it would lapse. Such a
 * run is replayed from the chain (withheldRunCheckpoints), from the task's own checkpoints.
 */
export function publishedCheckpointsError (listed: readonly number[], task: { stepCount: number, checkpointEvery: number }): string | undefined {
  const want = checkpointStepsOf(task.stepCount, task.checkpointEvery)
  const have = [...new Set(listed)].sort((a, b) => a - b)
  if (have.length === want.length && have.every((s, i) => s === want[i])) return undefined
  const missing = want.filter(s => !have.includes(s))
  const extra = have.filter(s => !want.includes(s))
  return `the run lists checkpoints ${missing.length > 0 ? `without ${missing.join(', ')}` : ''}${missing.length > 0 && extra.length > 0 ? ' and ' : ''}${extra.length > 0 ? `at ${extra.join(', ')}, not checkpoint steps` : ''} of the task (every ${task.checkpointEvery} steps and the last, ${task.stepCount})`
}

/**
 * The checkpoints an assigned verifier may challenge (the chain's bound:
 * devnet/chain/runtime/availability.ts): checkpoint 0, which an initial-state
 * claim reads; for each unit of its required sample (1-based, requiredSample;
 * at m > 1 segment ends), the latest checkpoint at or before the unit's start,
 * which its replay may load (checkpointLoads loads a subset of these); and a
 * diverged proof's last state, from which every verifier replays the diverged
 * step. A checkpoint outside this set no replay of that sample reads.
 */
export function challengeableCheckpoints (required: readonly number[], stepCount: number, checkpointEvery: number, rootEvery = 1, diverged = false): number[] {
  const out = new Set<number>([0])
  for (const s of required) {
    const from = rootEvery * Math.floor((s - 1) / rootEvery)
    out.add(checkpointEvery * Math.floor(from / checkpointEvery))
  }
  if (diverged) out.add(stepCount)
  return [...out].sort((a, b) => a - b)
}

/**
 * Of the checkpoints a verifier cannot use (`steps`, in its order of preference), those it
 * challenges: as an assigned verifier only those in `allowed` (challengeableCheckpoints; undefined:
 * anyone else, any). None allowed and a sample larger than the required one (`larger`): its extra
 * steps alone need them, so it verifies its required sample instead ('required').
 */
export function checkpointsToChallenge (steps: readonly number[], allowed: ReadonlySet<number> | undefined, larger: boolean): number[] | 'required' {
  const usable = allowed === undefined ? [...steps] : steps.filter(s => allowed.has(s))
  if (usable.length > 0) return usable
  // none allowed with the required sample cannot happen (its loads are allowed): the chain says why
  return larger ? 'required' : [...steps]
}
