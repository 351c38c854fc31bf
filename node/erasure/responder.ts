import { join } from 'node:path'
import { hexToU8a } from '@polkadot/util'
import { chunkSampleSeed } from '../../protocols/erasure/response.js'
import type { TaskInfo } from '../../protocols/pallet-types.js'
import { ChallengeResponder, errName, sleep } from '../availability/challenge-responder.js'
import type { ChainClient, ChainEvent } from '../chain/client.js'
import type { Logger } from '../log.js'
import { chunkResponsesFromRun } from './coded-run.js'

// The solver's side of a chunk-sample request: when the chain reports a
// request against this node, it reads the sampled checkpoint's chunks from its
// run directory (dataDir/tasks/<task>/run, coded when the run was published),
// draws the indices from the hash of the block that included the request, and
// posts them in parts of at most 1 MiB before the deadline. A node without the
// chunks cannot answer, says so, and is slashed at the deadline.

export interface ChunkResponderInit {
  dataDir: string
  chain: () => Promise<ChainClient>
  log: Logger
}

export interface AnsweredRequest { requestId: number, taskId: number, step: number, answered: boolean, parts?: number, ms: number, reason?: string }

export class ChunkResponder extends ChallengeResponder<AnsweredRequest> {
  constructor (private readonly o: ChunkResponderInit) { super(o.chain, o.log, 'chunk-sample request') }

  onChainEvent (e: ChainEvent, me: string): void {
    if (e.section !== 'arbitration' || e.method !== 'ChunksRequested' || e.data.solver !== me) return
    this.start(Number(e.data.requestId))
  }

  protected answers (task: TaskInfo, me: string): boolean { return task.solver === me }
  protected async openChallenges (chain: ChainClient, taskId: bigint): Promise<number[]> { return (await chain.openChunkRequests(taskId)).map(([, id]) => id) }

  async answer (id: number): Promise<void> {
    const t0 = Date.now()
    const chain = await this.o.chain()
    const r = await chain.chunkRequest(id)
    if (r == null || r.status !== 'Open' || r.solver !== chain.accountId) return
    const taskId = Number(r.taskId)
    const done = (answered: boolean, extra: Partial<AnsweredRequest>): void =>
      this.record({ requestId: id, taskId, step: r.checkpointStep, answered, ms: Date.now() - t0, ...extra })
    let hash: string | null = null
    while (hash == null && Date.now() - t0 < 60_000) { hash = await chain.randomness(r.openedAt); if (hash == null) await sleep(300) }
    if (hash == null) throw new Error(`block ${r.openedAt} is not known`)
    let parts: Uint8Array[]
    try {
      parts = chunkResponsesFromRun(join(this.o.dataDir, 'tasks', String(taskId), 'run'), r.checkpointStep, chunkSampleSeed(hexToU8a(hash), id), BigInt(r.posted))
    } catch (err) {
      this.o.log.error({ taskId, requestId: id, step: r.checkpointStep, reason: (err as Error).message }, 'cannot answer the chunk-sample request: no coded checkpoint here (this node will be slashed at the deadline)')
      done(false, { reason: (err as Error).message })
      return
    }
    let sent = 0
    for (let attempt = 0; attempt < 20 && sent < parts.length; attempt++) {
      try {
        await chain.respondChunks(id, parts[sent])
        sent++
        attempt = -1
      } catch (err) {
        const name = errName(err)
        if (name === 'arbitration.SamplesNotReady') { await sleep(300); continue }
        if (name === 'arbitration.ChunkRequestClosed') return
        if (name !== '') { done(false, { reason: name }); throw err }
        await sleep(500) // transport trouble: retry
      }
    }
    this.o.log.info({ taskId, requestId: id, step: r.checkpointStep, parts: sent, ms: Date.now() - t0 }, 'answered the chunk-sample request')
    done(sent === parts.length, { parts: sent })
  }
}
