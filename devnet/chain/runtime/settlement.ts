import { settleAnsweredDeposits } from './availability.js'
import { datasetWithheldFrom } from './dataset-records.js'
import { TREASURY, repatriateReserved, unreserve } from './balances.js'
import type { Context } from './context.js'
import { adjustActive, listedForcedStep, listsForcedStep, params, putTask, type TaskInfo, type Verdict } from './arbitration.js'
import { slashStake } from './slashes.js'
import { expireIfDue, solverTimedOut, trySelect } from './selection.js'
import { ppmOf } from './randomness.js'
import { MAX_VERIFY_EXTENSIONS, VERIFIER_SLASH_PPM } from './spec.js'
import { jackpotShares } from './jackpot.js'
import { earnedReward, emitDiverged } from './divergence.js'
import { closeRound, drawIfDue, releaseAssigned, voidBareRejects } from './verifier-rounds.js'
import { servedPending } from './served-grace.js'
import { accrueRent, settleRent } from './capacity-rent.js'
import { rootEveryOfTask } from './segments.js'
import { backingPending } from './late-backing.js'
import { awaitsDraw, closeDraw, owedForcedSteps } from './draw-reveal.js'
import { faultedStillOpen, guardTask, readableOpenTasks } from './hook-guard.js'
import { closeExcused, liveCommits, payShares, penalizeForFact, releaseCommitments } from './challenge-shares.js'

// The Arbitration pallet's block hook: solver selection retries, solver
// timeouts, forced-error penalties, and settlement of a task once its
// challenge window has closed with every dispute resolved. Settlement pays
// only for verification that happened: a quorum of verdicts that stood, from
// verifiers the chain assigned (verifier-rounds.ts draws and replaces them).

const P = 'Arbitration'
/** Rulings whose reveal deadline passed without a reveal: the solver is penalized for each. */
function penalizeUnrevealed (ctx: Context, id: bigint, t: TaskInfo): boolean {
  let changed = false
  for (const r of t.rulings) {
    if (r.outcome !== 'AwaitingReveal' || ctx.now <= r.revealDeadline) continue
    r.outcome = 'SolverPenalized'
    // the solver only: a ruling on its signed tape does not show its committed proof wrong (docs/economics.md "Thrown disputes");
    // the challenger's share goes by rank among the challengers of the disputed step (challenge-shares.ts)
    const slashed = penalizeForFact(ctx, id, t, 'Dispute', BigInt(r.disputeId), r.challenger, r.step)
    ctx.emit(P, 'SolverPenalized', { taskId: id, disputeId: r.disputeId, slashed })
    changed = true
  }
  return changed
}

/**
 * A verdict stood if it was right. With a revealed forced error at step f, an
 * accept that lists f as checked was a false statement (it is slashed
 * instead), an accept whose sample missed f was diligent and stands, and a
 * reject stands only if its verifier caught f, or if the submitter left its
 * dataset challenge unanswered (dataset-availability.ts).
 */
function stood (t: TaskInfo, v: Verdict, m: number, withheld: ReadonlySet<string>): boolean {
  if (v.void) return false
  if (t.solverFailed) return !v.accept
  if (v.accept) return !listsForcedStep(t, v, m)
  // a reject backed by a dataset challenge the submitter left unanswered: it could not replay, by the submitter's doing
  if (withheld.has(v.verifier)) return true
  return t.rulings.some(r => r.outcome === 'ForcedError' && r.challenger === v.verifier)
}

/** Pays each standing verdict its reward out of the escrow; returns the total. */
function payStanding (ctx: Context, id: bigint, t: TaskInfo): bigint {
  let paid = 0n
  const m = rootEveryOfTask(ctx, id)
  const withheld = datasetWithheldFrom(ctx, id)
  for (const v of t.verdicts) {
    if (!stood(t, v, m, withheld)) continue
    repatriateReserved(ctx, t.submitter, v.verifier, t.verifierReward)
    paid += t.verifierReward
  }
  return paid
}

/** The task is over: its solver's and assigned verifiers' stakes are free to leave again. */
function releaseParties (ctx: Context, id: bigint, t: TaskInfo): void {
  adjustActive(ctx, t.solver, -1)
  releaseAssigned(ctx, id)
}

