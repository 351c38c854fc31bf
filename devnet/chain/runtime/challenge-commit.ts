import { hexToU8a, u8aToHex } from '@polkadot/util'
import { challengeBytes, challengeCommitment } from '../../../protocols/dispute/challenge-commit.js'
import { getTask, params, requireNode } from './arbitration.js'
import { reserve, unreserve } from './balances.js'
import type { Plain } from './codec.js'
import type { Context } from './context.js'
import { openDispute } from './disputes.js'
import { challengeInitialState } from './initial-state.js'
import { sampleChunks } from './chunk-sampling.js'
import { ensureEvidenceWindow } from './late-backing.js'
import { takeSeq, type ChallengeCommit, type ChallengeKind, type Rank } from './challenge-shares.js'

// Commit–reveal of challenges (docs/economics.md "Copied disputes and
// claims"), part of the Arbitration pallet: commit_challenge posts a
// challenge's hash (protocols/dispute/challenge-commit.ts) with a deposit; a
// reveal call in a later block opens the challenge, which then ranks for the
// slash shares of its fact by the commitment's order (challenge-shares.ts).
// The deposit makes blanket commitments (one per step a copier might need)
// cost it a bond each that it never reveals.

const P = 'Arbitration'
/** unrevealed commitments a caller may hold on one task: bounds the storage, and a node needs one per challenge it is about to open */
export const MAX_OPEN_COMMITS = 16

const commitsOf = (ctx: Context, taskId: bigint): ChallengeCommit[] => ctx.store.read<ChallengeCommit[]>(P, 'ChallengeCommits', taskId)
function putCommits (ctx: Context, taskId: bigint, c: ChallengeCommit[]): void {
  if (c.length === 0) ctx.store.remove(P, 'ChallengeCommits', taskId)
  else ctx.store.put(P, 'ChallengeCommits', taskId, c)
}

export function commitChallenge (ctx: Context, who: string, a: { taskId: bigint, hash: string }): void {
  requireNode(ctx, who)
  const t = getTask(ctx, a.taskId)
  ctx.ensure(t.phase === 'Verifying', P, 'WrongPhase')
  ensureEvidenceWindow(ctx, a.taskId, t, who)
  ctx.ensure(t.solver !== null && who !== t.solver, P, 'SolverCannotVerify')
  const all = commitsOf(ctx, a.taskId)
  ctx.ensure(all.filter(c => c.who === who).length < MAX_OPEN_COMMITS, P, 'TooManyCommitments')
  const p = params(ctx)
  reserve(ctx, who, p.disputeBond)
  const seq = takeSeq(ctx)
  putCommits(ctx, a.taskId, [...all, { who, commitment: a.hash, at: ctx.now, seq, deposit: p.disputeBond }])
  ctx.emit(P, 'ChallengeCommitted', { taskId: a.taskId, who, commitment: a.hash, seq, revealBy: ctx.now + p.disputeClock })
}

/**
 * Consumes the caller's commitment to this challenge: made in an earlier
 * block, at most dispute_clock blocks ago. Its deposit comes back (the
 * challenge reserves its own bond); the challenge ranks by its seq, and its
 * window rule is read at the commitment's block.
 */
export function takeCommitment (ctx: Context, who: string, taskId: bigint, kind: ChallengeKind, what: number | Uint8Array, salt: string): Rank {
  let hash: string
  try {
    hash = u8aToHex(challengeCommitment(hexToU8a(who), taskId, kind, challengeBytes(kind, what), hexToU8a(salt)))
  } catch { ctx.fail(P, 'CommitmentNotFound') }
  const all = commitsOf(ctx, taskId)
  const i = all.findIndex(c => c.who === who && c.commitment === hash)
  ctx.ensure(i >= 0, P, 'CommitmentNotFound')
  const c = all[i]
  ctx.ensure(ctx.now > c.at, P, 'CommitmentTooRecent')
  ctx.ensure(ctx.now <= c.at + params(ctx).disputeClock, P, 'CommitmentExpired')
  putCommits(ctx, taskId, all.filter((_, k) => k !== i))
  unreserve(ctx, who, c.deposit)
  ctx.emit(P, 'ChallengeRevealed', { taskId, who, kind, seq: c.seq })
  return { committed: true, seq: c.seq, at: c.at }
}

type Handler = (ctx: Context, who: string, args: Record<string, Plain>) => void
/** Dispatch table entries for dispatch.ts. */
export const COMMIT_HANDLERS: Record<string, Handler> = {
  'Arbitration.commit_challenge': (ctx, who, a) => commitChallenge(ctx, who, a as never),
  'Arbitration.reveal_dispute': (ctx, who, a) => {
    const x = a as unknown as { taskId: bigint, defender: string, kind: 'SolverProof', disputedStep: number, salt: string }
    openDispute(ctx, who, x, takeCommitment(ctx, who, x.taskId, 'Dispute', x.disputedStep, x.salt))
  },
  'Arbitration.reveal_initial_state': (ctx, who, a) => {
    const x = a as unknown as { taskId: bigint, claim: string, salt: string }
    challengeInitialState(ctx, who, x, takeCommitment(ctx, who, x.taskId, 'InitialState', hexToU8a(x.claim), x.salt))
  },
  'Arbitration.reveal_sample_chunks': (ctx, who, a) => {
    const x = a as unknown as { taskId: bigint, checkpointStep: number, salt: string }
    sampleChunks(ctx, who, x, takeCommitment(ctx, who, x.taskId, 'Chunks', x.checkpointStep, x.salt))
  }
}
