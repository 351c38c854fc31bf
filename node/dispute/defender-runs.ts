import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { rootEveryOfProof, validateProof, type ProofOfLearning } from '../../protocols/pol/proof.js'
import { segmentCount } from '../../protocols/pol/segments.js'
import type { ChainClient } from '../chain/client.js'
import type { TapeJob } from '../engine/protocol.js'
import type { TapeFile } from '../engine/tape-file.js'
import type { Logger } from '../log.js'
import { disputeShapeOf } from './dispute-shape.js'
import { tapeFaults, type NodeFaults } from './faults.js'
import { SegmentRuns, type SegmentRunHost } from './segment-defence.js'
import { TapeLane } from './tape-lane.js'
import type { DisputeResponse } from './transport.js'

// The defender's re-runs of its own training (docs/disputes.md, "Node side"):
// the tape of a disputed step and the roots inside a disputed segment, each
// made once for every dispute of it, with the faults the training had, one
// engine process at a time (tape-lane.ts); and a challenger's announcement of
// a dispute to come, which starts one early when the lane is idle.

export interface RunsHost extends SegmentRunHost {
  log: Logger
  faults: NodeFaults
  dataDir: string
  chain: () => Promise<ChainClient>
  /** an engine tape job (1-based step), its file read back */
  tapeInChild: (runDir: string, step: number, out: string, o: Pick<TapeJob, 'faults' | 'datasetProofs'>, signal?: AbortSignal) => Promise<TapeFile>
}

export class DefenderRuns {
  /** tapes by task and step: a second dispute of the same step (a verifier and a whistleblower) does not tape again */
  private readonly tapes = new Map<string, Promise<{ tape: TapeFile, proof: ProofOfLearning }>>()
  private readonly segments: SegmentRuns
  /** one tape at a time, in the order the disputes were opened (the chain's TapeQueue) */
  private readonly lane = new TapeLane()

  constructor (private readonly h: RunsHost) {
    // a segment's re-run is an engine process like a tape: it takes its turn in the lane
    this.segments = new SegmentRuns({
      segmentRoots: async (runDir, first, length, faults) => await this.lane.run(`segment/${runDir}/${first}`, async () => await h.segmentRoots(runDir, first, length, faults))
    })
  }

  runDir (taskId: number): string { return join(this.h.dataDir, 'tasks', String(taskId), 'run') }

  /** Our run's proof of the task: the one committed on chain, with the chain's root spacing. */
  async proofOf (chain: ChainClient, taskId: number, rootEvery?: number): Promise<ProofOfLearning> {
    const task = await chain.task(taskId)
    if (task == null) throw new Error(`task ${taskId} does not exist`)
    const runDir = this.runDir(taskId)
    if (!existsSync(join(runDir, 'proof.json'))) throw new Error(`no run of task ${taskId} in ${runDir}`)
    const proof = validateProof(JSON.parse(readFileSync(join(runDir, 'proof.json'), 'utf8')))
    if ('0x' + proof.proofRoot.replace(/^0x/, '') !== task.proofRoot) throw new Error(`the local proof of task ${taskId} is not the committed one`)
    const m = rootEvery ?? await chain.rootEvery(taskId)
    if (rootEveryOfProof(proof) !== m) throw new Error(`the local proof of task ${taskId} has a root every ${rootEveryOfProof(proof)} steps, the chain says ${m}`)
    return proof
  }

  /** Our roots inside segment j, from a re-run with the faults our training had (throws SegmentContradicted when they contradict our proof). */
  async segmentInside (chain: ChainClient, taskId: number, j: number): Promise<Uint8Array[]> {
    const task = await chain.task(taskId)
    if (task == null) throw new Error(`task ${taskId} does not exist`)
    const proof = await this.proofOf(chain, taskId)
    try {
      return await this.segments.inside(taskId, this.runDir(taskId), proof, j, tapeFaults(this.h.faults))
    } catch (err) {
      this.h.log.error({ taskId, j, err: (err as Error).message }, 'cannot defend the segment')
      throw err
    }
  }

