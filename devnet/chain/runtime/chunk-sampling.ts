import { hexToU8a } from '@polkadot/util'
import { ChunkResponseRejected, checkChunkResponse, chunkSampleSeed } from '../../../protocols/erasure/response.js'
import { findChunkRoot } from '../../../protocols/erasure/commitment.js'
import { checkpointPosition } from '../../../protocols/erasure/params.js'
import { getTask } from './arbitration.js'
import type { Plain } from './codec.js'
import type { Context } from './context.js'
import type { ChunkRequest, ChunkRequestStatus } from '../../../protocols/pallet-types.js'
import { answerHeld, getHeld, openHeld, putHeld, settleHeld, timeOutHeld, type HeldKind } from './held-requests.js'
import { blockRandomness } from './block-randomness.js'
import { CHALLENGE_POT, holdShare, noteChallenge, payShares, ranksBeforeAll, settleChallenge, uncommitted, type Rank } from './challenge-shares.js'

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

const CHUNKS: HeldKind<ChunkRequest> = {
  items: 'ChunkRequests',
  open: 'OpenChunkRequests',
  answered: 'AnsweredChunkRequests',
  nextId: 'NextChunkRequestId',
  notFound: 'ChunkRequestNotFound',
  closed: 'ChunkRequestClosed',
  alreadyOpen: 'ChunkRequestOpen',
  requester: r => r.requester
}

/**
 * `committed`: the commitment it reveals (reveal_sample_chunks); without one it ranks after every committed
 * challenge (challenge-shares.ts). A request ranked before every open one of its checkpoint opens beside them:
 * a copy included first must not shut the finder out of its own request.
 */
export function sampleChunks (ctx: Context, who: string, a: { taskId: bigint, checkpointStep: number }, committed?: Rank): bigint {
  const rank = committed ?? uncommitted(ctx)
  const open = ctx.store.read<Array<[number, bigint]>>(P, 'OpenChunkRequests', a.taskId)
    .filter(([s]) => s === a.checkpointStep).map(([, x]) => BigInt(x))
  const repeat = rank.committed && ranksBeforeAll(ctx, a.taskId, 'Chunks', open, rank)
  // samples stays 0 until the first part is posted: the indices come from the including block's hash
  const isCheckpoint = (t: { stepCount: number, checkpointEvery: number }, step: number): boolean =>
    checkpointPosition(step, t.stepCount, t.checkpointEvery) !== null
  const { id, r } = openHeld(ctx, { ...CHUNKS, mayRepeat: () => repeat }, who, a, isCheckpoint,
    base => ({ ...base, requester: who, posted: 0n }), committed?.at)
  noteChallenge(ctx, a.taskId, who, 'Chunks', id, a.checkpointStep, rank)
  ctx.emit(P, 'ChunksRequested', { requestId: id, taskId: a.taskId, requester: who, solver: r.solver, checkpointStep: a.checkpointStep, deposit: r.deposit, deadline: r.deadline })
  return id
}

const utf8 = (hex: string): string => new TextDecoder().decode(hexToU8a(hex))

export function respondChunks (ctx: Context, who: string, a: { requestId: bigint, response: string }): void {
  const r = getHeld(ctx, CHUNKS, a.requestId)
  ctx.ensure(r.status === 'Open', P, 'ChunkRequestClosed')
  ctx.ensure(who === r.solver, P, 'NotSelectedSolver')
  ctx.ensure(ctx.now > r.openedAt, P, 'SamplesNotReady')
  ctx.ensure(ctx.now <= r.deadline, P, 'ResponseTooLate')
  const t = getTask(ctx, r.taskId)
  // a proof committed without a coded root can answer no request
  const codedRoot = findChunkRoot(t.checkpoints.map(utf8))
  if (codedRoot === null) ctx.fail(P, 'ChunkProofInvalid')
  const seed = chunkSampleSeed(hexToU8a(blockRandomness(ctx, r.openedAt)), a.requestId)
  let checked: ReturnType<typeof checkChunkResponse>
  try {
    checked = checkChunkResponse(
      { codedRoot, step: r.checkpointStep, stepCount: t.stepCount, checkpointEvery: t.checkpointEvery, seed, posted: r.posted }, hexToU8a(a.response)
    )
  } catch (e) {
    if (e instanceof ChunkResponseRejected) ctx.fail(P, e.reason)
    ctx.fail(P, 'InvalidChunkResponse')
  }
  for (const k of checked.posted) r.posted |= 1n << BigInt(k)
  r.samples = checked.samples
  ctx.emit(P, 'ChunksPosted', { requestId: a.requestId, taskId: r.taskId, posted: checked.posted.length, response: a.response })
  if (r.posted !== (1n << BigInt(r.samples)) - 1n) { putHeld(ctx, CHUNKS, a.requestId, r); return }
  answerHeld(ctx, CHUNKS, a.requestId, r)
  settleChallenge(ctx, r.taskId, 'Chunks', a.requestId, 'Closed')
  ctx.emit(P, 'ChunksAnswered', { requestId: a.requestId, taskId: r.taskId, solver: r.solver })
}

export function chunksTimeout (ctx: Context, _who: string, a: { requestId: bigint }): void {
  // the requester's share goes by rank among the requests of the checkpoint (challenge-shares.ts)
  const { r, slashed, toWinner } = timeOutHeld(ctx, CHUNKS, a.requestId, CHALLENGE_POT)
  if (settleChallenge(ctx, r.taskId, 'Chunks', a.requestId, 'Won') === undefined) noteChallenge(ctx, r.taskId, r.requester, 'Chunks', a.requestId, r.checkpointStep, uncommitted(ctx), 'Won')
  // what the pot got: the held share must never exceed it (the pot holds every task's shares)
  holdShare(ctx, r.taskId, 'Chunks', r.checkpointStep, toWinner)
  payShares(ctx, r.taskId)
  ctx.emit(P, 'ChunksTimedOut', { requestId: a.requestId, taskId: r.taskId, solver: r.solver, slashed })
}

/** At the end of a task, the deposits of answered requests: to the solver when `toSolver` (verified anyway), else back to their requesters. */
export function settleAnsweredChunkDeposits (ctx: Context, taskId: bigint, toSolver: boolean): void {
  settleHeld(ctx, CHUNKS, taskId, toSolver, (id, r, to) => { ctx.emit(P, 'ChunkDepositSettled', { requestId: id, taskId, to, amount: r.deposit }) })
}

type Handler = (ctx: Context, who: string, args: Record<string, Plain>) => void
/** Dispatch table entries for executive.ts. */
export const CHUNK_HANDLERS: Record<string, Handler> = {
  'Arbitration.sample_chunks': (ctx, who, a) => { sampleChunks(ctx, who, a as never) },
  'Arbitration.respond_chunks': (ctx, who, a) => respondChunks(ctx, who, a as never),
  'Arbitration.chunks_timeout': (ctx, who, a) => chunksTimeout(ctx, who, a as never)
}
