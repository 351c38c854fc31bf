import type { Params, TaskInfo } from '../../../protocols/pallet-types.js'
import { getAssignments } from './assignment.js'
import type { Context } from './context.js'
import { Overlay, writesOf } from './state.js'

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

/**
 * The items boundStakes reads. A task's `solver_reward` is fixed by
 * submit_task, so writes to `Tasks` (every step of every open task makes one)
 * do not change it.
 */
const BINDING_ITEMS = ['Params', 'OpenTasks', 'Assignments', 'VerifierReservations'].map(i => `${P}.${i}`)
const MEMO = new WeakMap<Overlay, { ctx: Context, writes: string, bound: Map<string, bigint> }>()

/**
 * What each verifier's stake already answers for: the penalties of its live
 * assignments and reservations. Remembered per block while none of the items
 * it reads is written: every Unassigned task waiting for verifier stake asks
 * for it in every block, and it reads every open task, so N waiting tasks
 * cost N² task reads a block (400 of them made a block take 20 s: a chain
 * halted for the price of their returned escrows, docs/economics.md
 * "Tasks waiting for verifier stake").
 */
export function boundStakes (ctx: Context): Map<string, bigint> {
  const writes = BINDING_ITEMS.map(writesOf).join('.')
  // a layer that wrote none of them sees what the layer below it sees
  let layer = ctx.store.state
  while (layer !== ctx.blockState && layer.base instanceof Overlay && !BINDING_ITEMS.some(i => layer.items.has(i))) layer = layer.base
  const hit = MEMO.get(layer)
  // within this block only: a host may write a layer below the block's directly between blocks
  if (hit !== undefined && hit.ctx === ctx && hit.writes === writes) return new Map(hit.bound)
  const bound = computeBound(ctx)
  MEMO.set(layer, { ctx, writes, bound })
  return new Map(bound)
}

function computeBound (ctx: Context): Map<string, bigint> {
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
