import type { TaskProgram } from '../../protocols/program/program.js'
import type { TopologyInfo } from '../../protocols/program/topology.js'
import { rewardFloor, type PriceBounds, type RewardFloor } from '../../protocols/scheduling/price.js'

// The rewards a submission offers, against the chain's floor (reference_block_price
// times the work the task asks of its solver and of each verifier): a reward
// asked below it is refused here with the numbers, before any work, as the
// chain would refuse it; a default below it is raised to it, as the default
// windows are raised to the chain's minimums.

const UNIT = 10n ** 12n

/** Planck as units, every significant decimal kept (a floor of 0.08 is not "0"). */
export function units (planck: bigint): string {
  const frac = (planck % UNIT).toString().padStart(12, '0').replace(/0+$/, '')
  return `${planck / UNIT}${frac === '' ? '' : '.' + frac}`
}

export interface OfferedRewards { solverReward: bigint, verifierReward: bigint, floor: RewardFloor }

export function offeredRewards (
  program: TaskProgram & { info: TopologyInfo },
  bounds: PriceBounds,
  verifierCount: number,
  asked: { solverReward?: string | null, verifierReward?: string | null },
  defaults: { solverReward: bigint, verifierReward: bigint }
): OfferedRewards {
  const floor = rewardFloor(program, bounds, verifierCount)
  const price = `${units(bounds.referenceBlockPrice)} units a block of reference work`
  const r = asked.solverReward != null ? BigInt(asked.solverReward) : undefined
  if (r !== undefined && r < floor.minSolverReward) {
    throw new Error(`task refused: --solver-reward ${units(r)} is below the ${units(floor.minSolverReward)} units this chain requires for its training (${floor.trainingBlocks} blocks at ${price}, reference_block_price)`)
  }
  const v = asked.verifierReward != null ? BigInt(asked.verifierReward) : undefined
  if (v !== undefined && v < floor.minVerifierReward) {
    throw new Error(`task refused: --verifier-reward ${units(v)} is below the ${units(floor.minVerifierReward)} units this chain requires for a verifier's replay with ${verifierCount} verifier(s) (${floor.replayBlocks} blocks of its sample and a reject's evidence at ${price}, reference_block_price)`)
  }
  const atLeast = (a: bigint, b: bigint): bigint => a > b ? a : b
  return {
    solverReward: r ?? atLeast(defaults.solverReward, floor.minSolverReward),
    verifierReward: v ?? atLeast(defaults.verifierReward, floor.minVerifierReward),
    floor
  }
}
