import { SAMPLE_COUNT } from '../../../protocols/availability/headers.js'
import { getTask } from './arbitration.js'
import { activeAssignment, getAssignments, noteEvidence } from './assignment.js'
import { reopenVerdict, serveProgress, servePart, shareServe } from './availability-serve.js'
import { inServedGrace } from './served-grace.js'
import type { Plain } from './codec.js'
import type { Context } from './context.js'
import type { AvailabilityChallenge, AvailabilityStatus, TaskInfo } from '../../../protocols/pallet-types.js'
import { answerHeld, answerWindow, getHeld, openHeld, settleHeld, timeOutHeld, type HeldKind } from './held-requests.js'
import { settleAnsweredChunkDeposits } from './chunk-sampling.js'
import { ownOpenDataset, settleAnsweredDatasetDeposits } from './dataset-records.js'
import { isCommittedStep } from '../../../protocols/pol/segments.js'
import { rootEveryOfTask } from './segments.js'
import { blockRandomness } from './block-randomness.js'
import { requiredSample } from '../../../protocols/verification/verdict.js'
import { challengeableCheckpoints } from '../../../protocols/verification/checkpoint-steps.js'

// Data-availability challenges (docs/disputes.md, "Withheld checkpoints"),
// part of the Arbitration pallet. A node that cannot obtain a valid checkpoint
// of a committed run challenges the solver with a deposit; the solver must
// serve the whole checkpoint through the chain within answerWindow blocks
// (respond_availability parts, each checked against the committed state root:
// availability-serve.ts), so the challenger then has it. Answered: the parts
// are in events for anyone, and the deposit is held until the task ends.
// Unanswered: anyone calls availability_timeout, the solver is slashed like a
// lost dispute and the task fails at settlement. An open challenge counts in
// task.open_disputes, so the task does not settle under it.

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
  // (a copy of its pending call, say) must not leave it without its own (docs/economics.md "Copied disputes and claims");
  // and each checkpoint its sample needs is one of its own, so its verdict reopens only once all are served
  mayRepeat: (ctx, taskId, who, step) => activeAssignment(ctx, taskId, who)?.backed === false ||
    (awaitsServes(ctx, taskId, getTask(ctx, taskId), who) && !ownOpenAvailability(ctx, taskId, who).some(([s]) => s === step)),
  mayFollow: (ctx, taskId, t, who) => awaitsServes(ctx, taskId, t, who)
}

/** `who`'s own open availability challenges of the task, as [checkpoint step, id]. */
export function ownOpenAvailability (ctx: Context, taskId: bigint, who: string): Array<[number, bigint]> {
  return ctx.store.read<Array<[number, bigint]>>(P, 'OpenAvailability', taskId).filter(([, id]) => getHeld(ctx, AVAILABILITY, id).challenger === who)
}

/**
 * An assigned verifier whose standing reject rests on availability challenges
 * of its own still open, by its deadline: it may challenge every other
 * checkpoint its sample needs too, past the window (docs/economics.md
 * "Selective serving": a solver withholding two checkpoints must serve both
 * before the verifier votes again). Bounded: its deadline is not moved by
 * these (only a serve reopening its verdict moves it, and a served verifier
 * challenges no more past challenge_end), so the task is held one answer
 * window past the last of them, as by one. A dataset challenge of its own
 * (dataset-availability.ts) counts the same: the dataset and the checkpoints
 * are challenged together, and the verdict reopens when both are served.
 */
export function awaitsServes (ctx: Context, taskId: bigint, t: TaskInfo, who: string): boolean {
  const mine = activeAssignment(ctx, taskId, who)
  return mine !== undefined && mine.backed && ctx.now <= mine.deadline &&
    t.verdicts.some(v => v.verifier === who && !v.accept && !v.void) &&
    (ownOpenAvailability(ctx, taskId, who).length > 0 || ownOpenDataset(ctx, taskId, who).length > 0)
}

/**
 * Checkpoints are taken every checkpoint_every steps and at the last step
 * (node/train/run.ts); with a root every m steps each is a committed leaf
 * (m divides checkpoint_every, and the last step is always committed).
 */
