import { hexToU8a, u8aToHex } from '@polkadot/util'
import { ClaimRejected, decodeClaim, judgeClaim, type Claim, type Ruling } from '../../../protocols/dispute/claim.js'
import { getTask, params, putTask, adjustActive, type TaskInfo } from './arbitration.js'
import { slashStake, slashStakeSplit } from './slashes.js'
import { TREASURY, repatriateReserved, slashReserved, unreserve } from './balances.js'
import type { Context } from './context.js'
import { contextOf, getDispute, partyOf, putDispute, roleOf, verify, type DisputeInfo, type PartyName } from './dispute-state.js'
import { basisOf, newRuling, type RulingBasis } from './forced-rulings.js'
import { ppmOf } from './randomness.js'
import { oneStepOf, rootEveryOfTask } from './segments.js'
import { forgetTape } from './tape-queue.js'
import { settleChallenge } from './challenge-shares.js'

// How a dispute ends: a claim judged on chain (adjudicate) or a timeout, and
// what each outcome pays (part of the Arbitration pallet; disputes.ts).

const P = 'Arbitration'

/**
 * Checks an end-of-bisection claim against what the chain holds and rules
 * (protocols/dispute/claim.ts `judgeClaim`): the defender's tape root must be
 * signed by the defender's account for this chain, task and dispute (sr25519;
 * the chain knows account public keys), every entry is proven against it, the
 * op's structure against the task's skeleton_root, state tensors against the
 * committed proof_root, batch rows against dataset_root at the rows the
 * program's data order names, the runtime and data order from the program
 * bytes hashed against program_hash.
 */
export function checkAgreement (
  ctx: Context, who: string, disputeId: bigint, claimHex: string
): { d: DisputeInfo, ruling: Ruling, basis: RulingBasis, step: number } {
  const d = getDispute(ctx, disputeId)
  ctx.ensure(d.status === 'Open', P, 'DisputeClosed')
  const party = partyOf(d, who)
  ctx.ensure(party !== undefined, P, 'NotParty')
  const t = getTask(ctx, d.taskId)
  let ruling: Ruling
  let claim: Claim
  const m = rootEveryOfTask(ctx, d.taskId)
  // a one-step dispute's step: disputed_step, or at m > 1 a diverged proof's last step (undefined: a segment dispute)
  const one = oneStepOf(ctx, d, t)
  try {
    claim = decodeClaim(hexToU8a(claimHex))
    ruling = judgeClaim({
      ...contextOf(ctx, disputeId, d),
      step: one ?? d.disputedStep,
      challenger: hexToU8a(d.challenger),
      defender: hexToU8a(d.defender),
      caller: roleOf(party),
      programHash: hexToU8a(t.programHash),
      datasetRoot: hexToU8a(t.datasetRoot),
      skeletonRoot: hexToU8a(t.skeletonRoot),
      proofRoot: hexToU8a(t.proofRoot),
      stepCount: t.stepCount,
      divergence: t.divergence ?? undefined,
      // a segment dispute: disputed_step is the segment, the claim names the step inside it;
      // the diverged step of an m > 1 proof is one step whose pre-state is the last leaf
      ...(m > 1 ? (one === undefined ? { segment: { j: d.disputedStep, rootEvery: m } } : { rootEvery: m }) : {}),
      reference: ctx.reference as never,
      verify
    }, claim)
  } catch (e) {
    if (e instanceof ClaimRejected) ctx.fail(P, e.reason)
    ctx.fail(P, 'InvalidClaim')
  }
  const step = ruling.step ?? one ?? d.disputedStep
  return { d, ruling, basis: basisOf(claim, step), step }
}

export function adjudicate (ctx: Context, who: string, a: { disputeId: bigint, claim: string }): void {
  const { d, ruling, basis, step } = checkAgreement(ctx, who, a.disputeId, a.claim)
  const utf8 = (s: string): string => u8aToHex(new TextEncoder().encode(s.slice(0, 256)))
  ctx.emit(P, 'Adjudicated', { disputeId: a.disputeId, kind: utf8(ruling.kind), reason: utf8(ruling.reason) })
  resolve(ctx, a.disputeId, d, ruling.winner === 'defender' ? 'Defender' : 'Challenger', 'Adjudicated', basis, step)
}

