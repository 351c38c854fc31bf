import type { Context } from './context.js'
import { storeProof, type TaskInfo } from './arbitration.js'

// Diverged proofs (part of the Arbitration pallet; docs/disputes.md, "NaN"):
// a run whose training produced a NaN ends there. The solver commits the
// NaN-free states 0..k and the divergence point in step k; disputes judge
// step k's tape up to that point (protocols/dispute/claim.ts), verifiers
// must replay step k, and settlement pays the solver for the k steps done.

const P = 'Arbitration'

export function commitDiverged (
  ctx: Context, who: string,
  a: { taskId: bigint, proofRoot: string, finalStateRoot: string, stepCount: number, checkpoints: string[], entry: number, flat: number }
): void {
  const { entry, flat, ...proof } = a
  storeProof(ctx, who, proof, { entry, flat })
  ctx.emit(P, 'ProofDiverged', { taskId: a.taskId, step: a.stepCount, entry, flat })
}

/**
 * What the solver's proof earns before the jackpot: solver_reward, or for a
 * diverged run solver_reward × k / steps (k steps were done; the rest of the
 * escrow goes back to the submitter).
 */
export function earnedReward (t: Pick<TaskInfo, 'solverReward' | 'steps' | 'stepCount' | 'divergence'>): bigint {
  if (t.divergence === null) return t.solverReward
  return t.solverReward * BigInt(t.stepCount) / BigInt(t.steps)
}

/** The TaskDiverged event of a diverged task that settled as verified. */
export function emitDiverged (ctx: Context, id: bigint, t: TaskInfo, solverPaid: bigint): void {
  if (t.divergence === null) return
  ctx.emit(P, 'TaskDiverged', { taskId: id, step: t.stepCount, entry: t.divergence.entry, flat: t.divergence.flat, solverPaid })
}
