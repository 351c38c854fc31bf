import { describe, expect, it } from 'vitest'
import { challengeWindowFor, checkpointSpacingFor, MAX_SPACING_FACTOR, MIN_SOLVE_BLOCKS, MIN_WINDOW_BLOCKS, solveTimeoutFor } from '../../../devnet/timing.js'
import { CHECKPOINT_COST_STEPS, recommendedCheckpointEvery } from '../../../protocols/verification/sample.js'
import { chainMinWindow } from '../../../devnet/task.js'
import { DEFAULT_ECONOMICS } from '../../../node/roles/economics.js'
import { newProgram } from '../../../protocols/program/index.js'
import { REFERENCE_FLOPS } from '../../../protocols/scheduling/estimate.js'
import { TEST_DATASET, minWindow } from '../../helpers/program.js'

describe('the devnet\'s challenge window', () => {
  it('is twice a full replay plus the dispute, in blocks, and grows on a slower machine', () => {
    // the default task measured idle: 1000 steps of 64 at ~6000 samples/s
    const idle = challengeWindowFor({ steps: 1000, batchSize: 64, samplesPerSec: 6000, blockTimeMs: 500 })
    expect(idle.replaySeconds).toBeCloseTo(10.67, 1)
    expect(idle.windowSeconds).toBeCloseTo(2 * (10.67 + 5), 1)
    expect(idle.blocks).toBe(63)
    const busy = challengeWindowFor({ steps: 1000, batchSize: 64, samplesPerSec: 600, blockTimeMs: 500 })
    expect(busy.blocks).toBe(Math.ceil(2 * (1000 * 64 / 600 + 5) * 2))
    expect(challengeWindowFor({ steps: 10, batchSize: 4, samplesPerSec: 6000, blockTimeMs: 2000 }).blocks).toBe(MIN_WINDOW_BLOCKS)
  })

  it('is never below the chain\'s minimum for the task: a fast machine with slow blocks still posts a window a verifier can meet', () => {
    const prog = newProgram({ model: 'mlp', dataset: TEST_DATASET, steps: 1000, checkpointEvery: 40, batchSize: 64 })
    // at 50 ms blocks a drawn verifier's replay at the reference speed takes more blocks than the measured window
    const chainMin = chainMinWindow(prog, 50)
    expect(chainMin).toBe(minWindow(prog, DEFAULT_ECONOMICS.verifierCount, REFERENCE_FLOPS * 50 / 1000))
    const measured = challengeWindowFor({ steps: 1000, batchSize: 64, samplesPerSec: 1e6, blockTimeMs: 50 })
    expect(measured.blocks).toBeLessThan(chainMin)
    expect(challengeWindowFor({ steps: 1000, batchSize: 64, samplesPerSec: 1e6, blockTimeMs: 50, chainMin }).blocks).toBe(chainMin)
    // and where the measured window is longer, it stands
    const busy = challengeWindowFor({ steps: 1000, batchSize: 64, samplesPerSec: 600, blockTimeMs: 500, chainMin: 20 })
    expect(busy.blocks).toBe(Math.ceil(2 * (1000 * 64 / 600 + 5) * 2))
  })

  it('refuses a speed it cannot use', () => {
    expect(() => challengeWindowFor({ steps: 10, batchSize: 4, samplesPerSec: 0, blockTimeMs: 500 })).toThrow(/cannot size/)
  })
})

describe('the devnet\'s checkpoint spacing', () => {
  it('counts erasure coding in a checkpoint\'s cost: fewer checkpoints when coding is dear, more when steps are slow', () => {
    // idle: ~11 ms steps, ~150 ms to code the MLP's 1.2 MB state
    const idle = checkpointSpacingFor({ steps: 1000, batchSize: 64, samplesPerSec: 5800, codeMs: 150, stateBytes: 1_221_248 })
    expect(idle.stepMs).toBeCloseTo(11.03, 1)
    expect(idle.costSteps).toBeCloseTo(CHECKPOINT_COST_STEPS + 150 / 11.03, 1)
    expect(idle.optimum).toBe(recommendedCheckpointEvery(1000, 1_221_248, idle.costSteps))
    expect(idle.optimum).toBeGreaterThan(recommendedCheckpointEvery(1000))
    // capped: a verifier's replays cross the forced step at most about twice as often as at the default spacing
    expect(idle.every).toBe(MAX_SPACING_FACTOR * recommendedCheckpointEvery(1000))
    expect(
      checkpointSpacingFor({ steps: 1000, batchSize: 64, samplesPerSec: 5800, codeMs: 20, stateBytes: 0 }).every
    ).toBe(recommendedCheckpointEvery(1000, 0, CHECKPOINT_COST_STEPS + 20 / 11.03))
    // free coding: the old spacing
    expect(checkpointSpacingFor({ steps: 1000, batchSize: 64, samplesPerSec: 5800, codeMs: 0, stateBytes: 0 }).every).toBe(recommendedCheckpointEvery(1000))
    // the same coding on slower steps is fewer steps' worth: checkpoints closer together
    expect(checkpointSpacingFor({ steps: 1000, batchSize: 64, samplesPerSec: 1000, codeMs: 150, stateBytes: 0 }).optimum).toBeLessThan(idle.optimum)
    expect(() => checkpointSpacingFor({ steps: 1000, batchSize: 64, samplesPerSec: 0, codeMs: 150, stateBytes: 0 })).toThrow(/cannot space/)
  })
})

describe('the devnet\'s solve timeout', () => {
  it('is four times the measured training plus publishing, never under 600 blocks', () => {
    expect(solveTimeoutFor({ replaySeconds: 12, blockTimeMs: 500 })).toBe(MIN_SOLVE_BLOCKS)
    // a GPT at 11 samples/s: 150 steps of 16 take ~220 s
    expect(solveTimeoutFor({ replaySeconds: 220, blockTimeMs: 500 })).toBe(Math.ceil(4 * (220 + 30) * 2))
    expect(() => solveTimeoutFor({ replaySeconds: 10, blockTimeMs: 0 })).toThrow(/cannot size/)
  })
})
