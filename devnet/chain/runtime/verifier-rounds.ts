import { TREASURY } from './balances.js'
import type { Context } from './context.js'
import { adjustActive, params, slashStake, type Params, type TaskInfo, type Verdict } from './arbitration.js'
import { getAssignments, putAssignments, type TaskAssignments } from './assignment.js'
import { drawWeighted } from './randomness.js'
import { MAX_VERIFY_EXTENSIONS, ROLE_VERIFIER } from './spec.js'

// Assignment rounds (docs/protocol.md, "Verifier assignment"). Round 0 is
// drawn in the block after the randomness block committed_at + 1 (the block
// whose hash also seeds each verifier's sample). When the challenge window
// closes without a quorum, every assigned verifier whose verdict does not
// stand is closed (lapsed with a penalty if it was silent or rejected without
// evidence of its own, released otherwise) and the extension draws its
// replacements from the hash of the block that closed the round: randomness
// that did not exist while the closed verifier could still have acted.

const P = 'Arbitration'

/**
 * What silence (or a bare reject) costs an assigned verifier, besides its
 * reward: a bond, plus a 1/(rounds) share of the solver's reward. A coalition
 * that wants a task to end Unverified (a submitter keeping the escrow) must be
 * silent in every one of the MAX_VERIFY_EXTENSIONS + 1 rounds, so it pays more
 * than the reward it withholds (docs/economics.md).
 */
export function silencePenalty (p: Params, t: Pick<TaskInfo, 'solverReward'>): bigint {
  return p.disputeBond + t.solverReward / BigInt(MAX_VERIFY_EXTENSIONS + 1)
}

/** Registered verifiers that may be drawn for the task: never its submitter or solver, nor anyone drawn for it before. */
function candidates (ctx: Context, t: TaskInfo, a: TaskAssignments): Array<{ account: string, stake: bigint }> {
  const minStake = params(ctx).minStake
  const drawn = new Set(a.verifiers.map(v => v.verifier))
  const out: Array<{ account: string, stake: bigint }> = []
  for (const acc of ctx.store.read<string[]>(P, 'Registered')) {
    if (acc === t.submitter || acc === t.solver || drawn.has(acc)) continue
    const n = ctx.store.get<{ roles: number, stake: bigint }>(P, 'Nodes', acc)
    if (n !== undefined && (n.roles & ROLE_VERIFIER) !== 0 && n.stake >= minStake) out.push({ account: acc, stake: n.stake })
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
  const seed = ctx.store.read<string>('System', 'BlockHash', a.seedBlock)
  const drawn = drawWeighted(seed, id, a.round, Math.max(0, t.verifierCount - active), candidates(ctx, t, a))
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
 * does not stand is closed (its verdict voided): lapsed with the silence
 * penalty when it gave no verdict or a reject without evidence of its own,
 * released otherwise (evidence, or an accept already slashed). With
 * `replace`, the next round's draw is scheduled from this block's hash.
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
    // an accept that did not stand was already answered for (slashed as a blind accept); a reject
    // without evidence of its own is no more than silence
    if (x.backed || v?.accept === true) {
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
