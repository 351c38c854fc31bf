import { hexToU8a, u8aToHex } from '@polkadot/util'
import { sha256 } from '../../../protocols/commit/merkle.js'
import { MAX_SEGMENT_SEQ, MAX_SEQ, decodeSignedBytes, encodeSigned, roleOfSeq, verifySigned, type Msg, type Signed } from '../../../protocols/dispute/messages.js'
import { continuationError, linksTo, type SegmentRule } from '../../../protocols/dispute/transcript.js'
import { adjustActive, disputableSteps, getTask, params, putTask, requireNode, type TaskInfo } from './arbitration.js'
import { noteEvidence } from './assignment.js'
import { ensureEvidenceWindow } from './late-backing.js'
import { reserve } from './balances.js'
import type { Context } from './context.js'
import { resolve } from './dispute-rulings.js'
import { contextOf, getDispute, other, partyOf, putDispute, roleOf, verify, type DisputeInfo, type DisputeKind, type PartyName } from './dispute-state.js'
import { disputableSegments, oneStepOf, rootEveryOfTask, segmentAllowance, segmentRuleOf } from './segments.js'
import { queueTape, storableBlock, tapeFrom } from './tape-queue.js'
import { referenceCostOf, rerunAllowance, type ReferenceCost } from './rerun-cost.js'
import { noteChallenge, uncommitted, type Rank } from './challenge-shares.js'

export type { DisputeInfo, DisputeKind, Force, PartyName } from './dispute-state.js'
export { adjudicate, checkAgreement } from './dispute-rulings.js'

// Disputes, part of the Arbitration pallet (docs/disputes.md). The bisection
// runs off chain between the two parties; the chain sees a cooperative
// dispute twice: open_dispute and the final claim (adjudicate). A party
// that waits in vain for an answer forces the move: it posts the other side's
// last signed message and its own next move (force_move); the addressee must
// post its answer, bytes included, within the response window (answer_move),
// or anyone may end the dispute against it (claim_timeout). The chain checks
// signatures (bound to genesis, task, dispute and role), author parity, the
// seq/prev linkage and that each move continues the one before
// (protocols/dispute/transcript.ts), so a forced move is always answerable by
// an honest party and an answer is of the kind the move asks for.

const P = 'Arbitration'
const ZERO_HASH = '0x' + '00'.repeat(32)

/**
 * Blocks the defender gets on top of the response window for its first
 * message (the commit): it must re-execute the disputed step from the
 * checkpoint before it, (step mod checkpoint_every) + 1 steps, priced as every
 * re-run (rerunAllowance: the pace the submitter allowed, or the program's
 * cost at the reference speed if less).
 */
export function tapeAllowance (t: Pick<TaskInfo, 'steps' | 'checkpointEvery' | 'solveTimeout'>, step: number, cost?: ReferenceCost): number {
  return rerunAllowance(t, (step % t.checkpointEvery) + 1, cost)
}

/**
 * The dispute's overall deadline: every one of the at most MAX_SEQ + 1
 * messages may be forced, each costing up to a window of waiting before the
 * force, a block to post it, and a window to answer.
 */
export function disputeDeadline (openedAt: number, window: number, allowance: number, maxSeq = MAX_SEQ): number {
  return openedAt + allowance + (maxSeq + 1) * 2 * (window + 1)
}

/** A segment dispute's rule (undefined: a one-step dispute), read once per call. */
function ruleOf (ctx: Context, d: DisputeInfo): SegmentRule | undefined {
  return segmentRuleOf(ctx, d, getTask(ctx, d.taskId))
}

/** The step of a one-step dispute (disputed_step, or a segmented proof's diverged step). */
function stepOf (ctx: Context, d: DisputeInfo): number {
  if (rootEveryOfTask(ctx, d.taskId) === 1) return d.disputedStep
  return oneStepOf(ctx, d, getTask(ctx, d.taskId)) ?? d.disputedStep
}

