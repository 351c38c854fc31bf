import { TREASURY } from './balances.js'
import type { Context } from './context.js'
import { adjustActive, params, type TaskInfo, type Verdict } from './arbitration.js'
import { slashStake } from './slashes.js'
import { getAssignments, putAssignments, type TaskAssignments } from './assignment.js'
import { drawWeighted } from './randomness.js'
import { answerableVerifiers, releaseReservation, silencePenalty } from './verifier-stake.js'
import { blockRandomness } from './block-randomness.js'
import { taskRuntime } from './runtime-capability.js'

// Assignment rounds (docs/protocol.md, "Verifier assignment"). Round 0 is
// drawn in the block after the randomness block committed_at + 1 (the block
// whose hash also seeds each verifier's sample). When the challenge window
// closes without a quorum, every assigned verifier whose verdict does not
// stand is closed (lapsed with the penalty of verifier-stake.ts, or released
// when its accept was already slashed: closeRound) and the extension draws its
// replacements from the hash of the block that closed the round: randomness
// that did not exist while the closed verifier could still have acted.

const P = 'Arbitration'

/**
 * Registered verifiers that may be drawn for the task: never its submitter or
 * solver, nor anyone drawn for it before; among them, only those whose stake
 * not yet bound to other assignments covers this task's penalty (a
 * minimum-stake puppet, or one verifier drawn for many tasks at once, would
 * otherwise fail slots for less than they withhold), and that declared the
 * task's runtime if it needs one (a peer without psk1's addon would replay a
 * psk1 task too slowly: runtime-capability.ts). The first draw also
 * takes the verifiers reserved at the solver's selection (`reserved`), whatever
 * their stake, roles or runtimes since: they answered for the task then, and leaving
 * the pool after the commit must not empty it.
 */
function candidates (ctx: Context, id: bigint, t: TaskInfo, a: TaskAssignments, reserved: string[]): Array<{ account: string, stake: bigint }> {
  const excluded = new Set([t.submitter, ...(t.solver !== null ? [t.solver] : []), ...a.verifiers.map(v => v.verifier)])
  const out = answerableVerifiers(ctx, silencePenalty(params(ctx), t), excluded, taskRuntime(ctx, id))
  for (const who of reserved) {
    const n = ctx.store.get<{ stake: bigint }>(P, 'Nodes', who)
    if (n !== undefined && n.stake > 0n && !excluded.has(who) && !out.some(x => x.account === who)) out.push({ account: who, stake: n.stake })
  }
  return out
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
  // the reservation ends with the first draw: its stake is free again for this draw
  const reserved = releaseReservation(ctx, id)
  const drawn = drawWeighted(seed, id, a.round, want, candidates(ctx, id, t, a, reserved))
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
 * (already slashed as a blind accept), lapsed with the penalty otherwise:
 * silence, a bare reject, a reject whose own evidence failed (a dispute or
 * initial-state claim it lost: the task would have failed had it been
 * right), or no verdict after its availability challenge was served (it had
 * the data: availability-serve.ts). With `replace`, the next round's draw is
 * scheduled from this block's hash.
 */
export function closeRound (ctx: Context, id: bigint, t: TaskInfo, stands: (v: Verdict) => boolean, replace: boolean): void {
  const a = getAssignments(ctx, id)
  if (a === undefined) return
  const penalty = silencePenalty(params(ctx), t)
  for (const x of a.verifiers) {
    if (x.status !== 'Active') continue
    const v = t.verdicts.find(y => y.verifier === x.verifier)
    if (v !== undefined && stands(v)) continue
    if (v !== undefined) v.void = true
    if (v?.accept === true) {
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
  releaseReservation(ctx, id)
  for (const x of getAssignments(ctx, id)?.verifiers ?? []) if (x.status === 'Active') adjustActive(ctx, x.verifier, -1)
}