export function isCheckpointStep (step: number, checkpointEvery: number, stepCount: number, rootEvery = 1): boolean {
  return step >= 0 && step <= stepCount && (step % checkpointEvery === 0 || step === stepCount) && isCommittedStep(step, stepCount, rootEvery)
}

/**
 * An assigned verifier challenges only what its own replay needs (docs/economics.md
 * "Needless serves"): the chain knows its required sample and the spacing, so a
 * checkpoint no replay of that sample reads is refused (a puppet would make an
 * honest solver serve every checkpoint of the run, and a served challenge
 * reopens its verdict past the window). After its own accept it needs none: it
 * vouched that it replayed from them. Anyone else pays for a needless challenge
 * with its deposit (to the solver when the task is verified anyway).
 */
function ensureNeeded (ctx: Context, who: string, a: { taskId: bigint, checkpointStep: number }): void {
  const mine = activeAssignment(ctx, a.taskId, who)
  if (mine === undefined) return
  const t = getTask(ctx, a.taskId)
  const m = rootEveryOfTask(ctx, a.taskId)
  // not a checkpoint at all: openHeld says so
  if (!isCheckpointStep(a.checkpointStep, t.checkpointEvery, t.stepCount, m)) return
  ctx.ensure(!t.verdicts.some(v => v.verifier === who && v.accept && !v.void), P, 'ChallengeAfterAccept')
  const required = t.stepCount === 0 ? [] : requiredSample(blockRandomness(ctx, mine.seedBlock), who, t.stepCount, t.verifierCount, m)
  ctx.ensure(challengeableCheckpoints(required, t.stepCount, t.checkpointEvery, m, t.divergence !== null).includes(a.checkpointStep), P, 'CheckpointNotNeeded')
}

export function challengeAvailability (ctx: Context, who: string, a: { taskId: bigint, checkpointStep: number }): bigint {
  ensureNeeded(ctx, who, a)
  // a checkpoint served on chain is there for anyone to read: nothing left to challenge
  for (const id of ctx.store.read<bigint[]>(P, 'AnsweredAvailability', a.taskId)) {
    ctx.ensure(ctx.store.get<AvailabilityChallenge>(P, 'AvailabilityChallenges', id)?.checkpointStep !== a.checkpointStep, P, 'CheckpointServed')
  }
  // a served verifier's later evidence past the window is a dispute or a claim: challenges one after another would hold the task a window each
  ctx.ensure(ctx.now <= getTask(ctx, a.taskId).challengeEnd || !inServedGrace(ctx, a.taskId, who), P, 'ChallengeWindowClosed')
  const { id, r: c } = openHeld(ctx, AVAILABILITY, who, a, (t, step) => isCheckpointStep(step, t.checkpointEvery, t.stepCount, rootEveryOfTask(ctx, a.taskId)),
    base => ({ ...base, challenger: who, samples: SAMPLE_COUNT, responseHash: ZERO_HASH }))
  // an assigned verifier that cannot fetch what it must check is not silent: this is its evidence
  noteEvidence(ctx, a.taskId, who)
  ctx.emit(P, 'AvailabilityChallenged', { challengeId: id, taskId: a.taskId, challenger: who, solver: c.solver, checkpointStep: a.checkpointStep, deposit: c.deposit, deadline: c.deadline })
  return id
}

/**
 * Challenges of several checkpoints in one call, all or none: opened in
 * separate blocks, the solver could serve the first before the next was in,
 * reopening the verifier's verdict with the rest unchallenged (and past
 * challenge_end a served verifier opens no more).
 */
export function challengeAvailabilityMany (ctx: Context, who: string, a: { taskId: bigint, checkpointSteps: number[] }): bigint[] {
  ctx.ensure(a.checkpointSteps.length > 0, P, 'NotCheckpointStep')
  return a.checkpointSteps.map(s => challengeAvailability(ctx, who, { taskId: a.taskId, checkpointStep: Number(s) }))
}

