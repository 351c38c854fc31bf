import type { CollectedResult, DisputeResult, RolePorts, SubmitResult, TaskSpec, PublishedRun, VerifyResult } from '../../actors/ports.js'
import { DEFAULT_ECONOMICS } from './economics.js'
import { WarmEngine } from '../engine/warm-engine.js'
import type { NodePortsInit, PortsShared } from './ports-part.js'
import { SubmitterPorts } from './submitter-ports.js'
import { SolverPorts } from './solver-ports.js'
import { VerifierPorts } from './verifier-ports.js'
import type { WorkProgress } from './work-progress.js'

// The peer-side implementation of what role actors ask for: chain extrinsics
// through the typed client, artefacts through the shard exchange, training,
// replay and evaluation in child processes. Everything fetched is checked
// against what the chain committed before it is used. Each role's ports live
// in their own file; this composes them over one shared state.

export type { EconomicsConfig } from './economics.js'
export type { NodePortsInit } from './ports-part.js'
export type { WorkProgress } from './work-progress.js'

export class NodePorts implements RolePorts {
  readonly peerId: string
  /** what this peer's engine is doing, by task (for status, the devnet and the dashboard) */
  readonly progress = new Map<number, WorkProgress>()
  private readonly submitter: SubmitterPorts
  private readonly solver: SolverPorts
  private readonly verifier: VerifierPorts

  constructor (private readonly init: NodePortsInit) {
    this.peerId = init.peer.peerId
    const log = init.peer.log.child({ component: 'ports' })
    const engine = new WarmEngine(log)
    init.peer.onStop(async () => { engine.stop() })
    const shared: PortsShared = {
      init,
      peerId: this.peerId,
      progress: this.progress,
      econ: { ...DEFAULT_ECONOMICS, ...init.economics },
      log,
      dataDir: init.peer.opts.dataDir,
      engine
    }
    this.submitter = new SubmitterPorts(shared)
    this.solver = new SolverPorts(shared)
    this.verifier = new VerifierPorts(shared)
  }

  // ---- submitter ----
  async submitTask (spec: TaskSpec): Promise<SubmitResult> { return await this.submitter.submitTask(spec) }
  async collectResult (taskId: number): Promise<CollectedResult> { return await this.submitter.collectResult(taskId) }

  // ---- solver ----
  async train (taskId: number, signal?: AbortSignal): Promise<PublishedRun> { return await this.solver.train(taskId, signal) }
  async commitProof (taskId: number, r: PublishedRun): Promise<void> { await this.solver.commitProof(taskId, r) }

  // ---- verifier / whistleblower ----
  async verify (taskId: number, sampleCount?: number): Promise<VerifyResult> { return await this.verifier.verify(taskId, sampleCount) }
  async submitVerdict (taskId: number, v: VerifyResult): Promise<void> { await this.verifier.submitVerdict(taskId, v) }
  async challengeAvailability (taskId: number, step: number, more?: number[]): Promise<DisputeResult> {
    return await this.verifier.challengeAvailability(taskId, step, more)
  }

  async challengeDataset (taskId: number): Promise<DisputeResult> {
    return await this.verifier.data.challengeDataset(taskId)
  }

  async recheckVerdict (taskId: number, _verifier: string): Promise<VerifyResult> {
    // a whistleblower samples its own steps (its account mixes into the seed);
    // by default it replays all of them: catching forced errors is what it is paid for.
    // Through this.verify: instrumented ports count a re-check with the verifications
    return await this.verify(taskId, this.init.recheckSteps ?? Number.MAX_SAFE_INTEGER)
  }

  // ---- disputes ----
  async challenge (taskId: number, against: 'solver' | 'verifier', step: number | undefined): Promise<DisputeResult> {
    if (this.init.disputes == null) throw new Error('the dispute protocol is not available on this peer yet')
    return await this.init.disputes.challenge(taskId, against, step)
  }

  async defend (taskId: number, disputeId: number): Promise<DisputeResult> {
    if (this.init.disputes == null) throw new Error('the dispute protocol is not available on this peer yet')
    return await this.init.disputes.defend(taskId, disputeId)
  }
}
