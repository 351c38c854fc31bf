import { hexToU8a, u8aToHex } from '@polkadot/util'
import { sha256 } from '../../../protocols/commit/merkle.js'
import { AvailabilityRejected, MAX_RESPONSE_BYTES, SAMPLE_COUNT, availabilitySeed, checkAvailabilityResponse } from '../../../protocols/availability/response.js'
import { getTask } from './arbitration.js'
import { activeAssignment, noteEvidence } from './assignment.js'
import type { Plain } from './codec.js'
import type { Context } from './context.js'
import type { AvailabilityChallenge, AvailabilityStatus } from '../../../protocols/pallet-types.js'
import { answerHeld, answerWindow, getHeld, openHeld, settleHeld, timeOutHeld, type HeldKind } from './held-requests.js'
import { settleAnsweredChunkDeposits } from './chunk-sampling.js'
import { blockRandomness } from './block-randomness.js'
import { isCommittedStep } from '../../../protocols/pol/segments.js'
import { rootEveryOfTask } from './segments.js'

// Data-availability challenges (docs/disputes.md, "Withheld checkpoints"),
// part of the Arbitration pallet. A node that cannot obtain a valid checkpoint
// of a committed run challenges the solver with a deposit; the hash of the
// block that includes the challenge seeds SAMPLE_COUNT (tensor, row) positions
// of the state at that step; the solver must post those rows with Merkle
// proofs against its committed proof_root within answerWindow blocks.
// Answered: the deposit goes to the solver and the rows are in an event for
// anyone. Unanswered: anyone calls availability_timeout, the solver is slashed
// like a lost dispute and the task fails at settlement. An open challenge
// counts in task.open_disputes, so the task does not settle under it.

const P = 'Arbitration'
const ZERO_HASH = '0x' + '00'.repeat(32)

export type { AvailabilityChallenge, AvailabilityStatus }

const AVAILABILITY: HeldKind<AvailabilityChallenge> = {
  items: 'AvailabilityChallenges',
  open: 'OpenAvailability',
  answered: 'AnsweredAvailability',
  nextId: 'NextAvailabilityId',
  notFound: 'AvailabilityNotFound',
  closed: 'AvailabilityClosed',
  alreadyOpen: 'AvailabilityAlreadyOpen',
  requester: c => c.challenger,
  window: answerWindow,
  backsReject: true,
  // the challenge is an assigned verifier's evidence for its reject: one opened first by someone else
  // (a copy of its pending call, say) must not leave it without its own (docs/economics.md "Copied disputes and claims")
  mayRepeat: (ctx, taskId, who) => activeAssignment(ctx, taskId, who)?.backed === false
}

/**
 * Checkpoints are taken every checkpoint_every steps and at the last step
 * (node/train/run.ts); with a root every m steps each is a committed leaf
 * (m divides checkpoint_every, and the last step is always committed).
 */
export function isCheckpointStep (step: number, checkpointEvery: number, stepCount: number, rootEvery = 1): boolean {
  return step >= 0 && step <= stepCount && (step % checkpointEvery === 0 || step === stepCount) && isCommittedStep(step, stepCount, rootEvery)
}

export function challengeAvailability (ctx: Context, who: string, a: { taskId: bigint, checkpointStep: number }): bigint {
  const { id, r: c } = openHeld(ctx, AVAILABILITY, who, a, (t, step) => isCheckpointStep(step, t.checkpointEvery, t.stepCount, rootEveryOfTask(ctx, a.taskId)),
    base => ({ ...base, challenger: who, samples: SAMPLE_COUNT, responseHash: ZERO_HASH }))
  // an assigned verifier that cannot fetch what it must check is not silent: this is its evidence
  noteEvidence(ctx, a.taskId, who)
  ctx.emit(P, 'AvailabilityChallenged', { challengeId: id, taskId: a.taskId, challenger: who, solver: c.solver, checkpointStep: a.checkpointStep, deposit: c.deposit, deadline: c.deadline })
  return id
}

