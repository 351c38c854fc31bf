import type { ChainClient } from '../chain/client.js'
import type { Logger } from '../log.js'
import { errName } from './challenge-responder.js'
import { followChallenge, type ChallengeOutcome, type FollowedKind } from './follow-challenge.js'

// The challenger's side of a data-availability challenge: a verifier that
// could not obtain a valid checkpoint opens the challenge on chain (a deposit
// is reserved), then watches it: answered → the solver served the checkpoint
// on chain, and the verifier replays from it and votes again (its reject was
// withdrawn); still open after its deadline → it calls availability_timeout
// itself (anyone may), the solver is slashed and the task fails.

/** `served`: answered, i.e. the solver put the whole checkpoint on chain (ChainClient.servedParts reads it) */
export type AvailabilityOutcome = ChallengeOutcome

/**
 * Opens a challenge of `step`, or of one of `alternatives` when `step` is already challenged by
 * another node (an assigned verifier needs a challenge of its own to back its reject); none
 * left: the open challenge of `step` is followed. Returns the challenge's id.
 */
async function openChallenge (chain: ChainClient, taskId: number, step: number, log: Logger, alternatives: number[] = []): Promise<number> {
  for (const s of [step, ...alternatives]) {
    try {
      const id = Number(await chain.challengeAvailability(taskId, s))
      log.warn({ taskId, step: s, challengeId: id }, 'checkpoint unavailable or invalid: data-availability challenge opened on chain')
      return id
    } catch (err) {
      if (errName(err) !== 'arbitration.AvailabilityAlreadyOpen') throw err
    }
  }
  // another verifier already challenged this checkpoint: follow its challenge instead
  const open = (await chain.openAvailability(taskId)).find(([s]) => s === step)
  if (open == null) throw new Error(`task ${taskId}: checkpoint ${step} is already challenged, but no open challenge of it was found`)
  log.info({ taskId, step, challengeId: open[1] }, 'this checkpoint is already challenged: following that challenge')
  return open[1]
}

const availabilityChallenge = (chain: ChainClient): FollowedKind => ({
  what: 'availability challenge',
  read: async id => await chain.availabilityChallenge(id),
  timeout: async id => await chain.availabilityTimeout(id),
  bestNumber: async () => await chain.bestNumber(),
  closed: 'arbitration.AvailabilityClosed',
  served: 'the solver served the checkpoint on chain',
  unserved: 'the solver did not answer by the deadline',
  timedOut: 'the solver did not answer the availability challenge: timed out on chain'
})

/**
 * Challenges of `step` and of every checkpoint in `more`, opened at once and followed together
 * (docs/economics.md "Selective serving": a verifier that challenged only the first missing
 * checkpoint its sample needs met the next one after the serve, past the window, and lapsed).
 * All in one call (challenge_availability_many) when there are several; if the chain refuses
 * that (one is already challenged), one by one: the first backs the reject (`alternatives` as
 * for openChallenge), and the chain takes the others while that reject rests on challenges of
 * its own still open. Served only when every one was served; the challenger wins if any timed
 * out. A further challenge the chain refuses is logged and the others are followed.
 */
export async function runAvailabilityChallenge (
  chain: ChainClient, taskId: number, step: number, log: Logger, opts: { pollMs?: number, maxMs?: number, alternatives?: number[], more?: number[] } = {}
): Promise<AvailabilityOutcome> {
  const more = [...new Set(opts.more ?? [])].filter(s => s !== step)
  let ids: number[] = []
  if (more.length > 0) {
    // in one call: opened one per block, a solver serving the first at once would reopen the verdict before the next was in
    try {
      ids = (await chain.challengeAvailabilityMany(taskId, [step, ...more])).map(Number)
      log.warn({ taskId, steps: [step, ...more], challengeIds: ids }, 'checkpoints unavailable or invalid: data-availability challenges opened on chain')
    } catch (err) {
      // one of them already challenged (by another node, or by this one before a restart): one by one
      log.info({ taskId, err: errName(err) || (err as Error).message }, 'challenging the checkpoints one by one')
    }
  }
  if (ids.length === 0) {
    ids = [await openChallenge(chain, taskId, step, log, opts.alternatives)]
    for (const s of more) {
      try {
        const id = await openChallenge(chain, taskId, s, log)
        if (!ids.includes(id)) ids.push(id)
      } catch (err) {
        log.warn({ taskId, step: s, err: errName(err) || (err as Error).message }, 'could not challenge this checkpoint too')
      }
    }
  }
  const outcomes = await Promise.all(ids.map(async id => await followChallenge(availabilityChallenge(chain), taskId, id, log, opts)))
  const lost = outcomes.find(o => o.winner === 'challenger')
  if (lost !== undefined || outcomes.length === 1) return lost ?? outcomes[0]
  return { challengeId: ids[0], winner: 'defender', reason: `the solver served all ${ids.length} checkpoints on chain`, served: true }
}
