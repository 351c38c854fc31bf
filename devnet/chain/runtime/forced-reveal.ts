import type { Context } from './context.js'
import { getTask, params, putTask } from './arbitration.js'
import { excusedBy, solverPick } from './forced-rulings.js'
import { rootEveryOfTask } from './segments.js'

// The solver's reveal that a step ruled against it was one of its forced
// errors (reveal_forced_error), part of the Arbitration pallet.

const P = 'Arbitration'

/**
 * The solver proves that a step ruled against it was one of its Truebit
 * forced errors (protocols/dispute/forced-error.ts): the VRF must be the
 * solver's over the transcript of one of this task's picks and that pick must
 * name a step with a ruling still awaiting a reveal, and the proof must show
 * the committed leaf after it to be the forced mark of that ruling's honest
 * post-state (forced-rulings.ts). Those rulings then cost the solver nothing.
 * One pick per call: the other forced steps stay private (a verifier still
 * replaying learns nothing of them). The jackpot is paid once, at settlement,
 * after the whole draw is revealed (draw-reveal.ts).
 */
export function revealForcedError (ctx: Context, who: string, a: { taskId: bigint, vrfOutput: string, vrfProof: string, exactness: string }): void {
  const t = getTask(ctx, a.taskId)
  ctx.ensure(t.solver === who, P, 'NotSelectedSolver')
  // a faulted task's rulings keep their reveal window (hook-guard.ts)
  ctx.ensure(t.phase === 'Verifying' || t.phase === 'Faulted', P, 'WrongPhase')
  const m = rootEveryOfTask(ctx, a.taskId)
  const step = solverPick(ctx, t, who, a, { ppm: params(ctx).forcedErrorPpm, rootEvery: m })
  if (step === null) ctx.fail(P, 'NoForcedError')
  const at = t.rulings.filter(x => x.step === step)
  ctx.ensure(at.length > 0, P, 'NoRulingAtForcedStep')
  // again only for rulings adjudicated at that step after its first reveal
  const waiting = at.some(x => x.outcome === 'AwaitingReveal')
  ctx.ensure(waiting || !at.some(x => x.outcome === 'ForcedError'), P, 'AlreadyRevealed')
  ctx.ensure(waiting, P, 'RevealTooLate')
  const excused = excusedBy(ctx, t, step, a.exactness, m)
  for (const x of excused) x.outcome = 'ForcedError'
  t.revealedForcedError ??= step
  putTask(ctx, a.taskId, t)
  ctx.emit(P, 'ForcedErrorRevealed', { taskId: a.taskId, solver: who, step, excused: excused.map(x => x.disputeId) })
}
