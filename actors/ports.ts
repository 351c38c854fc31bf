// What role actors may ask of their peer. The machines decide *what* to do and
// *when*; ports do the I/O (chain extrinsics, training, shard transfer,
// gossip). node/roles/ implements them over the real chain client, training
// engine and shard exchange.

export interface TaskSpec {
  /** the task program (protocols/program), JSON-able */
  program: unknown
  /** economics overrides (amounts in planck as decimal strings) */
  economics?: {
    solverReward?: string
    verifierReward?: string
    verifierCount?: number
    challengeWindow?: number
    solveTimeout?: number
  }
}

export interface SubmitResult { taskId: number, programHash: string }

/** A solver's trained and published run: its roots and the CIDs of its artefacts, what commitProof commits (the engine's own training result is another thing). */
export interface PublishedRun {
  proofRoot: string
  finalStateRoot: string
  steps: number
  /** CIDs of the published run (index, proof, model, checkpoints) */
  runIndex?: string
  proofCid?: string
  modelCid?: string
  checkpoints?: Array<{ step: number, cid: string }>
  /** the run diverged (a NaN): `steps` states were completed, the first NaN is at `entry`, `flat` of step `steps`'s tape (commit_diverged) */
  divergence?: { entry: number, flat: number }
}

export interface VerifyResult {
  accept: boolean
  checkedSteps: number[]
  firstBadStep?: number
  /** the Truebit forced errors in this verifier's own sample (marked leaves: protocols/dispute/forced-leaf.ts), in step order, firstBadStep the first: each disputed for its part of the jackpot */
  forcedSteps?: number[]
  /** a mismatch after the forced errors (the replay went on past them): disputed too, it is a real cheat */
  laterBadStep?: number
  /** a checkpoint the replay needed could not be fetched or is not the committed state (data availability); `more`: the other such checkpoints its sample needs, challenged with it */
  unavailable?: { step: number, reason: string, more?: number[] }
  /** the task's custom dataset could not be obtained, or its rows do not make dataset_root: a reject backed by a dataset challenge (the submitter serves the rows on chain) */
  datasetUnavailable?: { reason: string }
  /** stateRoots[0] is not the program's initialisation: the verifier already claimed it on chain (challenge_initial_state), with this ruling */
  initialState?: { solverWrong: boolean, reason: string }
}

/** disputeId -1: the ruling of an initial-state claim (challenge_initial_state), which has no dispute */
/** `served`: an availability challenge the solver answered by serving the checkpoint on chain, or a dataset challenge the submitter answered with the rows (the challenger now has them and must vote again) */
export interface DisputeResult { disputeId: number, winner: 'challenger' | 'defender', reason?: string, served?: boolean }

export interface RolePorts {
  peerId: string
  // submitter
  submitTask: (spec: TaskSpec) => Promise<SubmitResult>
  collectResult: (taskId: number) => Promise<CollectedResult>
  // solver
  /** `signal`: aborted when the actor no longer wants the result (the task went to another solver) */
  train: (taskId: number, signal?: AbortSignal) => Promise<PublishedRun>
  commitProof: (taskId: number, result: PublishedRun) => Promise<void>
  // verifier
  /** `sampleCount`: replay more steps than the verifier's own sample (a whistleblower's re-check: all of them) */
  verify: (taskId: number, sampleCount?: number) => Promise<VerifyResult>
  submitVerdict: (taskId: number, verdict: VerifyResult) => Promise<void>
  // disputes: challenger opens and plays; defender plays the same game
  challenge: (taskId: number, against: 'solver' | 'verifier', step: number | undefined) => Promise<DisputeResult>
  defend: (taskId: number, disputeId: number) => Promise<DisputeResult>
  /** data-availability challenges of the solver's checkpoint at `step` and of each in `more`, at once (docs/disputes.md); absent → not supported by this peer */
  challengeAvailability?: (taskId: number, step: number, more?: number[]) => Promise<DisputeResult>
  /** a dataset challenge of the task's submitter (docs/economics.md "A withheld dataset"); `served`: it served the rows on chain; absent → not supported by this peer */
  challengeDataset?: (taskId: number) => Promise<DisputeResult>
  // whistleblower
  recheckVerdict: (taskId: number, verifier: string) => Promise<VerifyResult>
}

/** Events the node feeds into the supervisor (forwarded to role actors). */
export type DomainEvent =
  | { type: 'cmd.submit', spec: TaskSpec }
  | { type: 'chain.solverSelected', taskId: number, forMe: boolean }
  | { type: 'chain.proofCommitted', taskId: number, byMe: boolean }
  /** the chain drew verifiers for a task; forMe: this peer's account is one of them */
  | { type: 'chain.verifiersAssigned', taskId: number, forMe: boolean }
  /** an assigned verifier's challenge was served: its reject is withdrawn and it must vote again (forMe: this peer's) */
  | { type: 'chain.verdictReopened', taskId: number, forMe: boolean }
  | { type: 'chain.verdict', taskId: number, verifier: string, accept: boolean, byMe: boolean }
  | { type: 'chain.disputeOpened', taskId: number, disputeId: number, againstMe: boolean, byMe: boolean }
  | { type: 'chain.disputeResolved', taskId: number, disputeId: number, winner: 'challenger' | 'defender' }
  | { type: 'chain.taskSettled', taskId: number }
  | { type: 'chain.solverReplaced', taskId: number, wasMe: boolean }

/** A text model's report: held-out loss (nats per token), the corpus's unigram baseline, a generated sample. */
export interface TextResult { validationLoss: number, unigramBaseline: number, sample: string }
/** What the submitter learns of the trained model it collected. */
export interface CollectedResult { accuracy?: number, modelCid?: string, text?: TextResult }
