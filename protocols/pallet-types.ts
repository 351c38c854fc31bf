import type { Divergence } from './dispute/nan.js'

// The Arbitration pallet's storage types, as plain values: what the chain
// runtime (devnet/chain/runtime) stores and what the node's chain client
// (node/chain/client.ts) decodes. Fields are camelCase, u64/u128 are bigint,
// accounts and hashes 0x-hex. The SCALE layout of each is in the runtime's
// spec files, under the same name.

/** Economic and timing parameters set in genesis (SCALE name ArbitrationParams). */
export interface Params {
  minStake: bigint
  disputeBond: bigint
  disputeClock: number
  slashPpm: number
  winnerSharePpm: number
  missedDeadlineSlashPpm: number
  jackpot: bigint
  forcedErrorPpm: number
  maxCheckpoints: number
  /** rent per block of each unit of verifier stake a task holds bound, in billionths (docs/economics.md, "Capacity griefing") */
  capacityRentPpb: number
  /** bytes one training job of a task's program may need at most (protocols/scheduling/estimate.ts jobMemory) */
  maxTaskMemory: bigint
  /** FLOP a conforming solver trains per block: a task's solve_timeout covers its training at this speed twice over */
  referenceFlopsPerBlock: bigint
  /** the largest state-root spacing m a task's program may name (docs/disputes.md "Segments"): 1 refuses every segmented task */
  maxRootEvery: number
  /** planck per block of reference work: a task's solver_reward is at least its training's blocks at this price, its verifier_reward one verifier's replay's (protocols/scheduling/price.ts; 0: no floor) */
  referenceBlockPrice: bigint
}

export interface NodeInfo { peerId: string, roles: number, stake: bigint, activeTasks: number, registeredAt: number }

export interface Verdict { verifier: string, accept: boolean, checkedSteps: number[], void: boolean }

/** Expired: Unassigned for UnassignedTimeout blocks (no solver, or too little verifier stake to answer for it), the escrow refunded. Unverified: the challenge window (and its extensions) ended without a quorum of standing verdicts: nobody is paid for the proof. Faulted: its step of on_initialize threw, it was quarantined (escrow back, nobody paid or slashed by the hook) */
export type TaskPhase = 'Unassigned' | 'Solving' | 'Verifying' | 'Settled' | 'Failed' | 'Unverified' | 'Expired' | 'Faulted'

