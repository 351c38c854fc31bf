// Plain views of the Arbitration pallet's storage, as the client returns them
// (camelCase fields; u64/u128 as bigint; accounts and hashes as 0x-hex).

export { ROLE_SUBMITTER, ROLE_SOLVER, ROLE_VERIFIER, ROLE_WHISTLEBLOWER } from '../../protocols/roles.js'

export type DisputeKind = 'SolverProof' | 'VerifierVerdict'
export type TaskPhase = 'Unassigned' | 'Solving' | 'Verifying' | 'Settled' | 'Failed' | 'Unverified'

export interface ArbitrationParams {
  minStake: bigint
  disputeBond: bigint
  disputeClock: number
  slashPpm: number
  winnerSharePpm: number
  missedDeadlineSlashPpm: number
  jackpot: bigint
  forcedErrorPpm: number
  maxCheckpoints: number
}

export interface NodeView { peerId: string, roles: number, stake: bigint, activeTasks: number, registeredAt: number }

export interface TaskParams {
  programHash: string
  datasetRoot: string
  skeletonRoot: string
  steps: number
  checkpointEvery: number
  escrow: bigint
  solverReward: bigint
  verifierReward: bigint
  verifierCount: number
  /** blocks after commitProof during which verdicts and disputes are accepted */
  challengeWindow: number
  /** blocks the selected solver has to commit */
  solveTimeout: number
}

export interface TaskView extends TaskParams {
  submitter: string
  phase: TaskPhase
  solver: string | null
  deadline: number
  excluded: string[]
  proofRoot: string
  finalStateRoot: string
  stepCount: number
  /** hex of the UTF-8 manifest CIDs */
  checkpoints: string[]
  committedAt: number
  challengeEnd: number
  selectionSeed: string
  /** the Truebit forced-error step the solver proved with its VRF after a ruling (the draw itself is private: node/dispute/forced-error.ts) */
  revealedForcedError: number | null
  /** SolverProof disputes adjudicated for their challenger; the solver's penalty waits for a reveal until revealDeadline */
  rulings: ProofRulingView[]
  solverFailed: boolean
  verdicts: Array<{ verifier: string, accept: boolean, checkedSteps: number[], void: boolean }>
  openDisputes: number
  createdAt: number
  /** a diverged proof's divergence point in its last step, stepCount (commit_diverged), else null */
  divergence: { entry: number, flat: number } | null
}

export interface ProofRulingView {
  disputeId: bigint
  challenger: string
  step: number
  revealDeadline: number
  outcome: 'AwaitingReveal' | 'ForcedError' | 'SolverPenalized'
  /** the claim the dispute was adjudicated on; only a State ruling can be a forced error */
  claimKind: 'Skeleton' | 'Input' | 'State' | 'Element' | 'Data' | 'Lie' | 'BadOpen' | 'Init' | 'Nan'
  /** State rulings: the post-state root the defender's signed @state entry hashes to (0x hex) */
  honestPost: string | null
}

export interface DisputeView {
  taskId: bigint
  challenger: string
  defender: string
  kind: DisputeKind
  disputedStep: number
  bond: bigint
  status: 'Open' | 'ChallengerWon' | 'DefenderWon'
  openedAt: number
  /** past it with no force pending, the challenger loses */
  deadline: number
  /** one past the last message on chain */
  nextSeq: number
  /** sha256 of the last message on chain (zero: none) */
  lastHash: string
  /** a forced move: `to` must post message `seq` by block `due` */
  force: { to: 'Challenger' | 'Defender', seq: number, at: number, due: number } | null
  /** messages posted on chain (forces and answers) */
  moves: number
}

/** A verifier the chain drew for a task (docs/protocol.md, "Verifier assignment"). */
export interface VerifierAssignmentView {
  verifier: string
  round: number
  /** the block whose hash drew it and seeds its sample */
  seedBlock: number
  /** last block for its verdict and for the evidence of a reject */
  deadline: number
  /** it opened a dispute, availability challenge or initial-state claim of its own while assigned */
  backed: boolean
  /** Active: its verdict counts; Lapsed: silent or a bare reject (penalized, replaced); Released: evidence but no standing verdict (replaced) */
  status: 'Active' | 'Lapsed' | 'Released'
}

/** Every assignment of a task, by round; drawAt ≠ 0: the next draw happens in that block. */
export interface TaskAssignmentsView { round: number, drawAt: number, seedBlock: number, verifiers: VerifierAssignmentView[] }

/** A data-availability challenge (docs/disputes.md, "Withheld checkpoints"). */
export interface AvailabilityView {
  taskId: bigint
  challenger: string
  solver: string
  checkpointStep: number
  deposit: bigint
  /** block that included the challenge: its hash seeds the sampled rows */
  openedAt: number
  /** last block in which the solver may answer */
  deadline: number
  samples: number
  status: 'Open' | 'Answered' | 'TimedOut'
  responseHash: string
}

/** A chunk-sample request of an erasure-coded checkpoint (docs/protocol.md §5, "Chunk sampling"). */
export interface ChunkRequestView {
  taskId: bigint
  requester: string
  solver: string
  checkpointStep: number
  deposit: bigint
  /** block that included the request: its hash seeds the drawn chunks */
  openedAt: number
  /** last block in which the solver may post */
  deadline: number
  /** chunks drawn (0 until the first part is posted) */
  samples: number
  /** bit k set: sample k is on chain */
  posted: bigint
  status: 'Open' | 'Answered' | 'TimedOut'
}
