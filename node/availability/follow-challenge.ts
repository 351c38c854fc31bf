import type { Logger } from '../log.js'
import { errName, sleep } from './challenge-responder.js'

// What a challenger does once its challenge is on chain, whatever was
// challenged (a checkpoint, a dataset's rows): it watches the challenge until
// the chain ends it, served or timed out, and times it out itself (anyone may)
// once the deadline is past.

/** `served`: answered, everything challenged is on chain */
export interface ChallengeOutcome { challengeId: number, winner: 'challenger' | 'defender', reason: string, served?: boolean }

export interface FollowedKind {
  /** in logs and errors: "availability challenge", "dataset challenge" */
  what: string
  read: (id: number) => Promise<{ status: string, deadline: number } | null>
  timeout: (id: number) => Promise<unknown>
  bestNumber: () => Promise<number>
  /** the runtime's error when the challenge ended meanwhile (`arbitration.X`) */
  closed: string
  /** the outcome's reasons, served and not */
  served: string
  unserved: string
  /** logged when this node timed the challenge out */
  timedOut: string
}

/** Follows challenge `id` until the chain ends it: served, or timed out (by this node once its deadline is past). */
export async function followChallenge (
  kind: FollowedKind, taskId: number, id: number, log: Logger, o: { pollMs?: number, maxMs?: number }
): Promise<ChallengeOutcome> {
  const maxMs = o.maxMs ?? 30 * 60_000
  const until = Date.now() + maxMs
  while (Date.now() < until) {
    const c = await kind.read(id)
    if (c == null) throw new Error(`${kind.what} ${id} vanished from the chain`)
    if (c.status === 'Answered') return { challengeId: id, winner: 'defender', reason: kind.served, served: true }
    if (c.status === 'TimedOut') return { challengeId: id, winner: 'challenger', reason: kind.unserved }
    // the next block is past the deadline: time the challenge out
    if (await kind.bestNumber() >= c.deadline) {
      try {
        await kind.timeout(id)
        log.warn({ taskId, challengeId: id }, kind.timedOut)
      } catch (err) {
        if (![kind.closed, 'arbitration.DeadlineNotReached'].includes(errName(err))) log.warn({ err: (err as Error).message, challengeId: id }, `timing the ${kind.what} out failed; retrying`)
      }
    }
    await sleep(o.pollMs ?? 500)
  }
  throw new Error(`${kind.what} ${id} did not end within ${Math.round(maxMs / 1000)} s`)
}