/** `rank`: the commitment it reveals (reveal_dispute); without one it ranks after every committed challenge (challenge-shares.ts). */
export function openDispute (ctx: Context, who: string, a: { taskId: bigint, defender: string, kind: DisputeKind, disputedStep: number }, rank?: Rank): bigint {
  requireNode(ctx, who)
  const t = getTask(ctx, a.taskId)
  ctx.ensure(t.phase === 'Verifying', P, 'WrongPhase')
  ensureEvidenceWindow(ctx, a.taskId, t, who, rank?.at)
  // a task with a root every m > 1 steps is disputed by segment: disputed_step is the segment j
  // (and a diverged proof's last step, one past the segments: a one-step dispute from the last leaf)
  const m = rootEveryOfTask(ctx, a.taskId)
  ctx.ensure(a.disputedStep < (m > 1 ? disputableSegments(t, m) : disputableSteps(t)), P, 'InvalidStep')
  ctx.ensure(who !== t.solver, P, 'SolverCannotVerify')
  // a verdict is wrong iff the proof is wrong at a step it checked, which a SolverProof
  // game decides; accepting verifiers are slashed by its ruling (docs/disputes.md)
  ctx.ensure(a.kind === 'SolverProof', P, 'DisputeTheProof')
  ctx.ensure(a.defender === t.solver, P, 'InvalidDefender')
  ctx.ensure(a.defender !== who, P, 'InvalidDefender')
  const p = params(ctx)
  reserve(ctx, who, p.disputeBond)
  const id = ctx.store.read<bigint>(P, 'NextDisputeId')
  ctx.store.put(P, 'NextDisputeId', undefined, id + 1n)
  const d: DisputeInfo = {
    taskId: a.taskId,
    challenger: who,
    defender: a.defender,
    kind: a.kind,
    disputedStep: a.disputedStep,
    bond: p.disputeBond,
    status: 'Open',
    openedAt: ctx.now,
    deadline: 0,
    nextSeq: 0,
    lastHash: ZERO_HASH,
    force: null,
    moves: 0
  }
  const rule = segmentRuleOf(ctx, d, t)
  const cost = referenceCostOf(ctx, a.taskId, p)
  // two re-runs of the segment at most (the segment, then the opened step's tape) and two messages more
  const work = rule === undefined ? tapeAllowance(t, oneStepOf(ctx, d, t) ?? a.disputedStep, cost) : 2 * segmentAllowance(t, rule, cost)
  // the re-run waits for those of the defender's earlier disputes, and the whole game with it
  const wait = queueTape(ctx, id, a.defender, work)
  // in a segment dispute the challenger tapes the step it opens too (responseDue), at most a re-run of the segment
  const game = rule === undefined
    ? disputeDeadline(ctx.now, p.disputeClock, work)
    : disputeDeadline(ctx.now, p.disputeClock, work + segmentAllowance(t, rule, cost), MAX_SEGMENT_SEQ)
  d.deadline = storableBlock(wait + game)
  putDispute(ctx, id, d)
  t.openDisputes += 1
  putTask(ctx, a.taskId, t)
  // an assigned verifier's dispute is the evidence its reject needs
  noteEvidence(ctx, a.taskId, who)
  noteChallenge(ctx, a.taskId, who, 'Dispute', id, a.disputedStep, rank ?? uncommitted(ctx))
  adjustActive(ctx, who, 1)
  adjustActive(ctx, a.defender, 1)
  ctx.emit(P, 'DisputeOpened', { disputeId: id, taskId: a.taskId, challenger: who, defender: a.defender, kind: a.kind, disputedStep: a.disputedStep })
  return id
}