/** Accepting verifiers that reported the forced step as checked: they did not replay it. */
function slashBlindAccepts (ctx: Context, id: bigint, t: TaskInfo): void {
  if (t.solverFailed) return
  const m = rootEveryOfTask(ctx, id)
  for (const v of t.verdicts) {
    const step = v.void || !v.accept ? undefined : listedForcedStep(t, v, m)
    if (step === undefined) continue
    const stake = ctx.store.get<{ stake: bigint }>(P, 'Nodes', v.verifier)?.stake ?? 0n
    const taken = slashStake(ctx, v.verifier, TREASURY, ppmOf(stake, VERIFIER_SLASH_PPM))
    v.void = true
    ctx.emit(P, 'VerdictSlashed', { taskId: id, verifier: v.verifier, step, slashed: taken })
  }
}

function settle (ctx: Context, id: bigint, t: TaskInfo): void {
  const success = !t.solverFailed
  let solverPaid = 0n
  let jackpotPaid = 0n
  if (success && t.solver !== null) {
    // the jackpot comes out of the solver's own reward: a puppet that catches
    // the solver's forced error moves money within the coalition, never creates it;
    // it is owed whenever the draw ordered one (draw-reveal.ts), split across its
    // forced errors (jackpot.ts), and each one's part nobody won goes to the treasury
    const reward = earnedReward(t)
    const owed = owedForcedSteps(ctx, id, t)
    const jackpot = owed !== 'unrevealed' && owed.length === 0 ? 0n : (params(ctx).jackpot < reward ? params(ctx).jackpot : reward)
    const { paid, forfeited } = jackpotShares(ctx, id, t, owed, jackpot)
    for (const w of paid) {
      repatriateReserved(ctx, t.submitter, w.ruling.challenger, w.amount)
      ctx.emit(P, 'JackpotPaid', { taskId: id, disputeId: w.ruling.disputeId, who: w.ruling.challenger, amount: w.amount })
      jackpotPaid += w.amount
    }
    if (forfeited > 0n) {
      repatriateReserved(ctx, t.submitter, TREASURY, forfeited)
      ctx.emit(P, 'JackpotForfeited', { taskId: id, amount: forfeited })
      jackpotPaid += forfeited
    }
    solverPaid = reward - jackpotPaid
    repatriateReserved(ctx, t.submitter, t.solver, solverPaid)
  }
  closeDraw(ctx, id)
  const verifiersPaid = payStanding(ctx, id, t)
  const refunded = t.escrow - solverPaid - jackpotPaid - verifiersPaid
  unreserve(ctx, t.submitter, refunded)
  settleAnsweredDeposits(ctx, id, success, votedVerifiers(ctx, id, t))
  releaseParties(ctx, id, t)
  t.phase = success ? 'Settled' : 'Failed'
  putTask(ctx, id, t)
  ctx.emit(P, 'TaskSettled', { taskId: id, success, solverPaid, verifiersPaid, refunded })
  if (success) emitDiverged(ctx, id, t, solverPaid)
}

/** Nobody verified enough: the submitter gets its escrow back less the verdicts that stood; the solver is neither paid nor slashed. */
function settleUnverified (ctx: Context, id: bigint, t: TaskInfo, standing: number): void {
  const refunded = t.escrow - payStanding(ctx, id, t)
  unreserve(ctx, t.submitter, refunded)
  settleAnsweredDeposits(ctx, id, false, votedVerifiers(ctx, id, t))
  releaseParties(ctx, id, t)
  t.phase = 'Unverified'
  putTask(ctx, id, t)
  ctx.emit(P, 'TaskUnverified', { taskId: id, standing, refunded })
}

/** The verifiers whose verdicts stood (an assigned challenger's deposit comes back to it: settleAnsweredDeposits). */
function standingVerifiers (ctx: Context, id: bigint, t: TaskInfo): Set<string> {
  const m = rootEveryOfTask(ctx, id)
  const withheld = datasetWithheldFrom(ctx, id)
  return new Set(t.verdicts.filter(v => stood(t, v, m, withheld)).map(v => v.verifier))
}

/**
 * The assigned verifiers whose answered challenges' deposits come back: those
 * whose verdicts stood, and on a task that failed on someone's evidence those
 * whose accepts were not slashed (served, they voted; an accept does not
 * stand on a failed task, which says nothing of a sample that missed the
 * wrong step). A challenger served and then silent pays whoever served.
 */
function votedVerifiers (ctx: Context, id: bigint, t: TaskInfo): Set<string> {
  const out = standingVerifiers(ctx, id, t)
  if (t.solverFailed) for (const v of t.verdicts) if (v.accept && !v.void) out.add(v.verifier)
  return out
}

