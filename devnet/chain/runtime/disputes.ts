import { hexToU8a, u8aToHex } from '@polkadot/util'
import { sha256 } from '../../../protocols/commit/merkle.js'
import { ClaimRejected, decodeClaim, judgeClaim, type Claim, type Ruling } from '../../../protocols/dispute/claim.js'
import { MAX_SEQ, decodeSignedBytes, encodeSigned, roleOfSeq, verifySigned, type DisputeContext, type Msg, type Signed } from '../../../protocols/dispute/messages.js'
import { continuationError, linksTo } from '../../../protocols/dispute/transcript.js'
import { adjustActive, getTask, params, penalizeSolver, putTask, requireNode, type TaskInfo } from './arbitration.js'
import { repatriateReserved, reserve, slashReserved, unreserve } from './balances.js'
import type { Context } from './context.js'
import { ppmOf } from './randomness.js'
import { verifySignature } from './signature.js'
import { REVEAL_WINDOW } from './spec.js'

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

export type DisputeKind = 'SolverProof' | 'VerifierVerdict'
export type PartyName = 'Challenger' | 'Defender'
/** A move forced on chain: `to` must post message `seq` by block `due`. */
export interface Force { to: PartyName, seq: number, at: number, due: number }
export interface DisputeInfo {
  taskId: bigint
  challenger: string
  defender: string
  kind: DisputeKind
  disputedStep: number
  bond: bigint
  status: 'Open' | 'ChallengerWon' | 'DefenderWon'
  openedAt: number
  /** after it, with no force pending, the challenger loses (the burden of proof is its own) */
  deadline: number
  /** the lowest seq a force may post: one past the last message on chain */
  nextSeq: number
  /** sha256 of the last message on chain (zero: none) */
  lastHash: string
  force: Force | null
  /** messages posted on chain (forced moves and answers) */
  moves: number
}

function getDispute (ctx: Context, id: bigint): DisputeInfo {
  const d = ctx.store.get<DisputeInfo>(P, 'Disputes', id)
  if (d === undefined) ctx.fail(P, 'DisputeNotFound')
  return d
}
const putDispute = (ctx: Context, id: bigint, d: DisputeInfo): void => ctx.store.put(P, 'Disputes', id, d)

function partyOf (d: DisputeInfo, who: string): PartyName | undefined {
  return who === d.challenger ? 'Challenger' : who === d.defender ? 'Defender' : undefined
}
const other = (p: PartyName): PartyName => p === 'Challenger' ? 'Defender' : 'Challenger'
const roleOf = (p: PartyName): 'challenger' | 'defender' => p === 'Challenger' ? 'challenger' : 'defender'

/** The genesis hash every dispute signature is bound to (System.BlockHash(0)). */
export const genesisHash = (ctx: Context): string => ctx.store.read<string>('System', 'BlockHash', 0)

/**
 * Blocks the defender gets on top of the response window for its first
 * message (the commit): it must re-execute the disputed step from the
 * checkpoint before it, (step mod checkpoint_every) + 1 steps, and the task's
 * own solve_timeout / steps is the time per step its submitter allowed.
 */
export function traceAllowance (t: Pick<TaskInfo, 'steps' | 'checkpointEvery' | 'solveTimeout'>, step: number): number {
  return Math.ceil(((step % t.checkpointEvery) + 1) * t.solveTimeout / t.steps)
}

/**
 * The dispute's overall deadline: every one of the at most MAX_SEQ + 1
 * messages may be forced, each costing up to a window of waiting before the
 * force, a block to post it, and a window to answer.
 */
export function disputeDeadline (openedAt: number, window: number, allowance: number): number {
  return openedAt + allowance + (MAX_SEQ + 1) * 2 * (window + 1)
}

