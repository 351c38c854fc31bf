import type { ChainClient } from '../chain/client.js'
import type { Logger } from '../log.js'

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
export interface DatasetChallengeOutcome { challengeId: number, winner: 'challenger' | 'defender', reason: string, served?: boolean }

const sleep = async (ms: number): Promise<void> => await new Promise(resolve => setTimeout(resolve, ms))
const errName = (e: unknown): string => (e as { error?: string }).error ?? ''

/** This node's dataset challenge of the task, open or answered (after a restart it challenged already), or undefined. */
async function ownChallenge (chain: ChainClient, taskId: number): Promise<number | undefined> {
  for (const id of [...await chain.openDatasetChallenges(taskId), ...await chain.answeredDatasetChallenges(taskId)]) {
    if ((await chain.datasetChallenge(id))?.challenger === chain.accountId) return id
  }
  return undefined
}

/** Follows challenge `id` until the chain ends it: served, or timed out (by this node once its deadline is past). */
async function followChallenge (
  chain: ChainClient, taskId: number, id: number, log: Logger, o: { pollMs?: number, maxMs?: number }
): Promise<DatasetChallengeOutcome> {
  const until = Date.now() + (o.maxMs ?? 30 * 60_000)
  while (Date.now() < until) {
    const c = await chain.datasetChallenge(id)
    if (c == null) throw new Error(`dataset challenge ${id} vanished from the chain`)
    if (c.status === 'Answered') return { challengeId: id, winner: 'defender', reason: 'the submitter served the challenged dataset rows on chain', served: true }
    if (c.status === 'TimedOut') return { challengeId: id, winner: 'challenger', reason: 'the submitter did not serve the dataset rows by the deadline' }
    // the next block is past the deadline: time the challenge out
    if (await chain.bestNumber() >= c.deadline) {
      try {
        await chain.datasetTimeout(id)
        log.warn({ taskId, challengeId: id }, 'the submitter did not serve the challenged dataset rows: timed out on chain (our reject stands)')
      } catch (err) {
        if (!['arbitration.DatasetChallengeClosed', 'arbitration.DeadlineNotReached'].includes(errName(err))) log.warn({ err: (err as Error).message, challengeId: id }, 'dataset_timeout failed; retrying')
      }
    }
    await sleep(o.pollMs ?? 500)
  }
  throw new Error(`dataset challenge ${id} did not end within ${Math.round((o.maxMs ?? 1_800_000) / 1000)} s`)
}

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
  return await followChallenge(chain, taskId, id, log, o)
}

/** The id of this node's answered dataset challenge of the task (its rows are on chain), or undefined. */
export async function answeredOwnChallenge (chain: ChainClient, taskId: number): Promise<number | undefined> {
  for (const id of await chain.answeredDatasetChallenges(taskId)) {
    const c = await chain.datasetChallenge(id)
    if (c?.challenger === chain.accountId && c.status === 'Answered') return id
  }
  return undefined
}
