import type { Params, TaskInfo } from '../../../protocols/pallet-types.js'
import { activeAssignment, getAssignments, putAssignments, type VerifierAssignment } from './assignment.js'
import type { Context } from './context.js'
import { rerunAllowance, type ReferenceCost } from './rerun-cost.js'

// The backing grace (docs/economics.md "Verifier assignment"), part of the
// Arbitration pallet. An assigned verifier's reject stands only with evidence
// of its own (a dispute, an availability challenge, an initial-state claim),
// and that evidence comes after the reject: its node re-runs the step (a
// segment: one more engine process) before it can open the dispute. A reject
// decided in the window's last blocks would meet a closed window, be voided
// and lapse with the silence penalty, though it was right. So a reject
// submitted in time extends its assignment's deadline to at least the
// reject's block + backingGrace, and until then that verifier alone may
// still open its evidence, once. Everyone else keeps the window.
//
// Bounded: the verdict itself is due by the window's end and is given once,
// so every grace ends by challenge_end + backingGrace whatever the number of
// rejecting verifiers (a coalition holds the task one grace, not one each);
// after its evidence the verifier is backed and has no more time; the
// evidence it opens runs by its own clocks, as one opened at the window's
// last block would.

const P = 'Arbitration'

/**
 * Blocks an honest verifier at the network's reference speed needs, after its
 * reject, to back it: re-run from a checkpoint one checkpoint interval and a
 * segment (m steps), priced as every re-run is (rerunAllowance: the
 * submitter's pace, or the program's cost at the reference speed if less, as
 * for tapeAllowance and segmentAllowance), then have the call included:
 * dispute_clock, the clock every party gets to answer on chain.
 */
export function backingGrace (p: Pick<Params, 'disputeClock'>, t: Pick<TaskInfo, 'steps' | 'checkpointEvery' | 'solveTimeout'>, rootEvery: number, cost?: ReferenceCost): number {
  return p.disputeClock + rerunAllowance(t, t.checkpointEvery + rootEvery, cost)
}

/** `who` just rejected in time as an assigned verifier: its evidence is due by the later of its deadline and now + grace. */
export function openBackingGrace (ctx: Context, taskId: bigint, who: string, grace: number): void {
  const all = getAssignments(ctx, taskId)
  const mine = all?.verifiers.find(v => v.verifier === who && v.status === 'Active')
  if (all === undefined || mine === undefined || mine.backed) return
  mine.deadline = Math.max(mine.deadline, ctx.now + grace)
  putAssignments(ctx, taskId, all)
}

/** An assignment still awaiting its reject's evidence: active, not yet backed, by its deadline, its reject in and not void. */
function awaitsEvidence (ctx: Context, t: TaskInfo, x: VerifierAssignment, at = ctx.now): boolean {
  return x.status === 'Active' && !x.backed && at <= x.deadline && t.verdicts.some(v => v.verifier === x.verifier && !v.accept && !v.void)
}

/** `who` is such an assigned verifier: the one caller heard after the window. */
function inGrace (ctx: Context, taskId: bigint, t: TaskInfo, who: string, at = ctx.now): boolean {
  const mine = activeAssignment(ctx, taskId, who)
  return mine !== undefined && awaitsEvidence(ctx, t, mine, at)
}

/**
 * The window rule of the evidence calls: anyone until challenge_end, then only a rejecting verifier in its grace.
 * `at`: the block of the commitment a reveal opens (challenge-commit.ts): a challenge committed in time may be revealed after it.
 */
export function ensureEvidenceWindow (ctx: Context, taskId: bigint, t: TaskInfo, who: string, at = ctx.now): void {
  ctx.ensure(at <= t.challengeEnd || inGrace(ctx, taskId, t, who, at), P, 'ChallengeWindowClosed')
}

/** Some rejecting verifier may still back its reject: the task must not settle before its evidence can come. */
export function backingPending (ctx: Context, taskId: bigint, t: TaskInfo): boolean {
  return (getAssignments(ctx, taskId)?.verifiers ?? []).some(x => awaitsEvidence(ctx, t, x))
}
