import { hexToU8a, u8aToHex } from '@polkadot/util'
import { DATASET_PACE_BYTES, DatasetServeRejected, checkDatasetServePart, datasetServeBytes, datasetServeSteps, newRowsOf, type DatasetFacts } from '../../../protocols/availability/dataset-serve.js'
import { sha256 } from '../../../protocols/commit/merkle.js'
import type { DatasetChallenge } from '../../../protocols/pallet-types.js'
import { MAX_PROGRAM_BYTES, parseProgramBytes } from '../../../protocols/program/bytes.js'
import { requiredSample } from '../../../protocols/verification/verdict.js'
import { adjustActive, getTask, params, putTask, requireNode } from './arbitration.js'
import { activeAssignment, noteEvidence } from './assignment.js'
import { awaitsServes, ownOpenAvailability } from './availability.js'
import { reopenVerdict } from './availability-serve.js'
import { reserve, unreserve } from './balances.js'
import { openDatasetChallenges as openOf, ownOpenDataset, settleAnsweredDatasetDeposits } from './dataset-records.js'
import { blockRandomness } from './block-randomness.js'
import type { Plain } from './codec.js'
import type { Context } from './context.js'
import { answerWindow } from './held-requests.js'
import { ensureEvidenceWindow } from './late-backing.js'
import { rootEveryOfTask } from './segments.js'
import { inServedGrace } from './served-grace.js'

// Dataset availability challenges (docs/economics.md "A withheld dataset"),
// part of the Arbitration pallet. The task commits dataset_root, but the
// dataset itself is fetched off chain from the submitter's announcement: a
// submitter that withholds it from a drawn verifier (keeping the solver, or
// its puppet, supplied) used to leave it unable to replay, silent, lapsed
// for B + R. Now the verifier rejects and challenges the submitter, who must
// serve on chain the rows of the batches its required sample's replay reads
// (protocols/availability/dataset-serve.ts), each checked against
// dataset_root (by anyone: the rows are checked, not who posts them, so a
// solver that trained on them, or any holder, can serve for an offline
// submitter). Served: the verifier has the rows, its reject is withdrawn and
// it votes again (the served grace, as for a served checkpoint). Unserved: the
// deposit back and its reject stands (DatasetWithheld): it is paid V, never
// lapsed, and counts toward the quorum, so the withholding submitter pays
// the honest parties what a verified task pays them. An open challenge
// counts in task.open_disputes, so the task does not settle under it.

const P = 'Arbitration'

export type { DatasetChallenge }
export { datasetWithheldFrom, ownOpenDataset, settleAnsweredDatasetDeposits } from './dataset-records.js'

const getChallenge = (ctx: Context, id: bigint): DatasetChallenge => {
  const c = ctx.store.get<DatasetChallenge>(P, 'DatasetChallenges', id)
  if (c === undefined) ctx.fail(P, 'DatasetChallengeNotFound')
  return c
}
const factsOf = (c: DatasetChallenge): DatasetFacts =>
  ({ seed: c.seed, trainSize: c.trainSize, batchSize: c.batchSize, rowSize: c.rowSize, classes: c.classes })

/** The program's data order and shapes, from its bytes (which must hash to program_hash). */
function programFacts (ctx: Context, programHash: string, programHex: string): DatasetFacts & { synthetic: boolean } {
  const bytes = hexToU8a(programHex)
  ctx.ensure(bytes.length <= MAX_PROGRAM_BYTES, P, 'InvalidProgram')
  ctx.ensure(u8aToHex(sha256(bytes)) === programHash, P, 'ProgramHashMismatch')
  let p: ReturnType<typeof parseProgramBytes>
  try { p = parseProgramBytes(bytes) } catch { ctx.fail(P, 'InvalidProgram') }
  return { seed: p.seed, trainSize: p.dataset.trainSize, batchSize: p.batchSize, rowSize: p.dataset.rowSize, classes: p.dataset.classes, synthetic: p.dataset.kind === 'synthetic' }
}