/** What a submitter gives (submit_task, without the program bytes). */
export interface SubmitTaskArgs {
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

/** A task: the submitted parameters, then what the chain tracks. */
export interface TaskInfo extends SubmitTaskArgs {
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
  /** the first Truebit forced-error step the solver proved with its VRF after a ruling (reveal_forced_error), else null; the draw itself is private (its other revealed steps: the ForcedError rulings) */
  revealedForcedError: number | null
  /** SolverProof disputes adjudicated for their challenger; the solver's penalty waits for a reveal until revealDeadline */
  rulings: ProofRuling[]
  solverFailed: boolean
  verdicts: Verdict[]
  openDisputes: number
  createdAt: number
  /** times the challenge window was extended for lack of a verdict quorum */
  extensions: number
  /** a diverged proof's divergence point in its last step, `stepCount` (commit_diverged), else null */
  divergence: Divergence | null
}

/** A verified task waiting for its solver's forced-error draw before it is paid (DrawRequests; reveal_draw by `deadline`). */
export interface DrawRequest {
  deadline: number
  revealed: boolean
  /** once revealed: the first step the draw ordered (the solver owes the jackpot), or null */
  forcedStep: number | null
  /** once revealed: every step the draw ordered, ascending (protocols/dispute/forced-error.ts forcedErrorsFromOutputs); the jackpot is split across them */
  forcedSteps: number[]
}

export type RulingOutcome = 'AwaitingReveal' | 'ForcedError' | 'SolverPenalized'
/** The kind of claim a dispute was adjudicated on (SCALE name ClaimKind). */
export type RulingClaimKind = 'Skeleton' | 'Input' | 'State' | 'Element' | 'Data' | 'Lie' | 'BadOpen' | 'Init' | 'Nan' | 'Convert'

/** A SolverProof dispute adjudicated for its challenger; the solver's penalty waits for a forced-error reveal. */
export interface ProofRuling {
  disputeId: bigint
  challenger: string
  step: number
  revealDeadline: number
  outcome: RulingOutcome
  /** what the ruling was decided on; only a State ruling can be a forced error */
  claimKind: RulingClaimKind
  /** State rulings: the post-state root the defender's signed @state entry hashes to (0x hex) */
  honestPost: string | null
}

export type DisputeKind = 'SolverProof' | 'VerifierVerdict'
/** SCALE name Party */
export type PartyName = 'Challenger' | 'Defender'
/** A move forced on chain: `to` must post message `seq` by block `due`. */
export interface Force { to: PartyName, seq: number, at: number, due: number }

export interface DisputeInfo {
  taskId: bigint
  challenger: string
  defender: string
  kind: DisputeKind
  disputedStep: number
  bond: bigint
  status: 'Open' | 'ChallengerWon' | 'DefenderWon'
  openedAt: number
  /** after it, with no force pending, the challenger loses (the burden of proof is its own) */
  deadline: number
  /** the lowest seq a force may post: one past the last message on chain */
  nextSeq: number
  /** sha256 of the last message on chain (zero: none) */
  lastHash: string
  force: Force | null
  /** messages posted on chain (forced moves and answers) */
  moves: number
}

/** Active: its verdict counts; Lapsed: silent or a bare reject (penalized, replaced); Released: evidence but no standing verdict (replaced) */
export type AssignmentStatus = 'Active' | 'Lapsed' | 'Released'

/** A verifier the chain drew for a task (docs/protocol.md, "Verifier assignment"). */
export interface VerifierAssignment {
  verifier: string
  round: number
  /** the block whose hash drew this verifier and seeds its sample */
  seedBlock: number
  /** last block for its verdict and for the evidence of a reject */
  deadline: number
  /** it opened a dispute, availability challenge or initial-state claim of its own on the task while assigned */
  backed: boolean
  status: AssignmentStatus
}

/** Every assignment of a task, by round. */
export interface TaskAssignments {
  round: number
  /** the block in whose on_initialize the next draw happens; 0: none pending */
  drawAt: number
  /** that draw's randomness block */
  seedBlock: number
  verifiers: VerifierAssignment[]
}

/** A held request is open until the solver answers it in full or its deadline passes. */
export type HeldRequestStatus = 'Open' | 'Answered' | 'TimedOut'

/**
 * What a request against the solver that it must answer by a deadline holds
 * (availability challenges, chunk-sample requests): a deposit held until it
 * is answered or times out.
 */
export interface HeldRequestInfo {
  taskId: bigint
  solver: string
  checkpointStep: number
  deposit: bigint
  /** block that included the request: its hash seeds what is sampled */
  openedAt: number
  /** last block in which the solver may answer */
  deadline: number
  samples: number
  status: HeldRequestStatus
}

export type AvailabilityStatus = HeldRequestStatus
/** A data-availability challenge (docs/disputes.md, "Withheld checkpoints"). */
export interface AvailabilityChallenge extends HeldRequestInfo {
  challenger: string
  responseHash: string
}

/** How far a challenged checkpoint is served on chain (docs/economics.md "Selective serving"): leaves served of total, the blocks of the parts, the challenge id their events name. */
export interface AvailabilityServe { served: number, total: number, headersHash: string, parts: number[], servedAs: number }

/** A dataset availability challenge (docs/economics.md "A withheld dataset"): the submitter serves the rows of the batches of `steps` (0-based) on chain; the data order and shapes from the program. */
export interface DatasetChallenge {
  taskId: bigint
  challenger: string
  submitter: string
  deposit: bigint
  openedAt: number
  /** last block in which the submitter may serve */
  deadline: number
  steps: number[]
  /** rows on chain so far, of `total` (steps × batchSize) */
  served: number
  total: number
  seed: number
  trainSize: number
  batchSize: number
  rowSize: number
  classes: number
  status: HeldRequestStatus
}

export type ChunkRequestStatus = HeldRequestStatus
/** A chunk-sample request of an erasure-coded checkpoint (docs/protocol.md §5, "Chunk sampling"); samples: chunks drawn (0 until the first part is posted). */
export interface ChunkRequest extends HeldRequestInfo {
  requester: string
  /** bit k set: sample k is on chain */
  posted: bigint
}
