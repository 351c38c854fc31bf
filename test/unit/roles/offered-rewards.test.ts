import { describe, expect, it } from 'vitest'
import { UNIT } from '../../../devnet/chain/dev-spec.js'
import { offeredRewards, units } from '../../../node/roles/offered-rewards.js'
import { validateProgram } from '../../../protocols/program/program.js'
import { REFERENCE_FLOPS } from '../../../protocols/scheduling/estimate.js'
import { rewardFloor } from '../../../protocols/scheduling/price.js'
import { taskProgram } from '../../helpers/program.js'

// The submitter's pre-check of the chain's reward floor: an asked reward below
// it is refused with the floor; a default below it is raised to it.

const P = validateProgram(taskProgram({ steps: 100, checkpointEvery: 10 }).program)
const BOUNDS = { referenceFlopsPerBlock: REFERENCE_FLOPS, referenceBlockPrice: UNIT / 50n }
const FLOOR = rewardFloor(P, BOUNDS, 2)
const DEFAULTS = { solverReward: 100n * UNIT, verifierReward: 10n * UNIT }

describe('offeredRewards', () => {
  it('refuses an asked reward below the floor, saying the floor and naming the reward', () => {
    expect(() => offeredRewards(P, BOUNDS, 2, { solverReward: '0' }, DEFAULTS)).toThrow(`--solver-reward 0 is below the ${units(FLOOR.minSolverReward)} units`)
    expect(() => offeredRewards(P, BOUNDS, 2, { verifierReward: String(FLOOR.minVerifierReward - 1n) }, DEFAULTS)).toThrow(`is below the ${units(FLOOR.minVerifierReward)} units`)
    expect(units(FLOOR.minSolverReward)).toBe('0.08')
  })

  it('takes what is asked at the floor, and raises only the defaults that fall below it', () => {
    const atFloor = { solverReward: String(FLOOR.minSolverReward), verifierReward: String(FLOOR.minVerifierReward) }
    expect(offeredRewards(P, BOUNDS, 2, atFloor, DEFAULTS)).toMatchObject({ solverReward: FLOOR.minSolverReward, verifierReward: FLOOR.minVerifierReward })
    expect(offeredRewards(P, BOUNDS, 2, {}, DEFAULTS)).toMatchObject(DEFAULTS)
    const raised = offeredRewards(P, BOUNDS, 2, {}, { solverReward: 0n, verifierReward: 0n })
    expect(raised).toMatchObject({ solverReward: FLOOR.minSolverReward, verifierReward: FLOOR.minVerifierReward })
  })
})