export function challengeDataset (ctx: Context, who: string, a: { taskId: bigint, program: string }): bigint {
  requireNode(ctx, who)
  const t = getTask(ctx, a.taskId)
  ctx.ensure(t.phase === 'Verifying', P, 'WrongPhase')
  // the rows a verifier's replay needs: only a drawn verifier has a required sample, and needs them
  const mine = activeAssignment(ctx, a.taskId, who)
  ctx.ensure(mine !== undefined, P, 'NotAssigned')
  ctx.ensure(!t.verdicts.some(v => v.verifier === who && v.accept && !v.void), P, 'ChallengeAfterAccept')
  // evidence for its reject: in the window or its backing grace, or while it awaits serves of its own checkpoints;
  // a served verifier challenges no more past the window (one reopening per verifier, as for checkpoints)
  if (!awaitsServes(ctx, a.taskId, t, who)) ensureEvidenceWindow(ctx, a.taskId, t, who)
  ctx.ensure(ctx.now <= t.challengeEnd || !inServedGrace(ctx, a.taskId, who), P, 'ChallengeWindowClosed')
  ctx.ensure(!ctx.store.read<string[]>(P, 'DatasetChallengers', a.taskId).includes(who), P, 'DatasetAlreadyChallenged')
  const f = programFacts(ctx, t.programHash, a.program)
  ctx.ensure(!f.synthetic, P, 'DatasetGenerated')
  const m = rootEveryOfTask(ctx, a.taskId)
  const required = t.stepCount === 0 ? [] : requiredSample(blockRandomness(ctx, mine.seedBlock), who, t.stepCount, t.verifierCount, m)
  const steps = datasetServeSteps(required, t.stepCount, t.checkpointEvery, m, t.divergence !== null)
  const p = params(ctx)
  reserve(ctx, who, p.disputeBond)
  const id = ctx.store.read<bigint>(P, 'NextDatasetChallengeId')
  ctx.store.put(P, 'NextDatasetChallengeId', undefined, id + 1n)
  const { synthetic: _s, ...facts } = f
  const c: DatasetChallenge = {
    taskId: a.taskId, challenger: who, submitter: t.submitter, deposit: p.disputeBond, openedAt: ctx.now, deadline: ctx.now + 1 + answerWindow(p, t),
    steps, served: 0, total: steps.length * facts.batchSize, ...facts, status: 'Open'
  }
  ctx.store.put(P, 'DatasetChallenges', id, c)
  ctx.store.put(P, 'OpenDatasetChallenges', a.taskId, [...openOf(ctx, a.taskId), id])
  ctx.store.put(P, 'DatasetChallengers', a.taskId, [...ctx.store.read<string[]>(P, 'DatasetChallengers', a.taskId), who])
  t.openDisputes += 1
  putTask(ctx, a.taskId, t)
  adjustActive(ctx, who, 1)
  noteEvidence(ctx, a.taskId, who)
  ctx.emit(P, 'DatasetChallenged', { challengeId: id, taskId: a.taskId, challenger: who, submitter: t.submitter, steps, deposit: c.deposit, deadline: c.deadline })
  return id
}

/** Answered or timed out: off the task's open list, the task may settle again. */
function close (ctx: Context, id: bigint, c: DatasetChallenge): void {
  ctx.store.put(P, 'DatasetChallenges', id, c)
  const rest = openOf(ctx, c.taskId).filter(x => x !== id)
  if (rest.length === 0) ctx.store.remove(P, 'OpenDatasetChallenges', c.taskId)
  else ctx.store.put(P, 'OpenDatasetChallenges', c.taskId, rest)
  const t = getTask(ctx, c.taskId)
  t.openDisputes = Math.max(0, t.openDisputes - 1)
  putTask(ctx, c.taskId, t)
  adjustActive(ctx, c.challenger, -1)
}