/** The sample seed of a challenge, once the block that included it is known (null before). */
export function challengeSeed (ctx: Context, id: bigint, c: AvailabilityChallenge): Uint8Array | null {
  if (ctx.now <= c.openedAt) return null
  const h = blockRandomness(ctx, c.openedAt)
  return availabilitySeed(hexToU8a(h), id)
}

export function respondAvailability (ctx: Context, who: string, a: { challengeId: bigint, response: string }): void {
  const c = getHeld(ctx, AVAILABILITY, a.challengeId)
  ctx.ensure(c.status === 'Open', P, 'AvailabilityClosed')
  ctx.ensure(who === c.solver, P, 'NotSelectedSolver')
  const seed = challengeSeed(ctx, a.challengeId, c)
  if (seed === null) ctx.fail(P, 'SamplesNotReady')
  ctx.ensure(ctx.now <= c.deadline, P, 'ResponseTooLate')
  const bytes = hexToU8a(a.response)
  ctx.ensure(bytes.length <= MAX_RESPONSE_BYTES, P, 'ResponseTooLarge')
  const t = getTask(ctx, c.taskId)
  try {
    // the state's leaf in proof_root and the path's depth follow the task's root spacing m
    const rootEvery = rootEveryOfTask(ctx, c.taskId)
    checkAvailabilityResponse({ proofRoot: hexToU8a(t.proofRoot), step: c.checkpointStep, stepCount: t.stepCount, rootEvery, seed, count: c.samples }, bytes)
  } catch (e) {
    if (e instanceof AvailabilityRejected) ctx.fail(P, e.reason)
    ctx.fail(P, 'InvalidAvailabilityResponse')
  }
  // the deposit stays reserved until settlement: it goes to the solver if the task is
  // verified anyway (the challenge was needless), back to the challenger if nobody
  // could verify it (the solver held the data but did not serve it)
  c.responseHash = u8aToHex(sha256(bytes))
  answerHeld(ctx, AVAILABILITY, a.challengeId, c)
  ctx.emit(P, 'AvailabilityAnswered', { challengeId: a.challengeId, taskId: c.taskId, solver: c.solver, response: a.response })
}

export function availabilityTimeout (ctx: Context, _who: string, a: { challengeId: bigint }): void {
  const { r: c, slashed } = timeOutHeld(ctx, AVAILABILITY, a.challengeId)
  ctx.emit(P, 'AvailabilityTimedOut', { challengeId: a.challengeId, taskId: c.taskId, solver: c.solver, slashed })
}

/** Accounts whose availability challenge of the task was answered (possession shown; serving cannot be proven on chain). */
export function answeredChallengers (ctx: Context, taskId: bigint): Set<string> {
  const out = new Set<string>()
  for (const id of ctx.store.read<bigint[]>(P, 'AnsweredAvailability', taskId)) {
    const c = ctx.store.get<AvailabilityChallenge>(P, 'AvailabilityChallenges', id)
    if (c !== undefined) out.add(c.challenger)
  }
  return out
}

/**
 * At the end of a task: the deposits of answered challenges go to the solver
 * when `toSolver` (the task was verified by others: the challenge was
 * needless), else back to their challengers (possession shown, but nothing served).
 */
export function settleAnsweredDeposits (ctx: Context, taskId: bigint, toSolver: boolean): void {
  settleHeld(ctx, AVAILABILITY, taskId, toSolver, (id, c, to) => { ctx.emit(P, 'AvailabilityDepositSettled', { challengeId: id, taskId, to, amount: c.deposit }) })
  // answered chunk-sample requests are settled by the same rule
  settleAnsweredChunkDeposits(ctx, taskId, toSolver)
}

type Handler = (ctx: Context, who: string, args: Record<string, Plain>) => void
/** Dispatch table entries for executive.ts. */
export const AVAILABILITY_HANDLERS: Record<string, Handler> = {
  'Arbitration.challenge_availability': (ctx, who, a) => { challengeAvailability(ctx, who, a as never) },
  'Arbitration.respond_availability': (ctx, who, a) => respondAvailability(ctx, who, a as never),
  'Arbitration.availability_timeout': (ctx, who, a) => availabilityTimeout(ctx, who, a as never)
}
