import type { Params, TaskInfo } from '../../../protocols/pallet-types.js'
import { getAssignments } from './assignment.js'
import type { Context } from './context.js'
import { ROLE_VERIFIER } from './spec.js'

// What an assigned verifier's stake answers for (docs/economics.md, "Verifier
// assignment"): the penalty of a failed slot, and how much of each
// verifier's stake its live assignments already bind.

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

/** What each verifier's stake already answers for: the penalties of its live assignments. */
export function boundStakes (ctx: Context): Map<string, bigint> {
  const p = ctx.store.read<Params>(P, 'Params')
  const out = new Map<string, bigint>()
  for (const id of ctx.store.read<bigint[]>(P, 'OpenTasks')) {
    const a = getAssignments(ctx, id)
    const t = ctx.store.get<TaskInfo>(P, 'Tasks', id)
    if (a === undefined || t === undefined) continue
    const penalty = silencePenalty(p, t)
    for (const v of a.verifiers) if (v.status === 'Active') out.set(v.verifier, (out.get(v.verifier) ?? 0n) + penalty)
  }
  return out
}

/** Registered verifiers with the minimum stake, other than `excluded`, whose stake not bound elsewhere covers `need` (any, without it). */
export function answerableVerifiers (ctx: Context, need: bigint | undefined, excluded: ReadonlySet<string>): Array<{ account: string, stake: bigint }> {
  const minStake = ctx.store.read<Params>(P, 'Params').minStake
  const bound = need !== undefined ? boundStakes(ctx) : undefined
  const out: Array<{ account: string, stake: bigint }> = []
  for (const acc of ctx.store.read<string[]>(P, 'Registered')) {
    if (excluded.has(acc)) continue
    const n = ctx.store.get<{ roles: number, stake: bigint }>(P, 'Nodes', acc)
    if (n === undefined || (n.roles & ROLE_VERIFIER) === 0 || n.stake < minStake) continue
    if (need !== undefined && n.stake - (bound?.get(acc) ?? 0n) < need) continue
    out.push({ account: acc, stake: n.stake })
  }
  return out
}