/** A message of `party` in this dispute: signature over this chain, task, dispute and role; author parity; the disputed step. */
function partyMove (ctx: Context, id: bigint, d: DisputeInfo, party: PartyName, bytes: Uint8Array, rule: SegmentRule | undefined): { signed: Signed, m: Msg } {
  let signed: Signed
  let m: Msg
  try {
    signed = decodeSignedBytes(bytes)
    m = verifySigned(signed, hexToU8a(party === 'Challenger' ? d.challenger : d.defender), verify, contextOf(ctx, id, d))
  } catch { ctx.fail(P, 'InvalidMove') }
  ctx.ensure(roleOfSeq(m.seq) === roleOf(party), P, 'InvalidMove')
  if (rule === undefined) {
    if (m.t === 'commit' || m.t === 'open') ctx.ensure(m.step === stepOf(ctx, d), P, 'InvalidMove')
  } else {
    if (m.t === 'commit' || m.t === 'open') ctx.ensure(m.step >= rule.first && m.step < rule.first + rule.length, P, 'InvalidMove')
    if (m.t === 'segment') ctx.ensure(m.j === rule.j, P, 'InvalidMove')
  }
  return { signed, m }
}

const lastMove = (ctx: Context, id: bigint): Uint8Array | undefined => {
  const hex = ctx.store.get<string>(P, 'DisputeLastMove', id)
  return hex === undefined ? undefined : hexToU8a(hex)
}

function storeMove (ctx: Context, id: bigint, d: DisputeInfo, s: Signed, m: Msg): void {
  ctx.store.put(P, 'DisputeLastMove', id, u8aToHex(encodeSigned(s)))
  d.nextSeq = m.seq + 1
  d.lastHash = u8aToHex(sha256(s.m))
  d.moves += 1
}

/**
 * When the addressee of a force must answer. `forced`: the move the force posts (the one it answers).
 * The defender's moves that need a re-run (its commit; a segment and the opened step's commit) get
 * the re-run's allowance from its turn in its queue. So does the challenger's answer to a segment
 * dispute's commit: the step it opened is the one the defender's segment led it to, known only then,
 * and every later move of its compares the defender's tape with its own tape of that step.
 */
function responseDue (ctx: Context, id: bigint, d: DisputeInfo, to: PartyName, seq: number, rule: SegmentRule | undefined, forced?: Msg): number {
  const p = params(ctx)
  const w = p.disputeClock
  const cost = referenceCostOf(ctx, d.taskId, p)
  if (to !== 'Defender') {
    if (rule !== undefined && seq === 3 && forced?.t === 'commit') return ctx.now + w + tapeAllowance(getTask(ctx, d.taskId), forced.step, cost)
    return ctx.now + w
  }
  // a move that needs a re-run is due its allowance from the re-run's turn in the defender's queue
  if (rule === undefined) return seq === 0 ? tapeFrom(ctx, id) + w + tapeAllowance(getTask(ctx, d.taskId), stepOf(ctx, d), cost) : ctx.now + w
  // the segment (seq 0) and the opened step's tape (seq 2) each need a re-run of the segment
  return seq === 0 || seq === 2 ? tapeFrom(ctx, id) + w + segmentAllowance(getTask(ctx, d.taskId), rule, cost) : ctx.now + w
}

/**
 * The caller has waited in vain: it posts the other side's last message
 * (`theirs`, omitted when it is the last message on chain) and its own next
 * move (`mine`); the other side must answer it on chain by the due block. The
 * challenger's first force has neither: it demands the defender's commit.
 */