  /**
   * The run's tape of on-chain step `step` of task `taskId`, taped once (a
   * child process) for every dispute of that step, with the faults the
   * training had, so it is the tape the proof was built from. `announced`:
   * for a step announced before its dispute, taped only if the lane is idle.
   */
  async tapeFor (chain: ChainClient, taskId: number, step: number, announced = false): Promise<{ tape: TapeFile, proof: ProofOfLearning }> {
    const key = `${taskId}/${step}`
    let taped = this.tapes.get(key)
    if (taped !== undefined && !announced) this.lane.release(key)
    if (taped === undefined) {
      const signal = announced ? this.lane.announce(key) : undefined
      if (announced && signal === undefined) throw new Error('busy taping: an announced step waits for its dispute')
      const made = (async () => {
        const task = await chain.task(taskId)
        if (task == null) throw new Error(`task ${taskId} does not exist`)
        const runDir = this.runDir(taskId)
        const proof = await this.proofOf(chain, taskId)
        const dir = join(this.h.dataDir, 'disputes'); mkdirSync(dir, { recursive: true })
        const out = join(dir, `task-${taskId}-step-${step + 1}-defender.cbor`)
        const faults = tapeFaults(this.h.faults)
        const tape = await this.lane.run(key, async () => await this.h.tapeInChild(runDir, step + 1, out, { faults }, signal))
        return { tape, proof }
      })()
      this.tapes.set(key, made)
      made.catch(() => { this.tapes.delete(key); this.lane.release(key) })
      taped = made
    }
    return await taped
  }

  /**
   * A challenger about to open a dispute at `step` asks us to tape it while
   * it tapes its own: the dispute then runs as soon as it is opened. Only
   * for a registered peer, a task we solved and a step of its proof; at most
   * one tape per step, as for a dispute, and only while no other tape runs.
   * With a root every m > 1 steps, `step` names a segment, which we re-run
   * (the step to tape is known only at the opening), under the same rule.
   */
  async prepare (taskId: number, step: number, from: string): Promise<DisputeResponse> {
    const chain = await this.h.chain()
    const task = await chain.task(taskId)
    if (task == null || task.solver !== chain.accountId || task.phase !== 'Verifying') return { err: 'not a step of a proof of ours under verification' }
    const m = await chain.rootEvery(taskId)
    // what a dispute may name: the steps (m = 1) or segments (m > 1), and one more on a diverged proof (its last step)
    if (step >= (m > 1 ? segmentCount(task.stepCount, m) : task.stepCount) + (task.divergence != null ? 1 : 0)) return { err: 'not a step of a proof of ours under verification' }
    if (await chain.peerOwner(from) == null) return { err: 'not a registered peer' }
    // a diverged m > 1 proof's last step is taped as at m = 1
    const shape = disputeShapeOf(task, m, step)
    // announcements cost their sender nothing: one taped at a time, and none while a dispute's tape waits
    if (shape.kind === 'segment') {
      if (!this.lane.idle && !this.segments.has(taskId, step)) return { err: 'busy taping another step' }
      this.segmentInside(chain, taskId, step).catch(() => {})
      this.h.log.info({ taskId, segment: step, from }, 'a segment dispute is announced: re-running the segment now')
      return { end: 'preparing' }
    }
    if (!this.lane.idle && !this.tapes.has(`${taskId}/${shape.step}`)) return { err: 'busy taping another step' }
    this.tapeFor(chain, taskId, shape.step, true).catch(err => this.h.log.warn({ taskId, step: shape.step, err: (err as Error).message }, 'could not tape the announced step'))
    this.h.log.info({ taskId, step: shape.step, from }, 'a dispute is announced: taping the step now')
    return { end: 'preparing' }
  }
}