export function openDispute (ctx: Context, who: string, a: { taskId: bigint, defender: string, kind: DisputeKind, disputedStep: number }): bigint {
  requireNode(ctx, who)
  const t = getTask(ctx, a.taskId)
  ctx.ensure(t.phase === 'Verifying', P, 'WrongPhase')
  ctx.ensure(ctx.now <= t.challengeEnd, P, 'ChallengeWindowClosed')
  ctx.ensure(a.disputedStep < t.stepCount, P, 'InvalidStep')
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
    deadline: disputeDeadline(ctx.now, p.disputeClock, traceAllowance(t, a.disputedStep)),
    nextSeq: 0,
    lastHash: ZERO_HASH,
    force: null,
    moves: 0
  }
  putDispute(ctx, id, d)
  t.openDisputes += 1
  putTask(ctx, a.taskId, t)
  adjustActive(ctx, who, 1)
  adjustActive(ctx, a.defender, 1)
  ctx.emit(P, 'DisputeOpened', { disputeId: id, taskId: a.taskId, challenger: who, defender: a.defender, kind: a.kind, disputedStep: a.disputedStep })
  return id
}

const verify = (msg: Uint8Array, sig: Uint8Array, pub: Uint8Array): boolean => verifySignature({ kind: 'Sr25519', message: msg, signature: sig, publicKey: pub })

function contextOf (ctx: Context, id: bigint, d: DisputeInfo): DisputeContext {
  return { genesis: hexToU8a(genesisHash(ctx)), taskId: Number(d.taskId), disputeId: Number(id) }
}

/** A message of `party` in this dispute: signature over this chain, task, dispute and role; author parity; the disputed step. */
function partyMove (ctx: Context, id: bigint, d: DisputeInfo, party: PartyName, bytes: Uint8Array): { signed: Signed, m: Msg } {
  let signed: Signed
  let m: Msg
  try {
    signed = decodeSignedBytes(bytes)
    m = verifySigned(signed, hexToU8a(party === 'Challenger' ? d.challenger : d.defender), verify, contextOf(ctx, id, d))
  } catch { ctx.fail(P, 'InvalidMove') }
  ctx.ensure(roleOfSeq(m.seq) === roleOf(party), P, 'InvalidMove')
  if (m.t === 'commit' || m.t === 'open') ctx.ensure(m.step === d.disputedStep, P, 'InvalidMove')
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

function responseDue (ctx: Context, d: DisputeInfo, to: PartyName, seq: number): number {
  const w = params(ctx).disputeClock
  return ctx.now + w + (to === 'Defender' && seq === 0 ? traceAllowance(getTask(ctx, d.taskId), d.disputedStep) : 0)
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
  let seq: number
  if (mine.length === 0) {
    ctx.ensure(party === 'Challenger' && d.nextSeq === 0 && theirs.length === 0, P, 'InvalidMove')
    seq = 0
  } else {
    const my = partyMove(ctx, a.disputeId, d, party, mine)
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
          prev = partyMove(ctx, a.disputeId, d, other(party), last)
        } else {
          prev = partyMove(ctx, a.disputeId, d, other(party), theirs)
          // the last message on chain cannot be replaced by another one of the same seq
          if (prev.m.seq === d.nextSeq - 1) ctx.ensure(u8aToHex(sha256(prev.signed.m)) === d.lastHash, P, 'StaleMove')
        }
      } else ctx.ensure(theirs.length === 0, P, 'InvalidMove')
      ctx.ensure(linksTo(prev?.signed, my.m) && continuationError(prev?.m, my.m) === undefined, P, 'NotAnAnswer')
      if (prev !== undefined && theirs.length > 0) d.moves += 1
      storeMove(ctx, a.disputeId, d, my.signed, my.m)
      seq = my.m.seq + 1
    }
  }
  ctx.ensure(seq <= MAX_SEQ, P, 'InvalidMove')
  const to = other(party)
  d.force = { to, seq, at: ctx.now, due: responseDue(ctx, d, to, seq) }
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
  const ans = partyMove(ctx, a.disputeId, d, party, hexToU8a(a.answer))
  ctx.ensure(ans.m.seq === f.seq, P, 'NotAnAnswer')
  const last = f.seq === 0 ? undefined : lastMove(ctx, a.disputeId)
  const prev = last === undefined ? undefined : partyMove(ctx, a.disputeId, d, other(party), last)
  ctx.ensure(linksTo(prev?.signed, ans.m) && continuationError(prev?.m, ans.m) === undefined, P, 'NotAnAnswer')
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

