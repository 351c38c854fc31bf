import { TREASURY, repatriateReserved, slashReserved } from './balances.js'
import type { Context } from './context.js'
import { getNode, params, putNode } from './arbitration.js'
import { ppmOf } from './randomness.js'
import { boundStakes } from './stake-bound.js'

// Slashing a node's stake, part of the Arbitration pallet: every penalty of
// the runtime goes through here, so that the share a winner gets never comes
// out of stake bound to the loser's verifier slots.

const P = 'Arbitration'

/** Slashes `amount` of a node's stake (at most all of it): a share to the winner, the rest to the treasury. Returns what was taken. */
export function slashStake (ctx: Context, loser: string, winner: string, amount: bigint, sharePpm = params(ctx).winnerSharePpm): bigint {
  return slashStakeSplit(ctx, loser, winner, amount, sharePpm).taken
}

/**
 * slashStake, returning the winner's part too. The share is of the part of
 * the slash taken from stake not bound to the loser's verifier slots
 * (stake-bound.ts); what cuts into bound stake goes to the treasury whole.
 * Bound stake answers for those slots' penalties: a slash that passed part of
 * it to a winner of the loser's own coalition would let the coalition move
 * the stake out before the slot fails, and the slot cost less than the
 * reward its failure withholds (docs/economics.md "Stake bound to a slot").
 */
export function slashStakeSplit (
  ctx: Context, loser: string, winner: string, amount: bigint, sharePpm = params(ctx).winnerSharePpm
): { taken: bigint, toWinner: bigint } {
  const n = getNode(ctx, loser)
  const take = n === undefined ? 0n : (amount < n.stake ? amount : n.stake)
  if (n === undefined || take === 0n) return { taken: 0n, toWinner: 0n }
  // a slash wholly to the treasury needs no split
  const bound = winner === TREASURY ? 0n : boundStakes(ctx).get(loser) ?? 0n
  const unbound = n.stake > bound ? n.stake - bound : 0n
  n.stake -= take
  putNode(ctx, loser, n)
  const toWinner = ppmOf(take < unbound ? take : unbound, sharePpm)
  repatriateReserved(ctx, loser, winner, toWinner)
  slashReserved(ctx, loser, take - toWinner)
  ctx.emit(P, 'Slashed', { who: loser, amount: take, toWinner, toTreasury: take - toWinner })
  return { taken: take, toWinner }
}
