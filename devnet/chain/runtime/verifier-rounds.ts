import { TREASURY } from './balances.js'
import type { Context } from './context.js'
import { adjustActive, params, slashStake, type TaskInfo, type Verdict } from './arbitration.js'
import { getAssignments, putAssignments, type TaskAssignments } from './assignment.js'
import { answeredChallengers } from './availability.js'
import { drawWeighted } from './randomness.js'
import { answerableVerifiers, silencePenalty } from './verifier-stake.js'
import { blockRandomness } from './block-randomness.js'

// Assignment rounds (docs/protocol.md, "Verifier assignment"). Round 0 is
// drawn in the block after the randomness block committed_at + 1 (the block
// whose hash also seeds each verifier's sample). When the challenge window
// closes without a quorum, every assigned verifier whose verdict does not
// stand is closed (lapsed with the penalty of verifier-stake.ts, or released
// when its accept was already slashed or its availability challenge was
// answered: closeRound) and the extension draws its
// replacements from the hash of the block that closed the round: randomness
// that did not exist while the closed verifier could still have acted.

const P = 'Arbitration'

/**
 * Registered verifiers that may be drawn for the task: never its submitter or
 * solver, nor anyone drawn for it before; among them, those whose stake not
 * yet bound to other assignments covers this task's penalty (a minimum-stake
 * puppet, or one verifier drawn for many tasks at once, would otherwise fail
 * slots for less than they withhold). When fewer of those than `want` exist,
 * every eligible verifier: a submitter must not make its task unverifiable
 * (the solver's work published and unpaid) by asking a reward larger than
 * any verifier's stake.
 */
function candidates (ctx: Context, t: TaskInfo, a: TaskAssignments, want: number): Array<{ account: string, stake: bigint }> {
  const excluded = new Set([t.submitter, ...(t.solver !== null ? [t.solver] : []), ...a.verifiers.map(v => v.verifier)])
  const covered = answerableVerifiers(ctx, silencePenalty(params(ctx), t), excluded)
  return covered.length >= want ? covered : answerableVerifiers(ctx, undefined, excluded)
}

/** Draws the verifiers a round needs once its randomness block is in the past (on_initialize of a Verifying task). */
export function drawIfDue (ctx: Context, id: bigint, t: TaskInfo): void {
  let a = getAssignments(ctx, id)
  if (a === undefined) {
    if (ctx.now < t.committedAt + 2) return
    a = { round: 0, drawAt: ctx.now, seedBlock: t.committedAt + 1, verifiers: [] }
  }
  if (a.drawAt === 0 || ctx.now < a.drawAt) return
  const active = a.verifiers.filter(v => v.status === 'Active').length
  const seed = blockRandomness(ctx, a.seedBlock)
  const want = Math.max(0, t.verifierCount - active)
  const drawn = drawWeighted(seed, id, a.round, want, candidates(ctx, t, a, want))
  for (const verifier of drawn) {
    a.verifiers.push({ verifier, round: a.round, seedBlock: a.seedBlock, deadline: t.challengeEnd, backed: false, status: 'Active' })
    // its stake answers for its silence until the task ends: it cannot unregister before
    adjustActive(ctx, verifier, 1)
  }
  a.drawAt = 0
  putAssignments(ctx, id, a)
  ctx.emit(P, 'VerifiersAssigned', { taskId: id, verifiers: drawn, round: a.round, seedBlock: a.seedBlock, deadline: t.challengeEnd })
}

/** A reject with no dispute, availability challenge or initial-state claim of its verifier's own is void: it neither blocks nor earns. */
export function voidBareRejects (ctx: Context, id: bigint, t: TaskInfo): void {
  const a = getAssignments(ctx, id)
  for (const v of t.verdicts) {
    if (v.accept || v.void) continue
    if (a?.verifiers.some(x => x.verifier === v.verifier && x.backed) !== true) v.void = true
  }
}

/**
 * The round ended without a quorum: every active assignment whose verdict
 * does not stand is closed (its verdict voided): released when it accepted
 * (already slashed as a blind accept) or its availability challenge was
 * answered (the chain cannot tell whether the solver served it), lapsed with
 * the penalty otherwise: silence, a bare reject, or a reject whose own
 * evidence failed (a dispute or initial-state claim it lost: the task would
 * have failed had it been right). With `replace`, the next round's draw is
 * scheduled from this block's hash.
 */
export function closeRound (ctx: Context, id: bigint, t: TaskInfo, stands: (v: Verdict) => boolean, replace: boolean): void {
  const a = getAssignments(ctx, id)
  if (a === undefined) return
  const penalty = silencePenalty(params(ctx), t)
  const unserved = answeredChallengers(ctx, id)
  for (const x of a.verifiers) {
    if (x.status !== 'Active') continue
    const v = t.verdicts.find(y => y.verifier === x.verifier)
    if (v !== undefined && stands(v)) continue
    if (v !== undefined) v.void = true
    if (v?.accept === true || unserved.has(x.verifier)) {
      x.status = 'Released'
      ctx.emit(P, 'AssignmentReleased', { taskId: id, verifier: x.verifier, round: x.round })
    } else {
      x.status = 'Lapsed'
      const taken = slashStake(ctx, x.verifier, TREASURY, penalty)
      ctx.emit(P, 'AssignmentLapsed', { taskId: id, verifier: x.verifier, round: x.round, penalty: taken })
    }
    adjustActive(ctx, x.verifier, -1)
  }
  if (replace) {
    a.round += 1
    a.seedBlock = ctx.now
    a.drawAt = ctx.now + 1
  }
  putAssignments(ctx, id, a)
}

/** The task is over: the stakes of its still-assigned verifiers are free to leave. */
export function releaseAssigned (ctx: Context, id: bigint): void {
  for (const x of getAssignments(ctx, id)?.verifiers ?? []) if (x.status === 'Active') adjustActive(ctx, x.verifier, -1)
}
