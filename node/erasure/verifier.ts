import { writeFileSync } from 'node:fs'
import type { RunIndex } from '../../protocols/verification/run-index.js'
import type { ChainClient } from '../chain/client.js'
import type { Logger } from '../log.js'
import type { ShardService } from '../shards/index.js'
import { runChunkRequest } from './requester.js'
import { checkCodedIndex, rebuildFromChunks, sampleFromProviders } from './verifier-chunks.js'

// What a verifier does with erasure-coded checkpoints during a verification
// (NodePorts.verify): check the run index's codings against the coded root on
// chain, rebuild a checkpoint it could not fetch whole from any k chunks
// (the solver first, then any provider), sample the chunks of one checkpoint
// from the solver, and escalate to a chunk-sample request on chain whenever a
// chunk cannot be fetched (followed in the background: it never delays the verdict).

type Entry = RunIndex['checkpoints'][number]
export interface VerifierChunksInit { shards: ShardService, chain: () => Promise<ChainClient>, log: Logger }

export class VerifierChunks {
  constructor (private readonly o: VerifierChunksInit) {}

  /** True iff the run index's codings make the coded root committed on chain; else the chain is asked for samples of the first checkpoint. */
  checkIndex (taskId: number, index: RunIndex, chainEntries: readonly string[]): boolean {
    try {
      checkCodedIndex(index, chainEntries)
      return true
    } catch (err) {
      this.o.log.warn({ taskId, reason: (err as Error).message }, 'the checkpoint codings cannot be checked against the chain')
      if (index.checkpoints[0] != null && chainEntries.some(e => e.startsWith('chunk-root:'))) this.escalate(taskId, index.checkpoints[0].step)
      return false
    }
  }

  /** Writes the checkpoint rebuilt from its chunks to `file`; returns the problem when it cannot (and escalates). */
  async rebuild (taskId: number, ck: Entry, file: string, solverPeer: string | undefined, problem: string, signal?: AbortSignal): Promise<string | undefined> {
    for (const providers of [solverPeer != null ? [solverPeer] : undefined, undefined]) {
      try {
        const t0 = performance.now()
        writeFileSync(file, await rebuildFromChunks(this.o.shards, ck, { providers, signal }))
        this.o.log.info({ taskId, step: ck.step, ms: Math.round(performance.now() - t0) }, 'checkpoint rebuilt from its erasure-coded chunks')
        return undefined
      } catch (err) {
        problem = `${problem}; rebuilding from chunks: ${(err as Error).message}`
      }
      if (signal?.aborted === true) return problem // the verifier's deadline, not evidence: the availability challenge follows
    }
    this.escalate(taskId, ck.step)
    return problem
  }

  /** Samples chunks of a checkpoint from the solver; any that cannot be fetched → a request on chain (not when `signal` ended the sampling). */
  async sample (taskId: number, ck: Entry, solverPeer: string | undefined, signal?: AbortSignal): Promise<void> {
    try {
      const missing = await sampleFromProviders(this.o.shards, ck, { providers: solverPeer != null ? [solverPeer] : undefined, signal })
      if (missing.length === 0) return
      this.o.log.warn({ taskId, step: ck.step, missing: missing.length }, 'sampled chunks could not be fetched')
    } catch (err) {
      this.o.log.warn({ taskId, step: ck.step, err: (err as Error).message }, 'chunk sampling failed')
    }
    // cut short by the verifier's own deadline (`signal`): no evidence against the solver
    if (signal?.aborted === true) return
    this.escalate(taskId, ck.step)
  }

  /** A chunk-sample request on chain, followed to its end in the background. */
  escalate (taskId: number, step: number): void {
    void (async () => await runChunkRequest(await this.o.chain(), taskId, step, this.o.log))()
      .then(r => this.o.log.info({ taskId, step, ...r }, r.answered ? 'the solver posted the sampled chunks on chain' : 'the solver was slashed for unposted chunks'))
      .catch(err => this.o.log.warn({ taskId, step, err: (err as Error).message }, 'chunk-sample request failed'))
  }
}
