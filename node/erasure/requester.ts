import type { ChainClient } from '../chain/client.js'
import type { Logger } from '../log.js'

// The requester's side of a chunk-sample request: a verifier that could not
// fetch a sampled chunk from any provider asks the chain (a deposit is
// reserved), then watches the request: answered → the chunks are on chain
// (the deposit is settled with the task); still open after its deadline → it
// calls chunks_timeout itself (anyone may): the solver is slashed, the task fails.

export interface ChunkRequestOutcome { requestId: number, answered: boolean }

const sleep = async (ms: number): Promise<void> => await new Promise(resolve => setTimeout(resolve, ms))
const errName = (e: unknown): string => (e as { error?: string }).error ?? ''

export async function runChunkRequest (
  chain: ChainClient, taskId: number, step: number, log: Logger, opts: { pollMs?: number, maxMs?: number } = {}
): Promise<ChunkRequestOutcome> {
  let id: number
  // another requester asked already: follow its request (a commitment that could not be revealed would lose its deposit)
  const asked = (await chain.openChunkRequests(taskId)).find(([s]) => s === step)
  if (asked != null) id = asked[1]
  else {
    try {
      // committed a block before it is revealed: a watcher copying it from the pool neither shuts it out nor takes its share
      id = Number(await chain.sampleChunksCommitted(taskId, step))
      log.warn({ taskId, step, requestId: id }, 'a sampled chunk could not be fetched: chunk samples requested on chain')
    } catch (err) {
      if (errName(err) !== 'arbitration.ChunkRequestOpen') throw err
      const open = (await chain.openChunkRequests(taskId)).find(([s]) => s === step)
      if (open == null) throw err
      id = open[1]
    }
  }
  const until = Date.now() + (opts.maxMs ?? 30 * 60_000)
  while (Date.now() < until) {
    const r = await chain.chunkRequest(id)
    if (r == null) throw new Error(`chunk request ${id} vanished from the chain`)
    if (r.status === 'Answered') return { requestId: id, answered: true }
    if (r.status === 'TimedOut') return { requestId: id, answered: false }
    if (await chain.bestNumber() >= r.deadline) {
      try {
        await chain.chunksTimeout(id)
        log.warn({ taskId, requestId: id }, 'the solver did not post the sampled chunks: timed out on chain')
      } catch (err) {
        if (!['arbitration.ChunkRequestClosed', 'arbitration.DeadlineNotReached'].includes(errName(err))) log.warn({ err: (err as Error).message, requestId: id }, 'chunks_timeout failed; retrying')
      }
    }
    await sleep(opts.pollMs ?? 500)
  }
  throw new Error(`chunk request ${id} did not end within ${Math.round((opts.maxMs ?? 1_800_000) / 1000)} s`)
}