export function forceMove (ctx: Context, who: string, a: { disputeId: bigint, theirs: string, mine: string }): void {
  const d = getDispute(ctx, a.disputeId)
  ctx.ensure(d.status === 'Open', P, 'DisputeClosed')
  const party = partyOf(d, who)
  ctx.ensure(party !== undefined, P, 'NotParty')
  ctx.ensure(d.force === null, P, 'ForcePending')
  const theirs = hexToU8a(a.theirs); const mine = hexToU8a(a.mine)
  const rule = ruleOf(ctx, d)
  let seq: number
  let forced: Msg | undefined
  if (mine.length === 0) {
    ctx.ensure(party === 'Challenger' && d.nextSeq === 0 && theirs.length === 0, P, 'InvalidMove')
    seq = 0
  } else {
    const my = partyMove(ctx, a.disputeId, d, party, mine, rule)
    forced = my.m
    const hash = u8aToHex(sha256(my.signed.m))
    if (my.m.seq === d.nextSeq - 1 && hash === d.lastHash) {
      // our last message is already on chain (we answered a force): the other side owes the next one
      seq = my.m.seq + 1
    } else {
      // a force moves the game forward: it never rewinds what is on chain
      ctx.ensure(my.m.seq >= d.nextSeq, P, 'StaleMove')
      let prev: { signed: Signed, m: Msg } | undefined
      if (my.m.seq > 0) {
        if (theirs.length === 0) {
          const last = lastMove(ctx, a.disputeId)
          ctx.ensure(last !== undefined && d.nextSeq === my.m.seq, P, 'InvalidMove')
          prev = partyMove(ctx, a.disputeId, d, other(party), last, rule)
        } else {
          prev = partyMove(ctx, a.disputeId, d, other(party), theirs, rule)
          // the last message on chain cannot be replaced by another one of the same seq
          if (prev.m.seq === d.nextSeq - 1) ctx.ensure(u8aToHex(sha256(prev.signed.m)) === d.lastHash, P, 'StaleMove')
        }
      } else ctx.ensure(theirs.length === 0, P, 'InvalidMove')
      ctx.ensure(linksTo(prev?.signed, my.m) && continuationError(prev?.m, my.m, rule) === undefined, P, 'NotAnAnswer')
      if (prev !== undefined && theirs.length > 0) d.moves += 1
      storeMove(ctx, a.disputeId, d, my.signed, my.m)
      seq = my.m.seq + 1
    }
  }
  ctx.ensure(seq <= (rule === undefined ? MAX_SEQ : MAX_SEGMENT_SEQ), P, 'InvalidMove')
  const to = other(party)
  d.force = { to, seq, at: ctx.now, due: storableBlock(responseDue(ctx, a.disputeId, d, to, seq, rule, forced)) }
  putDispute(ctx, a.disputeId, d)
  ctx.emit(P, 'MoveForced', { disputeId: a.disputeId, by: who, seq, due: d.force.due, theirs: a.theirs, mine: a.mine })
}

/** The addressee of a force posts its answer: message `force.seq`, continuing the forced move. */
export function answerMove (ctx: Context, who: string, a: { disputeId: bigint, answer: string }): void {
  const d = getDispute(ctx, a.disputeId)
  ctx.ensure(d.status === 'Open', P, 'DisputeClosed')
  const party = partyOf(d, who)
  ctx.ensure(party !== undefined, P, 'NotParty')
  const f = d.force
  ctx.ensure(f !== null && f.to === party, P, 'NotAddressee')
  ctx.ensure(ctx.now <= f.due, P, 'ResponseTooLate')
  const rule = ruleOf(ctx, d)
  const ans = partyMove(ctx, a.disputeId, d, party, hexToU8a(a.answer), rule)
  ctx.ensure(ans.m.seq === f.seq, P, 'NotAnAnswer')
  const last = f.seq === 0 ? undefined : lastMove(ctx, a.disputeId)
  const prev = last === undefined ? undefined : partyMove(ctx, a.disputeId, d, other(party), last, rule)
  ctx.ensure(linksTo(prev?.signed, ans.m) && continuationError(prev?.m, ans.m, rule) === undefined, P, 'NotAnAnswer')
  storeMove(ctx, a.disputeId, d, ans.signed, ans.m)
  d.force = null
  putDispute(ctx, a.disputeId, d)
  ctx.emit(P, 'MoveAnswered', { disputeId: a.disputeId, by: who, seq: ans.m.seq, answer: a.answer })
}

/** Anyone: a force unanswered by its due block loses for its addressee; past the deadline with none pending, the challenger loses. */
export function claimTimeout (ctx: Context, _who: string, a: { disputeId: bigint }): void {
  const d = getDispute(ctx, a.disputeId)
  ctx.ensure(d.status === 'Open', P, 'DisputeClosed')
  if (d.force !== null) {
    ctx.ensure(ctx.now > d.force.due, P, 'NotExpired')
    resolve(ctx, a.disputeId, d, other(d.force.to), 'Timeout')
    return
  }
  ctx.ensure(ctx.now > d.deadline, P, 'NotExpired')
  resolve(ctx, a.disputeId, d, 'Defender', 'Timeout')
}
