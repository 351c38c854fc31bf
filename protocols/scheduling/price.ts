import { rootEveryOf, type TaskProgram } from '../program/program.js'
import type { TopologyInfo } from '../program/topology.js'
import { challengeReplaySteps, programSize, stepFlops } from './estimate.js'

// The least a task may pay the parties the chain picks for it. A selected
// solver either trains the task or pays the release fee to hand it back, and a
// drawn verifier replays its sample or pays the silence penalty: neither may
// refuse for free, so a task that pays nothing would get its work done for the
// capacity rent. The chain therefore prices the work it already measures for
// its time bounds (the program's training, a verifier's replay, at the
// network's reference speed) at the network's reference_block_price, and
// refuses rewards below that: the rule the chain applies at submit_task and a
// submitter applies first, to say the floor before doing any work.

export interface PriceBounds {
  referenceFlopsPerBlock: bigint | number
  /** planck per block of reference work (0: no floor) */
  referenceBlockPrice: bigint
}

export interface RewardFloor {
  /** blocks of reference work of the program's training (once: the solve timeout's margin is not paid for) */
  trainingBlocks: number
  /** blocks of reference work of one drawn verifier's replays: its sample and a reject's evidence (challengeReplaySteps) */
  replayBlocks: number
  /** the least solver_reward: the price of trainingBlocks */
  minSolverReward: bigint
  /** the least verifier_reward: the price of replayBlocks */
  minVerifierReward: bigint
}

export type RewardFloorError = 'SolverRewardBelowFloor' | 'VerifierRewardBelowFloor'

/** The least rewards of a validated program with `verifierCount` verifiers on a network of these bounds. */
export function rewardFloor (program: TaskProgram & { info: TopologyInfo }, bounds: PriceBounds, verifierCount: number): RewardFloor {
  const size = programSize(program)
  const flopsPerBlock = Number(bounds.referenceFlopsPerBlock)
  const shape = { checkpointEvery: program.checkpointEvery, rootEvery: rootEveryOf(program), verifierCount }
  const trainingBlocks = Math.ceil(stepFlops(size) * size.steps / flopsPerBlock)
  const replayBlocks = Math.ceil(stepFlops(size) * challengeReplaySteps(size.steps, shape) / flopsPerBlock)
  return {
    trainingBlocks,
    replayBlocks,
    minSolverReward: bounds.referenceBlockPrice * BigInt(trainingBlocks),
    minVerifierReward: bounds.referenceBlockPrice * BigInt(replayBlocks)
  }
}

/** The pallet error that refuses these rewards, if any (the solver's first). */
export function rewardFloorError (floor: RewardFloor, rewards: { solverReward: bigint, verifierReward: bigint }): RewardFloorError | undefined {
  if (rewards.solverReward < floor.minSolverReward) return 'SolverRewardBelowFloor'
  if (rewards.verifierReward < floor.minVerifierReward) return 'VerifierRewardBelowFloor'
  return undefined
}
