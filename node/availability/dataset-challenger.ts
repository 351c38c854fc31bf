import type { ChainClient } from '../chain/client.js'
import type { Logger } from '../log.js'
import { errName } from './challenge-responder.js'
import { followChallenge, type ChallengeOutcome, type FollowedKind } from './follow-challenge.js'

// The verifier's side of a dataset availability challenge (docs/economics.md
// "A withheld dataset"): an assigned verifier that cannot obtain the task's
// custom dataset (not fetchable, or not the rows dataset_root commits)
// rejects and challenges the submitter to serve on chain the rows its
// required sample replays (challenge_dataset, with the task's program
// bytes), then watches the challenge: answered → the rows are on chain, its
// reject was withdrawn, and it replays from them and votes again; still open
// past its deadline → it calls dataset_timeout itself (anyone may): its reject
// stands, it is paid and never lapses.

/** `served`: answered, every challenged row is on chain (ChainClient.datasetServedParts reads them) */
export type DatasetChallengeOutcome = ChallengeOutcome

/** This node's dataset challenge of the task, open or answered (after a restart it challenged already), or undefined. */
async function ownChallenge (chain: ChainClient, taskId: number): Promise<number | undefined> {
  for (const id of [...await chain.openDatasetChallenges(taskId), ...await chain.answeredDatasetChallenges(taskId)]) {
    if ((await chain.datasetChallenge(id))?.challenger === chain.accountId) return id
  }
  return undefined
}

const datasetChallenge = (chain: ChainClient): FollowedKind => ({
  what: 'dataset challenge',
  read: async id => await chain.datasetChallenge(id),
  timeout: async id => await chain.datasetTimeout(id),
  bestNumber: async () => await chain.bestNumber(),
  closed: 'arbitration.DatasetChallengeClosed',
  served: 'the submitter served the challenged dataset rows on chain',
  unserved: 'the submitter did not serve the dataset rows by the deadline',
  timedOut: 'the submitter did not serve the challenged dataset rows: timed out on chain (our reject stands)'
})

/** Opens this node's dataset challenge of the task (or finds the one it opened before) and follows it to its end. */
export async function runDatasetChallenge (
  chain: ChainClient, taskId: number, program: Uint8Array, log: Logger, o: { pollMs?: number, maxMs?: number } = {}
): Promise<DatasetChallengeOutcome> {
  let id: number | undefined
  try {
    id = Number(await chain.challengeDataset(taskId, program))
    log.warn({ taskId, challengeId: id }, 'the task\'s dataset cannot be obtained: dataset challenge opened on chain')
  } catch (err) {
    if (errName(err) !== 'arbitration.DatasetAlreadyChallenged') throw err
    id = await ownChallenge(chain, taskId)
    if (id === undefined) throw new Error(`task ${taskId}: the chain says this node challenged the dataset, but no challenge of its is open or answered`)
    log.info({ taskId, challengeId: id }, 'following the dataset challenge this node opened before')
  }
  return await followChallenge(datasetChallenge(chain), taskId, id, log, o)
}

/** The id of this node's answered dataset challenge of the task (its rows are on chain), or undefined. */
export async function answeredOwnChallenge (chain: ChainClient, taskId: number): Promise<number | undefined> {
  for (const id of await chain.answeredDatasetChallenges(taskId)) {
    const c = await chain.datasetChallenge(id)
    if (c?.challenger === chain.accountId && c.status === 'Answered') return id
  }
  return undefined
}
