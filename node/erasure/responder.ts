import { join } from 'node:path'
import { hexToU8a } from '@polkadot/util'
import { chunkSampleSeed } from '../../protocols/erasure/response.js'
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

const sleep = async (ms: number): Promise<void> => await new Promise(resolve => setTimeout(resolve, ms))
const errName = (e: unknown): string => (e as { error?: string }).error ?? ''

export class ChunkResponder {
  readonly handled: AnsweredRequest[] = []
  private readonly inFlight = new Set<number>()

  constructor (private readonly o: ChunkResponderInit) {}

  onChainEvent (e: ChainEvent, me: string): void {
    if (e.section !== 'arbitration' || e.method !== 'ChunksRequested' || e.data.solver !== me) return
    this.start(Number(e.data.requestId))
  }

  /** Answers open requests against this node found on chain (events missed while down). */
  async catchUp (): Promise<void> {
    const chain = await this.o.chain()
    for (const taskId of await chain.openTasks()) {
      const t = await chain.task(taskId)
      if (t == null || t.solver !== chain.accountId || t.phase !== 'Verifying' || t.openDisputes === 0) continue
      for (const [, id] of await chain.openChunkRequests(taskId)) this.start(id)
    }
  }

  private start (id: number): void {
    if (this.inFlight.has(id)) return
    this.inFlight.add(id)
    void this.answer(id).catch(err => this.o.log.error({ err: (err as Error).message, requestId: id }, 'answering the chunk-sample request failed')).finally(() => this.inFlight.delete(id))
  }

  async answer (id: number): Promise<void> {
    const t0 = Date.now()
    const chain = await this.o.chain()
    const r = await chain.chunkRequest(id)
    if (r == null || r.status !== 'Open' || r.solver !== chain.accountId) return
    const taskId = Number(r.taskId)
    const done = (answered: boolean, extra: Partial<AnsweredRequest>): void => {
      this.handled.push({
        requestId: id, taskId, step: r.checkpointStep, answered, ms: Date.now() - t0, ...extra
      }); if (this.handled.length > 100) this.handled.shift()
    }
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
