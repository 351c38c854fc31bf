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
 * on a chain with forced errors, until the solver reveals the draw or the
 * deadline passes (a reveal_forced_error revealed one pick only). The first
 * call opens the request.
 */
export function awaitsDraw (ctx: Context, id: bigint): boolean {
  if (params(ctx).forcedErrorPpm === 0) return false
  const r = requestOf(ctx, id)
  if (r === undefined) {
    // the same window as a forced-error reveal: the solver notices an event and sends its VRF
    const deadline = ctx.now + REVEAL_WINDOW
    ctx.store.put(P, 'DrawRequests', id, { deadline, revealed: false, forcedStep: null, forcedSteps: [] })
    ctx.emit(P, 'DrawRequested', { taskId: id, deadline })
    return true
  }
  return !r.revealed && ctx.now <= r.deadline
}

/**
 * What the solver of a verified task owes the jackpot for: the forced steps
 * its revealed draw ordered within the proof's committed transitions (a drawn
 * step past a diverged proof's could not have been committed: it costs
 * nothing), or 'unrevealed' when it did not reveal its draw in time (it owes
 * the jackpot; jackpot.ts pays the forced errors it revealed after rulings as
 * if the draw had ordered the most). Empty: it owes nothing.
 */
export function owedForcedSteps (ctx: Context, id: bigint, t: TaskInfo): number[] | 'unrevealed' {
  const r = requestOf(ctx, id)
  if (r === undefined) return []
  if (!r.revealed) return 'unrevealed'
  return r.forcedSteps.filter(f => f < t.stepCount)
}

/** The task settled: its request is over. */
export function closeDraw (ctx: Context, id: bigint): void {
  if (requestOf(ctx, id) !== undefined) ctx.store.remove(P, 'DrawRequests', id)
}

/** reveal_draw: every pick's VRF, each checked as reveal_forced_error checks one. */
export function revealDraw (ctx: Context, who: string, a: { taskId: bigint, vrfOutputs: string[], vrfProofs: string[] }): void {
  const t = getTask(ctx, a.taskId)
  ctx.ensure(t.solver === who, P, 'NotSelectedSolver')
  const r = requestOf(ctx, a.taskId)
  ctx.ensure(t.phase === 'Verifying' && r !== undefined && !r.revealed && ctx.now <= r.deadline, P, 'DrawNotRequested')
  const forcedSteps = solverDraw(ctx, t, who, a, { ppm: params(ctx).forcedErrorPpm, rootEvery: rootEveryOfTask(ctx, a.taskId) })
  const forcedStep = forcedSteps[0] ?? null
  ctx.store.put(P, 'DrawRequests', a.taskId, { deadline: r.deadline, revealed: true, forcedStep, forcedSteps })
  ctx.emit(P, 'DrawRevealed', { taskId: a.taskId, solver: who, forcedStep, forcedSteps })
}
