import type { TaskInfo } from '../../../protocols/pallet-types.js'
import { getAssignments } from './assignment.js'
import type { Context } from './context.js'

// The served grace (docs/economics.md "Selective serving"), part of the
// Arbitration pallet: an assigned verifier whose availability challenge was
// served on chain has the data, and votes again by its deadline (the serve's
// block + challenge_window at least: availability-serve.ts), even past
// challenge_end; the round does not close while such a vote may still come.
// Bounded: serves end by the challenges' deadlines, and challenges open only
// in the evidence window (none from a served verifier past challenge_end).

const P = 'Arbitration'

/** Assigned verifiers served on this task: their verdict was reopened (they may vote after challenge_end, by their deadline). */
export const servedChallengers = (ctx: Context, taskId: bigint): string[] => ctx.store.read<string[]>(P, 'ServedChallengers', taskId)

/** `who` was served on this task and is still in its served grace: it may vote after challenge_end. */
export function inServedGrace (ctx: Context, taskId: bigint, who: string): boolean {
  if (!servedChallengers(ctx, taskId).includes(who)) return false
  const mine = getAssignments(ctx, taskId)?.verifiers.find(v => v.verifier === who && v.status === 'Active')
  return mine !== undefined && ctx.now <= mine.deadline
}

/** Some served verifier may still vote: the round must not close before its verdict can come. */
export function servedPending (ctx: Context, taskId: bigint, t: TaskInfo): boolean {
  return servedChallengers(ctx, taskId).some(who => inServedGrace(ctx, taskId, who) && !t.verdicts.some(v => v.verifier === who))
}