/**
 * Checks an end-of-bisection claim against what the chain holds and rules
 * (protocols/dispute/claim.ts `judgeClaim`): the defender's trace root must be
 * signed by the defender's account for this chain, task and dispute (sr25519;
 * the chain knows account public keys), every entry is proven against it, the
 * op's structure against the task's skeleton_root, state tensors against the
 * committed proof_root, batch rows against dataset_root at the rows the
 * program's data order names, the runtime and data order from the program
 * bytes hashed against program_hash.
 */
export function checkAgreement (ctx: Context, who: string, disputeId: bigint, claimHex: string): { d: DisputeInfo, ruling: Ruling } {
  const d = getDispute(ctx, disputeId)
  ctx.ensure(d.status === 'Open', P, 'DisputeClosed')
  const party = partyOf(d, who)
  ctx.ensure(party !== undefined, P, 'NotParty')
  const t = getTask(ctx, d.taskId)
  let ruling: Ruling
  try {
    const claim: Claim = decodeClaim(hexToU8a(claimHex))
    ruling = judgeClaim({
      ...contextOf(ctx, disputeId, d),
      step: d.disputedStep,
      challenger: hexToU8a(d.challenger),
      defender: hexToU8a(d.defender),
      caller: roleOf(party),
      programHash: hexToU8a(t.programHash),
      datasetRoot: hexToU8a(t.datasetRoot),
      skeletonRoot: hexToU8a(t.skeletonRoot),
      proofRoot: hexToU8a(t.proofRoot),
      reference: ctx.reference as never,
      // wasm sr25519 (~0.3 ms), not util-crypto's pure-JS one (~4 ms, most of an adjudication's cost)
      verify
    }, claim)
  } catch (e) {
    if (e instanceof ClaimRejected) ctx.fail(P, e.reason)
    ctx.fail(P, 'InvalidClaim')
  }
  return { d, ruling }
}

export function adjudicate (ctx: Context, who: string, a: { disputeId: bigint, claim: string }): void {
  const { d, ruling } = checkAgreement(ctx, who, a.disputeId, a.claim)
  const utf8 = (s: string): string => u8aToHex(new TextEncoder().encode(s.slice(0, 256)))
  ctx.emit(P, 'Adjudicated', { disputeId: a.disputeId, kind: utf8(ruling.kind), reason: utf8(ruling.reason) })
  resolve(ctx, a.disputeId, d, ruling.winner === 'defender' ? 'Defender' : 'Challenger', 'Adjudicated')
}

function resolve (ctx: Context, id: bigint, d: DisputeInfo, winnerParty: PartyName, how: 'Adjudicated' | 'Timeout'): void {
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
      forced = t.revealedForcedError === d.disputedStep
      t.rulings.push({ disputeId: id, challenger: d.challenger, step: d.disputedStep, revealDeadline: ctx.now + REVEAL_WINDOW, outcome: forced ? 'ForcedError' : 'AwaitingReveal' })
    } else {
      // a solver that let a forced move go unanswered has no forced-error excuse
      slashed = penalizeSolver(ctx, d.taskId, t, d.challenger, d.disputedStep)
    }
  } else {
    // the challenger loses its bond: a share to the defender, the rest to the treasury
    const toWinner = ppmOf(d.bond, p.winnerSharePpm)
    repatriateReserved(ctx, d.challenger, d.defender, toWinner)
    slashReserved(ctx, d.challenger, d.bond - toWinner)
    slashed = d.bond
    ctx.emit(P, 'Slashed', { who: d.challenger, amount: d.bond, toWinner, toTreasury: d.bond - toWinner })
  }
  d.status = winnerParty === 'Challenger' ? 'ChallengerWon' : 'DefenderWon'
  d.force = null
  putDispute(ctx, id, d)
  ctx.store.remove(P, 'DisputeLastMove', id)
  t.openDisputes = Math.max(0, t.openDisputes - 1)
  putTask(ctx, d.taskId, t)
  adjustActive(ctx, d.challenger, -1)
  adjustActive(ctx, d.defender, -1)
  ctx.emit(P, 'DisputeResolved', { disputeId: id, winner, loser, how, slashed, forcedError: forced })
}
