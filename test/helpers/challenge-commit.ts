import { hexToU8a, u8aToHex } from '@polkadot/util'
import { sha256 } from '../../protocols/commit/merkle.js'
import { challengeBytes, challengeCommitment, type ChallengeKind } from '../../protocols/dispute/challenge-commit.js'

// Commit–reveal of challenges on a runtime harness: the commit_challenge call
// of `who` for a challenge of task 0, and the salt its reveal names.

type Call = [who: string, section: string, method: string, args: Record<string, unknown>]

/** A fixed salt per account and challenge (tests repeat). */
export const saltOf = (who: string, kind: ChallengeKind): string => u8aToHex(sha256(new TextEncoder().encode(`salt/${who}/${kind}`)))

/** commit_challenge of `who` (a name in `accounts`) for a challenge of `kind` identified by `what` (a step, or claim bytes as hex). */
export function commitCall (accounts: Record<string, string>, who: string, kind: ChallengeKind, what: number | string, taskId = 0): Call {
  const bytes = challengeBytes(kind, typeof what === 'string' ? hexToU8a(what) : what)
  const hash = challengeCommitment(hexToU8a(accounts[who]), taskId, kind, bytes, hexToU8a(saltOf(who, kind)))
  return [who, 'Arbitration', 'commit_challenge', { taskId, hash: u8aToHex(hash) }]
}
