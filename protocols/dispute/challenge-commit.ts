import { sha256 } from '../commit/merkle.js'

// Commit–reveal of challenges (docs/economics.md "Copied disputes and
// claims"). What a challenger posts is public before it is ruled: a pending
// call sits in the pool, an included one in an event. A challenger first
// posts only the hash of its challenge (commit_challenge), and reveals the
// challenge itself in a later block; the slash shares of a fact go to its
// winning challengers in the order of their commitments, so a copier, who
// commits only after it saw the reveal, always ranks after the finder.
// The hash binds the caller (a copier cannot reuse the finder's commitment),
// the task, the kind and the challenge's identifying bytes, and a random salt
// hides them (a disputed step or a checkpoint is guessable without it).

export const CHALLENGE_COMMIT_DOMAIN = new TextEncoder().encode('proofswarm/challenge/v1')

/** The kinds of challenge a commitment may reveal, as hashed (one byte). */
export const CHALLENGE_KINDS = { Dispute: 0, InitialState: 1, Chunks: 2 } as const
export type ChallengeKind = keyof typeof CHALLENGE_KINDS

const u32le = (n: number): Uint8Array => { const b = new Uint8Array(4); new DataView(b.buffer).setUint32(0, n, true); return b }
const u64le = (n: bigint): Uint8Array => { const b = new Uint8Array(8); new DataView(b.buffer).setBigUint64(0, n, true); return b }

/** What a challenge of `kind` is identified by: a dispute's disputed_step, a chunk request's checkpoint_step (u32 LE), an initial-state claim's bytes. */
export function challengeBytes (kind: ChallengeKind, what: number | Uint8Array): Uint8Array {
  if (kind === 'InitialState') {
    if (typeof what === 'number') throw new Error('an initial-state challenge is identified by its claim bytes')
    return what
  }
  if (typeof what !== 'number') throw new Error(`a ${kind} challenge is identified by a step`)
  return u32le(what)
}

/**
 * sha256(DOMAIN ‖ caller (32 bytes) ‖ task id (u64 LE) ‖ kind (u8) ‖ bytes ‖ salt (32 bytes)):
 * the hash commit_challenge posts and a reveal must match.
 */
export function challengeCommitment (caller: Uint8Array, taskId: bigint | number, kind: ChallengeKind, bytes: Uint8Array, salt: Uint8Array): Uint8Array {
  if (caller.length !== 32 || salt.length !== 32) throw new Error('caller and salt are 32 bytes')
  return sha256(CHALLENGE_COMMIT_DOMAIN, caller, u64le(BigInt(taskId)), Uint8Array.of(CHALLENGE_KINDS[kind]), bytes, salt)
}