/** Verdicts that count towards the quorum: those that would be paid if the task settled now. */
function standingVerdicts (t: TaskInfo, m: number, withheld: ReadonlySet<string>): number {
  return t.verdicts.filter(v => stood(t, v, m, withheld)).length
}

/** The challenge window is over and nothing is pending: settle, extend the window for a quorum, or give up. */
function closeVerification (ctx: Context, id: bigint, t: TaskInfo): void {
  slashBlindAccepts(ctx, id, t)
  voidBareRejects(ctx, id, t)
  const m = rootEveryOfTask(ctx, id)
  const withheld = datasetWithheldFrom(ctx, id)
  const standing = standingVerdicts(t, m, withheld)
  // a failed proof needs no quorum: the dispute or availability challenge that failed it is the verification
  if (t.solverFailed || standing >= t.verifierCount) {
    // a verified task is paid once its solver's draw is known (draw-reveal.ts)
    if (!t.solverFailed && awaitsDraw(ctx, id)) { putTask(ctx, id, t); return }
    settle(ctx, id, t)
    return
  }
  // assigned verifiers whose verdicts do not stand are closed; an extension draws their replacements
  const extend = t.extensions < MAX_VERIFY_EXTENSIONS
  closeRound(ctx, id, t, v => stood(t, v, m, withheld), extend)
  if (extend) {
    t.extensions += 1
    t.challengeEnd = ctx.now + t.challengeWindow
    putTask(ctx, id, t)
    ctx.emit(P, 'VerificationExtended', { taskId: id, challengeEnd: t.challengeEnd, standing })
    return
  }
  settleUnverified(ctx, id, t, standing)
}

const FINAL: ReadonlySet<string> = new Set(['Settled', 'Failed', 'Unverified', 'Expired'])

/** on_initialize: selection retries, solver timeouts, settlement after the challenge window. */
export function onInitialize (ctx: Context): void {
  // each task in its own storage layer: one that throws is quarantined, the block and the others go on (hook-guard.ts)
  const open = readableOpenTasks(ctx)
  if (open.length === 0) return
  const still: bigint[] = []
  for (const id of open) if (guardTask(ctx, id, () => stepTask(ctx, id))) still.push(id)
  if (still.length !== open.length) ctx.store.put(P, 'OpenTasks', undefined, still)
}

/** One open task's part of on_initialize; returns whether it is still open. */
function stepTask (ctx: Context, id: bigint): boolean {
  const t = ctx.store.get<TaskInfo>(P, 'Tasks', id)
  if (t === undefined) return false
  accrueRent(ctx, id, t)
  if (t.phase === 'Unassigned') {
    if (!expireIfDue(ctx, id, t)) trySelect(ctx, id, t, t.createdAt === ctx.now - 1 && t.excluded.length === 0)
  } else if (t.phase === 'Solving' && ctx.now > t.deadline && t.solver !== null) {
    solverTimedOut(ctx, id, t, t.solver)
  } else if (t.phase === 'Verifying') {
    drawIfDue(ctx, id, t)
    if (penalizeUnrevealed(ctx, id, t)) putTask(ctx, id, t)
    const live = liveCommits(ctx, id)
    closeExcused(ctx, id, t)
    payShares(ctx, id, live)
    // a reject in its backing grace may still get its evidence (late-backing.ts), a served challenger its verdict
    // (availability-serve.ts), a commitment made in the window its reveal
    if (ctx.now > t.challengeEnd && t.openDisputes === 0 && !t.rulings.some(r => r.outcome === 'AwaitingReveal') && !backingPending(ctx, id, t) && !servedPending(ctx, id, t) && live.length === 0) closeVerification(ctx, id, t)
  } else if (t.phase === 'Faulted') {
    // quarantined, but a ruling against its solver still awaits the reveal (hook-guard.ts)
    if (penalizeUnrevealed(ctx, id, t)) putTask(ctx, id, t)
  }
  const after = ctx.store.get<TaskInfo>(P, 'Tasks', id)
  const open = after?.phase === 'Faulted' ? faultedStillOpen(ctx, after) : after !== undefined && !FINAL.has(after.phase)
  if (open) return true
  if (after !== undefined && after.phase !== 'Faulted') settleRent(ctx, id, after)
  // the task is over: nothing can still win a held share, and a commitment can no longer be revealed
  payShares(ctx, id, [], true)
  releaseCommitments(ctx, id, after?.phase === 'Faulted')
  return false
}
