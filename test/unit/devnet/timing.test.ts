import { describe, expect, it } from 'vitest'
import { challengeWindowFor, MIN_WINDOW_BLOCKS } from '../../../devnet/timing.js'

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

  it('refuses a speed it cannot use', () => {
    expect(() => challengeWindowFor({ steps: 10, batchSize: 4, samplesPerSec: 0, blockTimeMs: 500 })).toThrow(/cannot size/)
  })
})
