import { hexToU8a, u8aToHex } from '@polkadot/util'
import { InitClaimRejected, decodeInitClaim, judgeInitClaim, type InitRuling } from '../../../protocols/dispute/init-claim.js'
import { getTask, params, putTask, requireNode } from './arbitration.js'
import { repatriateReserved, reserve, slashReserved, unreserve } from './balances.js'
import type { Context } from './context.js'
import { ppmOf } from './randomness.js'
import { VERIFIER_SLASH_PPM } from './spec.js'
import { activeAssignment, noteEvidence } from './assignment.js'
import { ensureEvidenceWindow } from './late-backing.js'
import { rootEveryOfTask } from './segments.js'
import { holdShare, noteChallenge, outrankedOnFact, payShares, slashForFact, uncommitted, type Rank } from './challenge-shares.js'

// The initial-state challenge (docs/disputes.md, "The initial state"), part of
// the Arbitration pallet. Verifiers replay transitions; nothing else ties
// stateRoots[0] to the program, so a solver could start from a state of its
// choosing and train honestly from there. The chain can compute any element of
// the program's initialisation itself, so one claim settles it: no game, no
// clocks, no forced-error excuse (the forced error is a transition).

const P = 'Arbitration'

/** `rank`: the commitment it reveals (reveal_initial_state); without one it ranks after every committed challenge (challenge-shares.ts). */
export function challengeInitialState (ctx: Context, who: string, a: { taskId: bigint, claim: string }, committed?: Rank): void {
  requireNode(ctx, who)
  const t = getTask(ctx, a.taskId)
  ctx.ensure(t.phase === 'Verifying', P, 'WrongPhase')
  ensureEvidenceWindow(ctx, a.taskId, t, who, committed?.at)
  ctx.ensure(t.solver !== null && who !== t.solver, P, 'SolverCannotVerify')
  const rank = committed ?? uncommitted(ctx)
  // once the solver failed, a claim is still heard from an assigned verifier (the claim does not name its caller
  // and the pool is public, so another account may have had the same claim included first, and the verifier's
  // reject needs its own evidence), and from a committed caller that ranks before every right claim so far: the
  // shares are its (docs/economics.md "Copied disputes and claims")
  const late = t.solverFailed
  if (late) {
    ctx.ensure(activeAssignment(ctx, a.taskId, who)?.backed === false || (rank.committed && !outrankedOnFact(ctx, a.taskId, 'InitialState', 0, rank)), P, 'SolverAlreadyFailed')
  }
  const p = params(ctx)
  reserve(ctx, who, p.disputeBond)
  let ruling: InitRuling
  try {
    ruling = judgeInitClaim(
      // state 0 is leaf 0 whatever m, but the path's depth is ⌈log2(⌈step_count / m⌉ + 1)⌉: a deeper one would end in a node inside a state root
      { programHash: hexToU8a(t.programHash), proofRoot: hexToU8a(t.proofRoot), stepCount: t.stepCount, rootEvery: rootEveryOfTask(ctx, a.taskId) },
      decodeInitClaim(hexToU8a(a.claim))
    )
  } catch (e) {
    if (e instanceof InitClaimRejected) ctx.fail(P, e.reason)
    ctx.fail(P, 'InvalidClaim')
  }
  const reason = u8aToHex(new TextEncoder().encode(ruling.reason.slice(0, 256)))
  const solver = t.solver as string
  // an assigned verifier's claim is the evidence its reject needs, whichever way it is ruled
  noteEvidence(ctx, a.taskId, who)
  if (ruling.winner === 'challenger') {
    unreserve(ctx, who, p.disputeBond)
    noteChallenge(ctx, a.taskId, who, 'InitialState', 0n, 0, rank, 'Won')
    // a later right claim backs its caller's reject; the solver and the accepts were slashed by the first,
    // and its shares go to the earliest-ranked right claim
    if (late) {
      payShares(ctx, a.taskId)
      ctx.emit(P, 'InitialStateRuled', { taskId: a.taskId, challenger: who, solverWrong: true, slashed: 0n, reason })
      return
    }
    const solverStake = ctx.store.get<{ stake: bigint }>(P, 'Nodes', solver)?.stake ?? 0n
    const { taken: slashed, held } = slashForFact(ctx, solver, ppmOf(solverStake, p.slashPpm))
    t.solverFailed = true
    let shares = held
    // every accepting verdict vouched for the initial state (verifiers compare stateRoots[0] with the program's: docs/disputes.md)
    for (const v of t.verdicts) {
      if (!v.accept || v.void || v.verifier === who) continue
      const stake = ctx.store.get<{ stake: bigint }>(P, 'Nodes', v.verifier)?.stake ?? 0n
      const s = slashForFact(ctx, v.verifier, ppmOf(stake, VERIFIER_SLASH_PPM))
      shares += s.held
      v.void = true
      ctx.emit(P, 'VerdictSlashed', { taskId: a.taskId, verifier: v.verifier, step: 0, slashed: s.taken })
    }
    putTask(ctx, a.taskId, t)
    holdShare(ctx, a.taskId, 'InitialState', 0, shares)
    payShares(ctx, a.taskId)
    ctx.emit(P, 'InitialStateRuled', { taskId: a.taskId, challenger: who, solverWrong: true, slashed, reason })
    return
  }
  const toWinner = ppmOf(p.disputeBond, p.winnerSharePpm)
  repatriateReserved(ctx, who, solver, toWinner)
  slashReserved(ctx, who, p.disputeBond - toWinner)
  ctx.emit(P, 'Slashed', { who, amount: p.disputeBond, toWinner, toTreasury: p.disputeBond - toWinner })
  ctx.emit(P, 'InitialStateRuled', { taskId: a.taskId, challenger: who, solverWrong: false, slashed: p.disputeBond, reason })
}
