import { hexToU8a } from '@polkadot/util'
import { ChunkResponseRejected, checkChunkResponse, chunkSampleSeed } from '../../../protocols/erasure/response.js'
import { findChunkRoot } from '../../../protocols/erasure/commitment.js'
import { checkpointPosition } from '../../../protocols/erasure/params.js'
import { adjustActive, getTask, params, putTask, requireNode } from './arbitration.js'
import { reserve, unreserve } from './balances.js'
import type { Plain } from './codec.js'
import type { Context } from './context.js'
import type { ChunkRequest, ChunkRequestStatus } from '../../../protocols/pallet-types.js'
import { closeRequest, settleHeldDeposit, slashUnanswered } from './held-deposits.js'

// Chunk sampling of erasure-coded checkpoints (docs/protocol.md, "Chunk
// sampling"), part of the Arbitration pallet. A node that cannot fetch a
// sampled chunk from any provider asks the chain, with a deposit, for samples
// of that checkpoint's chunks; the hash of the block that includes the request
// draws them; the solver must post them with their paths to the coded root it
// committed (commit_proof's "chunk-root:" entry) within dispute_clock blocks.
// Answered: the chunks are in events for anyone and the deposit is held until
// the task ends (to the solver if the task was verified anyway, back to the
// requester if not). Unanswered: the solver is slashed and the task fails. An
// open request counts in task.open_disputes, so the task does not settle under it.

const P = 'Arbitration'

export type { ChunkRequest, ChunkRequestStatus }

function getRequest (ctx: Context, id: bigint): ChunkRequest {
  const r = ctx.store.get<ChunkRequest>(P, 'ChunkRequests', id)
  if (r === undefined) ctx.fail(P, 'ChunkRequestNotFound')
  return r
}
const putRequest = (ctx: Context, id: bigint, r: ChunkRequest): void => ctx.store.put(P, 'ChunkRequests', id, r)
const openOf = (ctx: Context, taskId: bigint): Array<[number, bigint]> => ctx.store.read<Array<[number, bigint]>>(P, 'OpenChunkRequests', taskId)

export function sampleChunks (ctx: Context, who: string, a: { taskId: bigint, checkpointStep: number }): bigint {
  requireNode(ctx, who)
  const t = getTask(ctx, a.taskId)
  ctx.ensure(t.phase === 'Verifying', P, 'WrongPhase')
  ctx.ensure(ctx.now <= t.challengeEnd, P, 'ChallengeWindowClosed')
  ctx.ensure(t.solver !== null && who !== t.solver, P, 'SolverCannotVerify')
  ctx.ensure(checkpointPosition(a.checkpointStep, t.stepCount, t.checkpointEvery) !== null, P, 'NotCheckpointStep')
  const open = openOf(ctx, a.taskId)
  ctx.ensure(!open.some(([s]) => s === a.checkpointStep), P, 'ChunkRequestOpen')
  const p = params(ctx)
  reserve(ctx, who, p.disputeBond)
  const id = ctx.store.read<bigint>(P, 'NextChunkRequestId')
  ctx.store.put(P, 'NextChunkRequestId', undefined, id + 1n)
  // the indices come from this block's hash, readable from the next block on
  const r: ChunkRequest = {
    taskId: a.taskId,
    requester: who,
    solver: t.solver!,
    checkpointStep: a.checkpointStep,
    deposit: p.disputeBond,
    openedAt: ctx.now,
    deadline: ctx.now + 1 + p.disputeClock,
    samples: 0,
    posted: 0n,
    status: 'Open'
  }
  putRequest(ctx, id, r)
  ctx.store.put(P, 'OpenChunkRequests', a.taskId, [...open, [a.checkpointStep, id]])
  t.openDisputes += 1
  putTask(ctx, a.taskId, t)
  adjustActive(ctx, who, 1)
  adjustActive(ctx, r.solver, 1)
  ctx.emit(P, 'ChunksRequested', { requestId: id, taskId: a.taskId, requester: who, solver: r.solver, checkpointStep: a.checkpointStep, deposit: r.deposit, deadline: r.deadline })
  return id
}

function finish (ctx: Context, id: bigint, r: ChunkRequest): void {
  putRequest(ctx, id, r)
  closeRequest(ctx, 'OpenChunkRequests', id, r)
}