export function respondAvailability (ctx: Context, who: string, a: { challengeId: bigint, response: string }): void {
  const c = getHeld(ctx, AVAILABILITY, a.challengeId)
  ctx.ensure(c.status === 'Open', P, 'AvailabilityClosed')
  ctx.ensure(who === c.solver, P, 'NotSelectedSolver')
  ctx.ensure(ctx.now <= c.deadline, P, 'ResponseTooLate')
  const t = getTask(ctx, c.taskId)
  // an answer serves the whole checkpoint on chain, in parts (availability-serve.ts): possession alone served nobody
  if (!servePart(ctx, a.challengeId, c, t, a.response)) return
  // the data is public now: every open challenge of this checkpoint is answered by the same serve
  const same = ctx.store.read<Array<[number, bigint]>>(P, 'OpenAvailability', c.taskId).filter(([s]) => s === c.checkpointStep).map(([, id]) => id)
  const challengers: string[] = []
  for (const id of same) {
    const x = id === a.challengeId ? c : getHeld(ctx, AVAILABILITY, id)
    if (id !== a.challengeId) shareServe(ctx, a.challengeId, id)
    x.responseHash = serveProgress(ctx, a.challengeId)!.headersHash
    // the deposit stays reserved until the task ends (settleAnsweredDeposits)
    answerHeld(ctx, AVAILABILITY, id, x)
    challengers.push(x.challenger)
    ctx.emit(P, 'AvailabilityAnswered', { challengeId: id, taskId: c.taskId, solver: c.solver, response: '0x' })
  }
  // each served assigned verifier now has the data: its reject is withdrawn and it must vote again
  const stillOpen = (w: string): boolean => ownOpenAvailability(ctx, c.taskId, w).length > 0 || ownOpenDataset(ctx, c.taskId, w).length > 0
  for (const w of new Set(challengers)) reopenVerdict(ctx, c.taskId, w, stillOpen)
}

export function availabilityTimeout (ctx: Context, _who: string, a: { challengeId: bigint }): void {
  const { r: c, slashed } = timeOutHeld(ctx, AVAILABILITY, a.challengeId)
  ctx.emit(P, 'AvailabilityTimedOut', { challengeId: a.challengeId, taskId: c.taskId, solver: c.solver, slashed })
}

/**
 * At the end of a task, the deposits of answered (served) challenges. An
 * assigned verifier's comes back if a verdict of its stood (it was served and
 * voted: a needless challenge of an honest solver costs it nothing more than
 * the vote it owed anyway, and one that served it selectively cannot take
 * it), else it goes to the solver (served, then silent). Anyone else's goes to
 * the solver when the task was `verified` (the challenge was needless), back
 * if not. `standing`: the verifiers whose verdicts stood, and on a failed task those whose accepts were not
 * slashed (they voted; settlement.ts votedVerifiers) (absent: everyone by `verified`).
 */
export function settleAnsweredDeposits (ctx: Context, taskId: bigint, verified: boolean, standing?: ReadonlySet<string>): void {
  const assigned = new Set((getAssignments(ctx, taskId)?.verifiers ?? []).map(v => v.verifier))
  // without `standing` (a quarantined task: nothing was decided) every deposit goes back
  const toSolver = (c: AvailabilityChallenge): boolean => standing !== undefined && assigned.has(c.challenger) ? !standing.has(c.challenger) : verified
  settleHeld(ctx, AVAILABILITY, taskId, toSolver, (id, c, to) => { ctx.emit(P, 'AvailabilityDepositSettled', { challengeId: id, taskId, to, amount: c.deposit }) })
  // answered chunk-sample requests are settled by the old rule
  settleAnsweredChunkDeposits(ctx, taskId, verified)
  // answered dataset challenges: back to a verifier whose verdict stood, else to the submitter
  settleAnsweredDatasetDeposits(ctx, taskId, standing)
}

type Handler = (ctx: Context, who: string, args: Record<string, Plain>) => void
/** Dispatch table entries for executive.ts. */
export const AVAILABILITY_HANDLERS: Record<string, Handler> = {
  'Arbitration.challenge_availability': (ctx, who, a) => { challengeAvailability(ctx, who, a as never) },
  'Arbitration.respond_availability': (ctx, who, a) => respondAvailability(ctx, who, a as never),
  'Arbitration.availability_timeout': (ctx, who, a) => availabilityTimeout(ctx, who, a as never),
  'Arbitration.challenge_availability_many': (ctx, who, a) => { challengeAvailabilityMany(ctx, who, a as never) }
}
