import type { Params, TaskInfo } from '../../../protocols/pallet-types.js'
import { getAssignments } from './assignment.js'
import type { Context } from './context.js'

// What an assigned or reserved verifier's stake answers for (docs/economics.md,
// "Verifier assignment"): the penalty of a failed slot, and how much of each
// node's stake its live assignments and reservations bind. Read by the draw
// (verifier-stake.ts) and by every slash (slashes.ts slashStake): bound
// stake pays no challenger's share.

const P = 'Arbitration'

/**
 * What a failed slot costs an assigned verifier, besides its reward: a bond
 * plus the whole solver reward. The one party that gains from a task ending
 * Unverified is its submitter (the escrow comes back), and it gains at most
 * R; one failed slot already costs more, so no number of rounds (nor a
 * verifier pool too thin to refill the slot) makes a stall pay.
 */
export function silencePenalty (p: Pick<Params, 'disputeBond'>, t: Pick<TaskInfo, 'solverReward'>): bigint {
  return p.disputeBond + t.solverReward
}

export const reservedFor = (ctx: Context, taskId: bigint): string[] => ctx.store.read<string[]>(P, 'VerifierReservations', taskId)

/** What each verifier's stake already answers for: the penalties of its live assignments and reservations. */
export function boundStakes (ctx: Context): Map<string, bigint> {
  const p = ctx.store.read<Params>(P, 'Params')
  const out = new Map<string, bigint>()
  const bind = (who: string, penalty: bigint): void => { out.set(who, (out.get(who) ?? 0n) + penalty) }
  for (const id of ctx.store.read<bigint[]>(P, 'OpenTasks')) {
    const t = ctx.store.get<TaskInfo>(P, 'Tasks', id)
    if (t === undefined) continue
    const penalty = silencePenalty(p, t)
    for (const v of getAssignments(ctx, id)?.verifiers ?? []) if (v.status === 'Active') bind(v.verifier, penalty)
    for (const who of reservedFor(ctx, id)) bind(who, penalty)
  }
  return out
}