const utf8 = (hex: string): string => new TextDecoder().decode(hexToU8a(hex))

export function respondChunks (ctx: Context, who: string, a: { requestId: bigint, response: string }): void {
  const r = getRequest(ctx, a.requestId)
  ctx.ensure(r.status === 'Open', P, 'ChunkRequestClosed')
  ctx.ensure(who === r.solver, P, 'NotSelectedSolver')
  ctx.ensure(ctx.now > r.openedAt, P, 'SamplesNotReady')
  ctx.ensure(ctx.now <= r.deadline, P, 'ResponseTooLate')
  const t = getTask(ctx, r.taskId)
  // a proof committed without a coded root can answer no request
  const codedRoot = findChunkRoot(t.checkpoints.map(utf8))
  if (codedRoot === null) ctx.fail(P, 'ChunkProofInvalid')
  const seed = chunkSampleSeed(hexToU8a(ctx.store.read<string>('System', 'BlockHash', r.openedAt)), a.requestId)
  let checked: ReturnType<typeof checkChunkResponse>
  try {
    checked = checkChunkResponse({ codedRoot, step: r.checkpointStep, stepCount: t.stepCount, checkpointEvery: t.checkpointEvery, seed, posted: r.posted }, hexToU8a(a.response))
  } catch (e) {
    if (e instanceof ChunkResponseRejected) ctx.fail(P, e.reason)
    ctx.fail(P, 'InvalidChunkResponse')
  }
  for (const k of checked.posted) r.posted |= 1n << BigInt(k)
  r.samples = checked.samples
  ctx.emit(P, 'ChunksPosted', { requestId: a.requestId, taskId: r.taskId, posted: checked.posted.length, response: a.response })
  if (r.posted !== (1n << BigInt(r.samples)) - 1n) { putRequest(ctx, a.requestId, r); return }
  ctx.store.put(P, 'AnsweredChunkRequests', r.taskId, [...ctx.store.read<bigint[]>(P, 'AnsweredChunkRequests', r.taskId), a.requestId])
  r.status = 'Answered'
  finish(ctx, a.requestId, r)
  ctx.emit(P, 'ChunksAnswered', { requestId: a.requestId, taskId: r.taskId, solver: r.solver })
}

export function chunksTimeout (ctx: Context, _who: string, a: { requestId: bigint }): void {
  const r = getRequest(ctx, a.requestId)
  ctx.ensure(r.status === 'Open', P, 'ChunkRequestClosed')
  ctx.ensure(ctx.now > r.deadline, P, 'DeadlineNotReached')
  unreserve(ctx, r.requester, r.deposit)
  const slashed = slashUnanswered(ctx, r.solver, r.requester)
  r.status = 'TimedOut'
  finish(ctx, a.requestId, r)
  ctx.emit(P, 'ChunksTimedOut', { requestId: a.requestId, taskId: r.taskId, solver: r.solver, slashed })
}

/** At the end of a task, the deposits of answered requests: to the solver when `toSolver` (verified anyway), else back to their requesters. */
export function settleAnsweredChunkDeposits (ctx: Context, taskId: bigint, toSolver: boolean): void {
  for (const id of ctx.store.read<bigint[]>(P, 'AnsweredChunkRequests', taskId)) {
    const r = ctx.store.get<ChunkRequest>(P, 'ChunkRequests', id)
    if (r === undefined) continue
    const to = settleHeldDeposit(ctx, r, toSolver)
    ctx.emit(P, 'ChunkDepositSettled', { requestId: id, taskId, to, amount: r.deposit })
  }
  ctx.store.remove(P, 'AnsweredChunkRequests', taskId)
}

type Handler = (ctx: Context, who: string, args: Record<string, Plain>) => void
/** Dispatch table entries for executive.ts. */
export const CHUNK_HANDLERS: Record<string, Handler> = {
  'Arbitration.sample_chunks': (ctx, who, a) => { sampleChunks(ctx, who, a as never) },
  'Arbitration.respond_chunks': (ctx, who, a) => respondChunks(ctx, who, a as never),
  'Arbitration.chunks_timeout': (ctx, who, a) => chunksTimeout(ctx, who, a as never)
}