export function respondDataset (ctx: Context, _who: string, a: { challengeId: bigint, part: string }): void {
  const c = getChallenge(ctx, a.challengeId)
  ctx.ensure(c.status === 'Open', P, 'DatasetChallengeClosed')
  ctx.ensure(ctx.now <= c.deadline, P, 'ResponseTooLate')
  const t = getTask(ctx, c.taskId)
  let checked: ReturnType<typeof checkDatasetServePart>
  try {
    checked = checkDatasetServePart({ datasetRoot: hexToU8a(t.datasetRoot), facts: factsOf(c), steps: c.steps, served: c.served }, hexToU8a(a.part))
  } catch (e) {
    if (e instanceof DatasetServeRejected) ctx.fail(P, e.reason)
    ctx.fail(P, 'InvalidDatasetServe')
  }
  const from = c.served
  // rows already in (someone else's part landed first): nothing to record, and the sender's next part goes on from here
  if (checked.served === from) return
  c.served = checked.served
  // the event holds the new rows only: a part repeating rows already in must not put its whole bytes in an event per new row
  const part = u8aToHex(newRowsOf(hexToU8a(a.part), from))
  ctx.emit(P, 'DatasetServed', { challengeId: a.challengeId, taskId: c.taskId, from, rows: checked.served - from, total: checked.total, part })
  if (checked.served < checked.total) {
    // a serve is not timed out for its size: a block past the answer window per DATASET_PACE_BYTES of rows in, from
    // the opening (a fresh window per part let anyone holding the rows, the challenger too, dribble the serve and
    // hold the task a window per part)
    c.deadline = Math.max(c.deadline, c.openedAt + 1 + answerWindow(params(ctx), t) + Math.floor(datasetServeBytes(factsOf(c), c.served) / DATASET_PACE_BYTES))
    ctx.store.put(P, 'DatasetChallenges', a.challengeId, c)
    return
  }
  c.status = 'Answered'
  close(ctx, a.challengeId, c)
  ctx.store.put(P, 'AnsweredDatasetChallenges', c.taskId, [...ctx.store.read<bigint[]>(P, 'AnsweredDatasetChallenges', c.taskId), a.challengeId])
  ctx.emit(P, 'DatasetAnswered', { challengeId: a.challengeId, taskId: c.taskId })
  // a faulted task has no settlement to wait for: the deposit goes back
  if (t.phase === 'Faulted') settleAnsweredDatasetDeposits(ctx, c.taskId)
  // the verifier has the rows now: its reject is withdrawn once nothing else of its own is pending
  reopenVerdict(ctx, c.taskId, c.challenger, w => ownOpenAvailability(ctx, c.taskId, w).length > 0 || ownOpenDataset(ctx, c.taskId, w).length > 0)
}

export function datasetTimeout (ctx: Context, _who: string, a: { challengeId: bigint }): void {
  const c = getChallenge(ctx, a.challengeId)
  ctx.ensure(c.status === 'Open', P, 'DatasetChallengeClosed')
  ctx.ensure(ctx.now > c.deadline, P, 'DeadlineNotReached')
  unreserve(ctx, c.challenger, c.deposit)
  c.status = 'TimedOut'
  close(ctx, a.challengeId, c)
  const withheld = ctx.store.read<string[]>(P, 'DatasetWithheld', c.taskId)
  if (!withheld.includes(c.challenger)) ctx.store.put(P, 'DatasetWithheld', c.taskId, [...withheld, c.challenger])
  ctx.emit(P, 'DatasetTimedOut', { challengeId: a.challengeId, taskId: c.taskId, submitter: c.submitter })
}

type Handler = (ctx: Context, who: string, args: Record<string, Plain>) => void
/** Dispatch table entries for executive.ts. */
export const DATASET_HANDLERS: Record<string, Handler> = {
  'Arbitration.challenge_dataset': (ctx, who, a) => { challengeDataset(ctx, who, a as never) },
  'Arbitration.respond_dataset': (ctx, who, a) => respondDataset(ctx, who, a as never),
  'Arbitration.dataset_timeout': (ctx, who, a) => datasetTimeout(ctx, who, a as never)
}
