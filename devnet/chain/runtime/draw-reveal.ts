import type { Context } from './context.js'
import type { DrawRequest, TaskInfo } from '../../../protocols/pallet-types.js'
import { getTask, params } from './arbitration.js'
import { rootEveryOfTask } from './segments.js'
import { REVEAL_WINDOW } from './spec.js'
import { solverDraw } from './forced-rulings.js'

// The solver's draw, revealed at settlement (part of the Arbitration pallet;
// settlement.ts asks it before paying a verified task). A forced error is
// the only test of a verifier, and its jackpot comes out of the solver's
// reward: were the draw revealed only to excuse a ruling, a solver that
// committed the honest state at its drawn step would look like one drawn
// nothing and keep the jackpot it would otherwise risk. So the solver pays
// the jackpot whenever its draw ordered a forced error, caught or not; the
// premium p·J is priced into the reward and inserting it costs nothing more
// than omitting it. The draw is asked for only once the challenge window is
// over with a quorum and nothing pending: no verifier still to come can
// learn the step from it.

const P = 'Arbitration'

export type { DrawRequest }

const requestOf = (ctx: Context, id: bigint): DrawRequest | undefined => ctx.store.get<DrawRequest>(P, 'DrawRequests', id)

/**
 * Whether a verified task must wait for its solver's draw before it is paid:
 * on a chain with forced errors, unless its forced error was revealed already
 * (reveal_forced_error), until the solver reveals the draw or the deadline
 * passes. The first call opens the request.
 */
export function awaitsDraw (ctx: Context, id: bigint, t: TaskInfo): boolean {
  if (params(ctx).forcedErrorPpm === 0 || t.revealedForcedError !== null) return false
  const r = requestOf(ctx, id)
  if (r === undefined) {
    // the same window as a forced-error reveal: the solver notices an event and sends its VRF
    const deadline = ctx.now + REVEAL_WINDOW
    ctx.store.put(P, 'DrawRequests', id, { deadline, revealed: false, forcedStep: null })
    ctx.emit(P, 'DrawRequested', { taskId: id, deadline })
    return true
  }
  return !r.revealed && ctx.now <= r.deadline
}

/**
 * Whether the solver of a verified task owes the jackpot: a forced error
 * revealed or drawn, or its draw not revealed in time. A drawn step past a
 * diverged proof's committed transitions could not have been committed: it owes nothing.
 */
export function owesJackpot (ctx: Context, id: bigint, t: TaskInfo): boolean {
  if (t.revealedForcedError !== null) return true
  const r = requestOf(ctx, id)
  return r !== undefined && (!r.revealed || (r.forcedStep !== null && r.forcedStep < t.stepCount))
}

/** The task settled: its request is over. */
export function closeDraw (ctx: Context, id: bigint): void {
  if (requestOf(ctx, id) !== undefined) ctx.store.remove(P, 'DrawRequests', id)
}

/** reveal_draw: the solver's VRF over the task's transcript, checked as reveal_forced_error checks it. */
export function revealDraw (ctx: Context, who: string, a: { taskId: bigint, vrfOutput: string, vrfProof: string }): void {
  const t = getTask(ctx, a.taskId)
  ctx.ensure(t.solver === who, P, 'NotSelectedSolver')
  const r = requestOf(ctx, a.taskId)
  ctx.ensure(t.phase === 'Verifying' && r !== undefined && !r.revealed && ctx.now <= r.deadline, P, 'DrawNotRequested')
  const forcedStep = solverDraw(ctx, t, who, a, { ppm: params(ctx).forcedErrorPpm, rootEvery: rootEveryOfTask(ctx, a.taskId) })
  ctx.store.put(P, 'DrawRequests', a.taskId, { deadline: r.deadline, revealed: true, forcedStep })
  ctx.emit(P, 'DrawRevealed', { taskId: a.taskId, solver: who, forcedStep })
}
