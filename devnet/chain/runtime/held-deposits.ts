import { adjustActive, getTask, params, putTask, slashStake } from './arbitration.js'
import { repatriateReserved, unreserve } from './balances.js'
import type { Context } from './context.js'
import { ppmOf } from './randomness.js'

// What availability challenges and chunk-sample requests share: while open
// the task does not settle and both parties' stakes stay bound; an
// unanswered one slashes the solver like a lost dispute and fails the task,
// and an answered one's deposit is held until the task ends.

const P = 'Arbitration'

/** The solver let a data-availability request go unanswered: slash_ppm of its stake, winner_share_ppm of that to the requester. */
export function slashUnanswered (ctx: Context, solver: string, requester: string): bigint {
  const n = ctx.store.get<{ stake: bigint }>(P, 'Nodes', solver)
  return slashStake(ctx, solver, requester, ppmOf(n?.stake ?? 0n, params(ctx).slashPpm))
}

/** An answered request's deposit at the task's end: to the solver when `toSolver` (the task was verified anyway), else back to its requester. Returns who got it. */
export function settleHeldDeposit (ctx: Context, held: { requester: string, solver: string, deposit: bigint }, toSolver: boolean): string {
  if (toSolver) repatriateReserved(ctx, held.requester, held.solver, held.deposit)
  else unreserve(ctx, held.requester, held.deposit)
  return toSolver ? held.solver : held.requester
}

/** A request answered or timed out: off its task's open list (storage item `openItem`), the task may settle again (failed on a timeout), both parties' stakes released. */
export function closeRequest (ctx: Context, openItem: string, id: bigint, r: { taskId: bigint, requester: string, solver: string, status: string }): void {
  const rest = ctx.store.read<Array<[number, bigint]>>(P, openItem, r.taskId).filter(([, x]) => x !== id)
  if (rest.length === 0) ctx.store.remove(P, openItem, r.taskId)
  else ctx.store.put(P, openItem, r.taskId, rest)
  const t = getTask(ctx, r.taskId)
  t.openDisputes = Math.max(0, t.openDisputes - 1)
  if (r.status === 'TimedOut') t.solverFailed = true
  putTask(ctx, r.taskId, t)
  adjustActive(ctx, r.requester, -1)
  adjustActive(ctx, r.solver, -1)
}
