import type { Params, TaskInfo } from '../../../protocols/pallet-types.js'
import { TREASURY, repatriateReserved, reserve, unreserve } from './balances.js'
import type { Context } from './context.js'
import { getTask } from './arbitration.js'
import { slashStake } from './slashes.js'
import { getAssignments } from './assignment.js'
import { MAX_VERIFY_EXTENSIONS } from './spec.js'
import { reservedFor, silencePenalty } from './verifier-stake.js'

// Capacity rent (docs/economics.md, "Capacity griefing"). A task binds
// dispute_bond + solver_reward of each verifier reserved for it or assigned to
// it, and bound stake is the network's verification capacity: other tasks
// wait for it (AwaitingVerifierStake). Whoever holds it pays for it, per
// block and per unit of stake, to the treasury: the submitter for the blocks
// from its selected solver's selection to the task's end, a solver that hands
// the task back or misses its deadline for the blocks its selection held.
// Without it, a submitter could fill the capacity with tasks of its own for
// their rewards alone (as low as zero), whatever the time held.

const P = 'Arbitration'
const PPB = 1_000_000_000n

export interface CapacityRent { deposit: bigint, solving: bigint, held: bigint }

const getRent = (ctx: Context, id: bigint): CapacityRent | undefined => ctx.store.get<CapacityRent>(P, 'CapacityRents', id)
const putRent = (ctx: Context, id: bigint, r: CapacityRent): void => ctx.store.put(P, 'CapacityRents', id, r)

/** The rent of `stakeBlocks` (stake × blocks) at `ppb` billionths per block, rounded up. */
export function rentFor (ppb: number, stakeBlocks: bigint): bigint {
  return (stakeBlocks * BigInt(ppb) + PPB - 1n) / PPB
}

/**
 * Blocks a task holds verifier stake at most under its own parameters, without
 * disputes: from the selection, solve_timeout to commit, two more to the first
 * draw, and every round of the challenge window to its close.
 */
export function nominalHold (t: Pick<TaskInfo, 'solveTimeout' | 'challengeWindow'>): number {
  return t.solveTimeout + (MAX_VERIFY_EXTENSIONS + 1) * (t.challengeWindow + 1) + 2
}

/** The deposit submit_task reserves: the rent of verifier_count slots of the task's penalty over its nominal hold. */
export function rentDeposit (p: Pick<Params, 'disputeBond' | 'capacityRentPpb'>, t: Pick<TaskInfo, 'solverReward' | 'verifierCount' | 'solveTimeout' | 'challengeWindow'>): bigint {
  return rentFor(p.capacityRentPpb, silencePenalty(p, t) * BigInt(t.verifierCount) * BigInt(nominalHold(t)))
}

/** submit_task: the submitter reserves the task's rent deposit, or the submission fails. */
export function takeRentDeposit (ctx: Context, who: string, id: bigint): void {
  const p = ctx.store.read<Params>(P, 'Params')
  if (p.capacityRentPpb === 0) return
  const deposit = rentDeposit(p, getTask(ctx, id))
  reserve(ctx, who, deposit, [P, 'InsufficientRentDeposit'])
  putRent(ctx, id, { deposit, solving: 0n, held: 0n })
}

/** on_initialize, before the task's own transitions: the stake it holds bound through this block. */
export function accrueRent (ctx: Context, id: bigint, t: TaskInfo): void {
  // an Unassigned task holds no reservation, an ended one nothing
  if (t.phase !== 'Solving' && t.phase !== 'Verifying') return
  const r = getRent(ctx, id)
  if (r === undefined) return
  const slots = reservedFor(ctx, id).length + (getAssignments(ctx, id)?.verifiers.filter(v => v.status === 'Active').length ?? 0)
  if (slots === 0) return
  const stakeBlocks = silencePenalty(ctx.store.read<Params>(P, 'Params'), t) * BigInt(slots)
  if (t.phase === 'Solving') r.solving += stakeBlocks
  else r.held += stakeBlocks
  putRent(ctx, id, r)
}

/**
 * The solver is off the task (released, or missed its deadline): it pays the
 * rent of the reservation its selection held, out of its stake. The submitter
 * did not choose that hold; a submitter's puppet solver sitting on the task
 * would otherwise hold the capacity for a release fee whatever the time.
 */
export function chargeSolverRent (ctx: Context, id: bigint, solver: string): void {
  const r = getRent(ctx, id)
  if (r === undefined || r.solving === 0n) return
  const due = rentFor(ctx.store.read<Params>(P, 'Params').capacityRentPpb, r.solving)
  const paid = slashStake(ctx, solver, TREASURY, due)
  ctx.emit(P, 'CapacityRentPaid', { taskId: id, who: solver, amount: paid, stakeBlocks: r.solving })
  r.solving = 0n
  putRent(ctx, id, r)
}

/** The task ended: the submitter pays the rent of what it held (at most its deposit); the rest of the deposit goes back. */
export function settleRent (ctx: Context, id: bigint, t: TaskInfo): void {
  const r = getRent(ctx, id)
  if (r === undefined) return
  const stakeBlocks = r.solving + r.held
  const due = rentFor(ctx.store.read<Params>(P, 'Params').capacityRentPpb, stakeBlocks)
  const paid = due < r.deposit ? due : r.deposit
  repatriateReserved(ctx, t.submitter, TREASURY, paid)
  unreserve(ctx, t.submitter, r.deposit - paid)
  ctx.store.remove(P, 'CapacityRents', id)
  ctx.emit(P, 'CapacityRentPaid', { taskId: id, who: t.submitter, amount: paid, stakeBlocks })
}
