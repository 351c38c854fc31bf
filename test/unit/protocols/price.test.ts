import { describe, expect, it } from 'vitest'
import { DEV_PRICE_PER_SECOND } from '../../../devnet/chain/dev-spec.js'
import { DEFAULT_ECONOMICS } from '../../../node/roles/economics.js'
import { newProgram, validateProgram } from '../../../protocols/program/program.js'
import { ASCII_VOCAB } from '../../../protocols/program/gpt.js'
import { challengeReplaySteps, programSize, REFERENCE_FLOPS, stepFlops } from '../../../protocols/scheduling/estimate.js'
import { rewardFloor, rewardFloorError } from '../../../protocols/scheduling/price.js'
import { TEST_DATASET } from '../../helpers/program.js'

// The reward floor: the price of the work a task asks of its solver (its
// training) and of each drawn verifier (its replays), at the network's
// reference speed and reference_block_price.

const DEV = { referenceFlopsPerBlock: REFERENCE_FLOPS, referenceBlockPrice: DEV_PRICE_PER_SECOND }
const mlp = (o: Record<string, unknown> = {}): ReturnType<typeof validateProgram> =>
  validateProgram(newProgram({ model: 'mlp', dataset: { ...TEST_DATASET, trainSize: 60000 }, steps: 1000, batchSize: 64, optimizer: 'adam', ...o }))

describe('rewardFloor', () => {
  it('prices the training\'s blocks and one verifier\'s replay blocks, each rounded up', () => {
    const p = mlp({ checkpointEvery: 10, rootEvery: 5 })
    const f = rewardFloor(p, { referenceFlopsPerBlock: 1e8, referenceBlockPrice: 7n }, 2)
    const flops = stepFlops(programSize(p))
    expect(f.trainingBlocks).toBe(Math.ceil(flops * 1000 / 1e8))
    expect(f.replayBlocks).toBe(Math.ceil(flops * challengeReplaySteps(1000, { checkpointEvery: 10, rootEvery: 5, verifierCount: 2 }) / 1e8))
    expect(f.minSolverReward).toBe(7n * BigInt(f.trainingBlocks))
    expect(f.minVerifierReward).toBe(7n * BigInt(f.replayBlocks))
    // more verifiers each replay a smaller sample
    expect(rewardFloor(p, DEV, 10).minVerifierReward).toBeLessThan(rewardFloor(p, DEV, 2).minVerifierReward)
  })

  it('a zero price sets no floor; otherwise any work costs something', () => {
    const tiny = mlp({ steps: 4, checkpointEvery: 2, rootEvery: 1 })
    expect(rewardFloor(tiny, { ...DEV, referenceBlockPrice: 0n }, 2)).toMatchObject({ minSolverReward: 0n, minVerifierReward: 0n })
    const f = rewardFloor(tiny, DEV, 2)
    expect(f.minSolverReward).toBe(DEV_PRICE_PER_SECOND)
    expect(rewardFloorError(f, { solverReward: 0n, verifierReward: 0n })).toBe('SolverRewardBelowFloor')
    expect(rewardFloorError(f, { solverReward: f.minSolverReward, verifierReward: f.minVerifierReward - 1n })).toBe('VerifierRewardBelowFloor')
    expect(rewardFloorError(f, { solverReward: f.minSolverReward, verifierReward: f.minVerifierReward })).toBeUndefined()
  })

  it('the default rewards clear the dev chain\'s floor for the devnet\'s tasks at least fivefold', () => {
    const gpt = validateProgram(newProgram({
      model: 'gpt', steps: 150, batchSize: 16, optimizer: 'adam', checkpointEvery: 50,
      dataset: { kind: 'text', name: 'fortunes-min', sha256: 'cd'.repeat(32), trainSize: 1383, testSize: 153, rowSize: 32 * 96, classes: 32 * 96, text: { vocab: ASCII_VOCAB, context: 32 } }
    }))
    for (const p of [mlp(), mlp({ checkpointEvery: 100, rootEvery: 1 }), gpt]) {
      const f = rewardFloor(p, DEV, DEFAULT_ECONOMICS.verifierCount)
      expect(f.minSolverReward * 5n).toBeLessThanOrEqual(DEFAULT_ECONOMICS.solverReward)
      expect(f.minVerifierReward * 5n).toBeLessThanOrEqual(DEFAULT_ECONOMICS.verifierReward)
    }
  })
})
