import { describe, expect, it } from 'vitest'
import { CHALLENGE_MARGIN_BLOCKS, challengeReplaySteps, minChallengeBlocks, minSolveBlocks, stepFlops, type ProgramSize } from '../../../protocols/scheduling/estimate.js'
import { sampleSegments } from '../../../protocols/verification/sample.js'
import { requiredSampleCount } from '../../../protocols/verification/verdict.js'
import { sha256, toHex } from '../../../protocols/commit/merkle.js'

// The challenge window's bound: what a drawn verifier replays before its
// deadline (its sample, then a reject's evidence), at the reference speed.

const size = (o: Partial<ProgramSize> = {}): ProgramSize => ({
  params: 1000, optimizer: 'sgd', batchSize: 10, steps: 1000, rowSize: 4, classes: 2, trainSize: 100, datasetKind: 'synthetic', macs: 1000, activations: 10, ...o
})

/** Steps replayed for `sampled` (1-based units' last steps) from checkpoints every `every` steps, as sample.ts checkpointLoads continues them. */
function replayed (sampled: number[], steps: number, every: number, m: number): number {
  let at = -Infinity
  let n = 0
  for (const s of [...sampled].sort((a, b) => a - b)) {
    const from = m * Math.floor((s - 1) / m)
    const ref = every * Math.floor(from / every)
    const start = ref <= at && at <= from ? at : ref
    const end = Math.min(from + m, steps)
    n += end - start
    at = end
  }
  return n
}

describe('minChallengeBlocks', () => {
  it('is twice the sample\'s replay and one evidence re-run at the reference speed, plus the fixed margin', () => {
    const p = size()
    // 2 verifiers: 22 units each, from the checkpoint before each (≤ 10 + 1 steps), and one more such replay
    expect(requiredSampleCount(2)).toBe(22)
    expect(challengeReplaySteps(1000, { checkpointEvery: 10, rootEvery: 1, verifierCount: 2 })).toBe(22 * 11 + 11)
    expect(stepFlops(p)).toBe(60_000)
    const blocks = minChallengeBlocks(p, { checkpointEvery: 10, rootEvery: 1, verifierCount: 2 }, 1e6)
    expect(blocks).toBe(Math.ceil(2 * 60_000 * 253 / 1e6) + CHALLENGE_MARGIN_BLOCKS)
  })

  it('shrinks with more verifiers (each samples less), grows with the checkpoint and root spacing, never below the margin', () => {
    const p = size()
    const at = (o: { checkpointEvery?: number, rootEvery?: number, verifierCount?: number }): number =>
      minChallengeBlocks(p, { checkpointEvery: 10, rootEvery: 1, verifierCount: 1, ...o }, 1e6)
    expect(at({ verifierCount: 1 })).toBeGreaterThan(at({ verifierCount: 2 }))
    expect(at({ verifierCount: 2 })).toBeGreaterThan(at({ verifierCount: 4 }))
    expect(at({ checkpointEvery: 40 })).toBeGreaterThan(at({ checkpointEvery: 10 }))
    expect(at({ checkpointEvery: 40, rootEvery: 8 })).toBeGreaterThan(at({ checkpointEvery: 40 }))
    expect(minChallengeBlocks(size({ macs: 1 }), { checkpointEvery: 10, rootEvery: 1, verifierCount: 1 }, 1e12)).toBe(1 + CHALLENGE_MARGIN_BLOCKS)
  })

  it('counts the whole run at most once for the sample (a short task is replayed whole), plus the evidence', () => {
    expect(challengeReplaySteps(100, { checkpointEvery: 10, rootEvery: 1, verifierCount: 1 })).toBe(100 + 11)
    expect(challengeReplaySteps(8, { checkpointEvery: 4, rootEvery: 1, verifierCount: 1 })).toBe(8 + 5)
    expect(challengeReplaySteps(3, { checkpointEvery: 3, rootEvery: 1, verifierCount: 1 })).toBe(3 + 3)
    // a shorter solve than window is possible for tiny tasks (the margin), not for long ones: a verifier replays a sample
    const long = size({ steps: 100_000 })
    expect(minChallengeBlocks(long, { checkpointEvery: 100, rootEvery: 1, verifierCount: 2 }, 1e6)).toBeLessThan(minSolveBlocks(long, 1e6))
  })

  it('bounds every real sample\'s replay (sample.ts), at a root after every step and every m steps', () => {
    for (const [steps, every, m, k] of [[1000, 10, 1, 1], [1000, 10, 1, 2], [300, 20, 4, 1], [301, 24, 8, 2], [50, 50, 1, 1], [97, 12, 4, 3]] as const) {
      const bound = challengeReplaySteps(steps, { checkpointEvery: every, rootEvery: m, verifierCount: k })
      const evidence = Math.min(every + m, steps)
      for (let i = 0; i < 40; i++) {
        const seed = toHex(sha256(new Uint8Array([i, steps & 255, every, m])))
        const units = sampleSegments(seed, toHex(sha256(new Uint8Array([k, i]))), steps, m, requiredSampleCount(k))
        expect(replayed(units, steps, every, m) + evidence).toBeLessThanOrEqual(bound)
      }
    }
  })
})
