import type { Params, TaskInfo } from '../../../protocols/pallet-types.js'
import { adjustActive } from './arbitration.js'
import type { Context } from './context.js'
import { drawWeighted } from './randomness.js'
import { ROLE_VERIFIER } from './spec.js'
import { boundStakes, reservedFor, silencePenalty } from './stake-bound.js'
import { runsRuntime, taskRuntime } from './runtime-capability.js'

// Which verifiers' stake can answer for a task (docs/economics.md, "Verifier
// assignment"), and the reservation that keeps a task from reaching a solver
// before enough verifier stake can answer for it. What a slot binds is
// stake-bound.ts.

export { boundStakes, reservedFor, silencePenalty }

const P = 'Arbitration'

/**
 * At the solver's selection: `verifier_count` verifiers other than the
 * submitter and `solver` whose free stake covers the task's penalty are
 * reserved for it (their stake bound, unable to unregister) until its first
 * draw, drawn from `seed`. Without them the task is not handed to a solver
 * (false): a submitter asking a reward above what the verifiers can answer
 * for would otherwise face a drawn puppet whose failed slot costs less than
 * the reward it withholds, and a check at submission alone could be undone
 * by the stake leaving before the draw.
 */
export function reserveAnswerers (ctx: Context, id: bigint, t: TaskInfo, solver: string, seed: string, announce: boolean): boolean {
  const need = silencePenalty(ctx.store.read<Params>(P, 'Params'), t)
  const covered = answerableVerifiers(ctx, need, new Set([t.submitter, solver]), taskRuntime(ctx, id))
  if (covered.length < t.verifierCount) {
    if (announce) ctx.emit(P, 'AwaitingVerifierStake', { taskId: id, needed: need, verifiers: covered.length })
    return false
  }
  const reserved = drawWeighted(seed, id, 0, t.verifierCount, covered)
  for (const who of reserved) adjustActive(ctx, who, 1)
  ctx.store.put(P, 'VerifierReservations', id, reserved)
  return true
}

/** The reservation is over (the first draw, or the task went back to Unassigned or ended): returns who was reserved. */
export function releaseReservation (ctx: Context, id: bigint): string[] {
  const reserved = reservedFor(ctx, id)
  if (reserved.length === 0) return reserved
  for (const who of reserved) adjustActive(ctx, who, -1)
  ctx.store.remove(P, 'VerifierReservations', id)
  return reserved
}

/**
 * Registered verifiers with the minimum stake, other than `excluded`, that declared `runtime` (the
 * task's, when it needs a declaration: runtime-capability.ts), whose stake not bound elsewhere covers
 * `need` (any, without it).
 */
export function answerableVerifiers (
  ctx: Context, need: bigint | undefined, excluded: ReadonlySet<string>, runtime: string | undefined
): Array<{ account: string, stake: bigint }> {
  const minStake = ctx.store.read<Params>(P, 'Params').minStake
  const bound = need !== undefined ? boundStakes(ctx) : undefined
  const out: Array<{ account: string, stake: bigint }> = []
  for (const acc of ctx.store.read<string[]>(P, 'Registered')) {
    if (excluded.has(acc)) continue
    const n = ctx.store.get<{ roles: number, stake: bigint }>(P, 'Nodes', acc)
    if (n === undefined || (n.roles & ROLE_VERIFIER) === 0 || n.stake < minStake || !runsRuntime(ctx, acc, runtime)) continue
    if (need !== undefined && n.stake - (bound?.get(acc) ?? 0n) < need) continue
    out.push({ account: acc, stake: n.stake })
  }
  return out
}
