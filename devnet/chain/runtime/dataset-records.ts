import type { DatasetChallenge } from '../../../protocols/pallet-types.js'
import { repatriateReserved, unreserve } from './balances.js'
import type { Context } from './context.js'

// The records of dataset availability challenges (dataset-availability.ts)
// that the rest of the pallet reads: which are open, whose rejects stand
// because the submitter did not serve, and the answered deposits settled
// with the task.

const P = 'Arbitration'

/** The task's open dataset challenges. */
export const openDatasetChallenges = (ctx: Context, taskId: bigint): bigint[] => ctx.store.read<bigint[]>(P, 'OpenDatasetChallenges', taskId)

/** `who`'s open dataset challenges of the task. */
export function ownOpenDataset (ctx: Context, taskId: bigint, who: string): bigint[] {
  return openDatasetChallenges(ctx, taskId).filter(id => ctx.store.get<DatasetChallenge>(P, 'DatasetChallenges', id)?.challenger === who)
}

/** Verifiers whose dataset challenge the submitter left unanswered: their rejects stand. */
export const datasetWithheldFrom = (ctx: Context, taskId: bigint): ReadonlySet<string> => new Set(ctx.store.read<string[]>(P, 'DatasetWithheld', taskId))

/**
 * At the end of a task, the deposits of answered dataset challenges: back to
 * the verifier if a verdict of its stood (it was served and voted; on a
 * failed task, an accept not slashed), else to the submitter (served, then silent). Without `standing` (a quarantined
 * task: nothing was decided) every deposit goes back.
 */
export function settleAnsweredDatasetDeposits (ctx: Context, taskId: bigint, standing?: ReadonlySet<string>): void {
  for (const id of ctx.store.read<bigint[]>(P, 'AnsweredDatasetChallenges', taskId)) {
    const c = ctx.store.get<DatasetChallenge>(P, 'DatasetChallenges', id)
    if (c === undefined) continue
    const toSubmitter = standing !== undefined && !standing.has(c.challenger)
    if (toSubmitter) repatriateReserved(ctx, c.challenger, c.submitter, c.deposit)
    else unreserve(ctx, c.challenger, c.deposit)
    ctx.emit(P, 'DatasetDepositSettled', { challengeId: id, taskId, to: toSubmitter ? c.submitter : c.challenger, amount: c.deposit })
  }
  ctx.store.remove(P, 'AnsweredDatasetChallenges', taskId)
}
