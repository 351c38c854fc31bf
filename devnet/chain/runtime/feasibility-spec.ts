import type { ErrorSpec } from './spec-types.js'

// Task feasibility's part of the Arbitration pallet interface
// (devnet/chain/runtime/feasibility.ts implements it; spec.ts splices the
// errors into the pallet).

const err = (name: string, docs: string): ErrorSpec => ({ name, docs })
export const FEASIBILITY_ERRORS: ErrorSpec[] = [
  err('TaskTooLarge', 'submit_task: one training job of the program needs more memory than max_task_memory (protocols/scheduling/estimate.ts jobMemory).'),
  err('SolveTimeoutTooShort', 'submit_task: solve_timeout is shorter than twice the blocks the program\'s training takes at the network\'s reference speed (reference_flops_per_block).')
]

/** Appended after WINDOW_ERRORS: error indices never move. */
export const FORCED_ROOM_ERRORS: ErrorSpec[] = [
  err('NoForcedErrorRoom', 'submit_task: forced errors are on (forced_error_ppm > 0) but the program has no committed state a forced error may mark: every multiple of the root spacing m below `steps` is a checkpoint (protocols/dispute/forced-error.ts forcedErrorRoom; e.g. checkpoint_every = m).')
]

/** Appended at the end of the pallet's errors (after the segment errors): error indices never move. */
export const WINDOW_ERRORS: ErrorSpec[] = [
  err('ChallengeWindowTooShort', 'submit_task: challenge_window is shorter than what a drawn verifier needs at the network\'s reference speed (reference_flops_per_block): twice its replay of its required sample (requiredSampleCount(verifier_count) units, each from the checkpoint before it: at most checkpoint_every + m steps, at most the whole run together) and one more such replay for a reject\'s evidence, plus 8 blocks for the draw, the transactions and the engine processes (protocols/scheduling/estimate.ts minChallengeBlocks).')
]

/** Appended after the window error: error indices never move. */
export const PRICE_ERRORS: ErrorSpec[] = [
  err('SolverRewardBelowFloor', 'submit_task: solver_reward is below the price of the program\'s training: its blocks at the network\'s reference speed (6 x forward multiply-adds x batch x steps over reference_flops_per_block, rounded up) times reference_block_price (protocols/scheduling/price.ts rewardFloor). A selected solver trains the task or pays the release fee: the chain does not ask it to work for less.'),
  err('VerifierRewardBelowFloor', 'submit_task: verifier_reward is below the price of one drawn verifier\'s replay: the blocks of its required sample and a reject\'s evidence at the network\'s reference speed (protocols/scheduling/estimate.ts challengeReplaySteps, rounded up) times reference_block_price (protocols/scheduling/price.ts rewardFloor). A drawn verifier replays or pays the silence penalty: the chain does not ask it to work for less.')
]
