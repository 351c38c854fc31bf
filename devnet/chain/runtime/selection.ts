import { TREASURY, unreserve } from './balances.js'
import type { Context } from './context.js'
import { adjustActive, getNode, getTask, params, putTask, type TaskInfo } from './arbitration.js'
import { slashStake } from './slashes.js'
import { pickWeighted, ppmOf, selectionSeed } from './randomness.js'
import { currentRandomness } from './block-randomness.js'
import { ROLE_SOLVER } from './spec.js'
import { UNASSIGNED_TIMEOUT } from './stake-spec.js'
import { releaseReservation, reserveAnswerers } from './verifier-stake.js'
import { chargeSolverRent } from './capacity-rent.js'
import { runsRuntime, taskRuntime } from './runtime-capability.js'

// Solver selection, part of the Arbitration pallet: the stake-weighted draw,
// a solver handing a task back or missing its deadline, and the end of a
// task nobody can take. A task reaches a solver only while enough verifier
// stake can answer for it (verifier-stake.ts reserveAnswerers): before, the
// solver's work could end unverifiable and unpaid.

const P = 'Arbitration'

/** Stake-weighted selection among registered solvers not excluded that declared the task's runtime if it needs it; randomness: the selecting block's (the chain's VRF). Writes `t` only when a solver is selected: a caller that changed it stores it first. */
export function trySelect (ctx: Context, id: bigint, t: TaskInfo, announceFailure: boolean): void {
  const p = params(ctx)
  const candidates: Array<{ account: string, stake: bigint }> = []
  // a solver that cannot run the task's runtime at full speed would miss its deadline: only those that declared it
  const runtime = taskRuntime(ctx, id)
  for (const acc of ctx.store.read<string[]>(P, 'Registered')) {
    if (acc === t.submitter || t.excluded.includes(acc) || !runsRuntime(ctx, acc, runtime)) continue
    const n = getNode(ctx, acc)
    if (n !== undefined && (n.roles & ROLE_SOLVER) !== 0 && n.stake >= p.minStake) candidates.push({ account: acc, stake: n.stake })
  }
  const seed = selectionSeed(currentRandomness(ctx), id, t.excluded.length)
  const solver = pickWeighted(seed, candidates)
  if (solver === undefined) {
    if (announceFailure) ctx.emit(P, 'NoSolverAvailable', { taskId: id })
    return
  }
  // nothing written while the task waits: every waiting task retries in every block
  if (!reserveAnswerers(ctx, id, t, solver, seed, announceFailure)) return
  t.phase = 'Solving'
  t.solver = solver
  t.deadline = ctx.now + t.solveTimeout
  // the seed also fixes the solver's private forced-error draw (a VRF of its key over task id ‖ seed)
  t.selectionSeed = seed
  putTask(ctx, id, t)
  adjustActive(ctx, solver, 1)
  ctx.emit(P, 'SolverSelected', { taskId: id, solver, deadline: t.deadline })
}

/** The solver is off the task (excluded from it): the task waits for another, for at most UNASSIGNED_TIMEOUT blocks. */
function unassign (ctx: Context, id: bigint, t: TaskInfo, solver: string): void {
  adjustActive(ctx, solver, -1)
  chargeSolverRent(ctx, id, solver)
  releaseReservation(ctx, id)
  t.excluded.push(solver)
  t.solver = null
  t.phase = 'Unassigned'
  t.deadline = ctx.now + UNASSIGNED_TIMEOUT
}

export function releaseTask (ctx: Context, who: string, a: { taskId: bigint }): void {
  const t = getTask(ctx, a.taskId)
  ctx.ensure(t.phase === 'Solving', P, 'WrongPhase')
  ctx.ensure(t.solver === who, P, 'NotSelectedSolver')
  // not a free re-roll of the selection (and of the forced-error draw that comes with it): a dispute bond's worth of stake
  const fee = slashStake(ctx, who, TREASURY, params(ctx).disputeBond)
  unassign(ctx, a.taskId, t, who)
  putTask(ctx, a.taskId, t)
  ctx.emit(P, 'TaskReleased', { taskId: a.taskId, solver: who, fee })
  trySelect(ctx, a.taskId, t, true)
}

/** The solver missed its deadline: slashed, excluded, and the task goes to another. */
export function solverTimedOut (ctx: Context, id: bigint, t: TaskInfo, solver: string): void {
  const n = ctx.store.get<{ stake: bigint }>(P, 'Nodes', solver)
  // never less than release_task's fee: sitting on a task it cannot finish must not be cheaper than handing it back
  const p = params(ctx)
  const share = n === undefined ? 0n : ppmOf(n.stake, p.missedDeadlineSlashPpm)
  const slashed = n === undefined ? 0n : slashStake(ctx, solver, TREASURY, share > p.disputeBond ? share : p.disputeBond)
  unassign(ctx, id, t, solver)
  putTask(ctx, id, t)
  ctx.emit(P, 'SolverTimedOut', { taskId: id, solver, slashed })
  trySelect(ctx, id, t, true)
}

/**
 * An Unassigned task past its deadline (no solver left that is not excluded,
 * none registered, or too little verifier stake to answer for it) ends
 * Expired: nobody worked on it, so the whole escrow goes back.
 */
export function expireIfDue (ctx: Context, id: bigint, t: TaskInfo): boolean {
  if (t.phase !== 'Unassigned' || ctx.now <= t.deadline) return false
  unreserve(ctx, t.submitter, t.escrow)
  t.phase = 'Expired'
  putTask(ctx, id, t)
  ctx.emit(P, 'TaskExpired', { taskId: id, refunded: t.escrow })
  return true
}
