import type { Context } from './context.js'
import type { ProofRuling, TaskInfo } from './arbitration.js'
import { getAssignments } from './assignment.js'
import { blockRandomness } from './block-randomness.js'
import { requiredSample, sampleHoldsTransition } from '../../../protocols/verification/verdict.js'
import { rootEveryOfTask } from './segments.js'
import { FORCED_ERRORS_PER_DRAW } from '../../../protocols/dispute/forced-error.js'

// Who shares a revealed forced error's jackpot (part of the Arbitration
// pallet; settlement.ts pays it). The step of a dispute is public once its
// open_dispute is included, and re-running one step to win the same claim is
// cheap, so "everyone who won a ruling at the step" would let copies (sybils,
// or the solver's own puppets, who know the step from selection on) dilute
// the share of the verifier that found it. The jackpot therefore goes only to
// challengers whose eligibility the chain fixed before anyone could see the
// step: verifiers it drew for the task whose own sample (seeded by their
// assignment's randomness block and account) holds the forced step, i.e.
// exactly the verifiers whose accept would have had to list it and would have
// been slashed for it. Nobody can choose to be one: the draw is stake-weighted
// from randomness that did not exist at commit time, and the sample follows.

/** Whether `who` was drawn to verify the task with a sample holding transition `step` (its segment at m > 1). */
export function sampledForcedStep (ctx: Context, id: bigint, t: TaskInfo, who: string, step: number): boolean {
  const mine = getAssignments(ctx, id)?.verifiers.find(v => v.verifier === who)
  if (mine === undefined || ctx.now <= mine.seedBlock) return false
  const m = rootEveryOfTask(ctx, id)
  const required = t.stepCount === 0 ? [] : requiredSample(blockRandomness(ctx, mine.seedBlock), who, t.stepCount, t.verifierCount, m)
  return sampleHoldsTransition(required, step, t.stepCount, t.divergence !== null, m)
}

/**
 * The winners of forced step `step`'s part of the jackpot: one per distinct
 * challenger of a `ForcedError` ruling at the step that was drawn to check it
 * (sampledForcedStep), whenever in the challenge window it opened:
 * independent finders share, a later one is not punished for a slower replay.
 * Other challengers win their claim and get their bond back.
 */
export function jackpotWinners (ctx: Context, id: bigint, t: TaskInfo, step: number): ProofRuling[] {
  const seen = new Set<string>()
  const out: ProofRuling[] = []
  for (const r of [...t.rulings].sort((a, b) => a.disputeId < b.disputeId ? -1 : 1)) {
    if (r.step !== step || r.outcome !== 'ForcedError' || seen.has(r.challenger) || !sampledForcedStep(ctx, id, t, r.challenger, r.step)) continue
    seen.add(r.challenger)
    out.push(r)
  }
  return out
}

/**
 * The jackpot J = min(jackpot, reward) split across the draw's n forced
 * steps: J/n each (the first also takes what the division leaves, so the
 * parts add up to J). The solver pays J however many forced errors its draw
 * ordered; each is worth catching on its own, so a verifier that caught one
 * and stops replaying forgoes the parts of those left in the rest of its
 * sample (docs/economics.md, "Forced errors: several per task").
 */
export function jackpotParts (jackpot: bigint, owed: readonly number[]): Map<number, bigint> {
  const out = new Map<number, bigint>()
  if (owed.length === 0) return out
  const per = jackpot / BigInt(owed.length)
  owed.forEach((f, i) => out.set(f, per + (i === 0 ? jackpot - per * BigInt(owed.length) : 0n)))
  return out
}

/**
 * Each forced step's part, shared equally by its winners, or forfeited to
 * the treasury when nobody drawn to check it caught it. A draw not revealed
 * costs J all the same; the forced errors revealed after rulings are then
 * paid J/FORCED_ERRORS_PER_DRAW each, what they would be worth at the most
 * forced errors a draw orders (withholding the draw never raises the
 * solver's pay, nor lowers a finder's below that).
 */
export function jackpotShares (
  ctx: Context, id: bigint, t: TaskInfo, owed: number[] | 'unrevealed', jackpot: bigint
): { paid: Array<{ ruling: ProofRuling, amount: bigint }>, forfeited: bigint } {
  const parts = owed !== 'unrevealed'
    ? jackpotParts(jackpot, owed)
    : new Map(revealedSteps(t).map(f => [f, jackpot / BigInt(FORCED_ERRORS_PER_DRAW)]))
  const paid: Array<{ ruling: ProofRuling, amount: bigint }> = []
  let won = 0n
  for (const [f, part] of parts) {
    const winners = jackpotWinners(ctx, id, t, f)
    if (winners.length === 0) continue
    const share = part / BigInt(winners.length)
    for (const w of winners) { paid.push({ ruling: w, amount: share }); won += share }
  }
  return { paid, forfeited: jackpot - won }
}

/** The forced steps the solver revealed after rulings (reveal_forced_error), within the proof's transitions. */
const revealedSteps = (t: TaskInfo): number[] =>
  [...new Set(t.rulings.filter(r => r.outcome === 'ForcedError' && r.step < t.stepCount).map(r => r.step))].sort((a, b) => a - b)