/**
 * A solver that let a forced move go unanswered: slashed `slash_ppm` of its
 * stake like a lost claim (silence must not be cheaper than losing), the task
 * fails, but (1) the challenger's share is at most the bond it risked: a
 * griefer who disputes an honest solver and wins only by its outage gains at
 * most what it would have lost had the solver answered; (2) no verdict is
 * slashed, since nothing was ruled about the step itself.
 */
function penalizeTimeout (ctx: Context, taskId: bigint, t: TaskInfo, challenger: string, bond: bigint): bigint {
  const p = params(ctx)
  const solver = t.solver
  t.solverFailed = true
  if (solver === null) return 0n
  const n = ctx.store.get<{ stake: bigint }>(P, 'Nodes', solver)
  if (n === undefined) return 0n
  const share = ppmOf(ppmOf(n.stake, p.slashPpm), p.winnerSharePpm)
  const toWinner = share < bond ? share : bond
  // the capped share to the challenger, the rest of the slash to the treasury
  // (none of it from stake bound to the solver's verifier slots: slashStakeSplit)
  const rest = slashStake(ctx, solver, TREASURY, ppmOf(n.stake, p.slashPpm) - toWinner)
  const paid = slashStakeSplit(ctx, solver, challenger, toWinner, 1_000_000)
  const taken = rest + paid.taken
  ctx.emit(P, 'TimeoutPenalty', { taskId, solver, slashed: taken, toChallenger: paid.toWinner })
  return taken
}

/** `step`: the transition a claim was about (a segment dispute's step inside the segment; else the disputed step). */
export function resolve (ctx: Context, id: bigint, d: DisputeInfo, winnerParty: PartyName, how: 'Adjudicated' | 'Timeout', basis?: RulingBasis, step = d.disputedStep): void {
  const p = params(ctx)
  const t = getTask(ctx, d.taskId)
  const winner = winnerParty === 'Challenger' ? d.challenger : d.defender
  const loser = winnerParty === 'Challenger' ? d.defender : d.challenger
  let slashed = 0n
  let forced = false
  if (winnerParty === 'Challenger') {
    // the challenger has won whatever the solver does next: its bond comes back now
    unreserve(ctx, d.challenger, d.bond)
    if (how === 'Adjudicated') {
      // Truebit: only the solver knows whether this step was its forced error; it has
      // REVEAL_WINDOW blocks to prove it (reveal_forced_error), else it is penalized
      // in on_initialize. Either way the challenger is paid: a jackpot or a slash share.
      const r = newRuling(ctx, t, id, d.challenger, step, basis ?? { claimKind: 'Element', honestPost: null })
      forced = r.outcome === 'ForcedError'
      t.rulings.push(r)
    } else {
      // a solver that let a forced move go unanswered has no forced-error excuse
      slashed = penalizeTimeout(ctx, d.taskId, t, d.challenger, d.bond)
    }
  } else {
    // the challenger loses its bond: a share to the defender, the rest to the treasury
    const toWinner = ppmOf(d.bond, p.winnerSharePpm)
    repatriateReserved(ctx, d.challenger, d.defender, toWinner)
    slashReserved(ctx, d.challenger, d.bond - toWinner)
    slashed = d.bond
    ctx.emit(P, 'Slashed', { who: d.challenger, amount: d.bond, toWinner, toTreasury: d.bond - toWinner })
  }
  // a ruling awaiting the reveal may still slash the solver (its share then goes by rank: challenge-shares.ts);
  // a lost dispute, a forced error and a timeout (its share capped at the bond, paid at once) take no held share
  if (!(winnerParty === 'Challenger' && how === 'Adjudicated' && !forced)) settleChallenge(ctx, d.taskId, 'Dispute', id, 'Closed')
  d.status = winnerParty === 'Challenger' ? 'ChallengerWon' : 'DefenderWon'
  d.force = null
  putDispute(ctx, id, d)
  ctx.store.remove(P, 'DisputeLastMove', id)
  forgetTape(ctx, id)
  t.openDisputes = Math.max(0, t.openDisputes - 1)
  putTask(ctx, d.taskId, t)
  adjustActive(ctx, d.challenger, -1)
  adjustActive(ctx, d.defender, -1)
  ctx.emit(P, 'DisputeResolved', { disputeId: id, winner, loser, how, slashed, forcedError: forced })
}
