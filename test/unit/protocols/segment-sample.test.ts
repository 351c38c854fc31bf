import { describe, expect, it } from 'vitest'
import { committedStep, segmentCount } from '../../../protocols/pol/segments.js'
import { checkpointLoads, missProbability, sampleSegments, sampleSteps } from '../../../protocols/verification/sample.js'
import { checkpointStepsOf } from '../../../protocols/verification/checkpoint-steps.js'
import { withheldRunCheckpoints } from '../../../protocols/verification/chain-run.js'
import { checkableUnits, checkedUnitOf, requiredSample, transitionsOfUnit, unitOfTransition } from '../../../protocols/verification/verdict.js'

// Verification sampling with state roots every m steps: the unit is a segment,
// named node-side by its last step and on chain by its index.

const seed = '0x' + '3c'.repeat(32)
const alice = '0x' + 'aa'.repeat(32)

describe('sampling segments (roots every m steps)', () => {
  it('at m = 1 everything is the per-step rule', () => {
    expect(sampleSegments(seed, alice, 1000, 1, 22)).toEqual(sampleSteps(seed, alice, 1000, 22))
    expect(requiredSample(seed, alice, 1000, 2, 1)).toEqual(requiredSample(seed, alice, 1000, 2))
    for (const s of [1, 17, 1000]) expect(checkedUnitOf(s, 1000, 1)).toBe(s - 1)
    expect(checkedUnitOf(1001, 1000, 1)).toBe(1000)
    expect(unitOfTransition(-1, 1000, 1)).toBe(-1)
    expect(checkableUnits(1000, true, 1)).toBe(1001)
    const cks = checkpointStepsOf(100, 10)
    for (const sample of [[5, 6, 7], [10, 11, 30], [1, 100], [20, 21, 22, 41]]) {
      expect(checkpointLoads(sample, cks, 1, 100)).toEqual(checkpointLoads(sample, cks))
    }
  })

  it('draws distinct segments uniformly, each named by its last step; the short last segment is as likely as any', () => {
    // 102 steps at m = 4: 26 segments, the last of 2 steps (101, 102)
    const S = segmentCount(102, 4)
    expect(S).toBe(26)
    const a = sampleSegments(seed, alice, 102, 4, 10)
    expect(new Set(a).size).toBe(10)
    expect(a.every(s => s === 102 || s % 4 === 0)).toBe(true)
    expect(a.map(s => checkedUnitOf(s, 102, 4))).toEqual(sampleSteps(seed, alice, S, 10).map(u => u - 1))
    let last = 0
    const N = 2000
    for (let i = 0; i < N; i++) if (sampleSegments('0x' + i.toString(16).padStart(64, '0'), alice, 102, 4, 1)[0] === 102) last++
    expect(Math.abs(last / N - 1 / S)).toBeLessThan(4 * Math.sqrt((1 / S) * (1 - 1 / S) / N))
    // asking for more than there are: every segment
    expect(sampleSegments(seed, alice, 102, 4, 100)).toEqual(Array.from({ length: S }, (_, j) => committedStep(j + 1, 102, 4)))
  })

  it('a solver faking any 10% of the steps spoils ≥ 10% of the segments: the per-segment bound holds wherever the steps sit', () => {
    const steps = 400; const m = 8; const S = segmentCount(steps, m)
    // the cheapest placement for the solver: faked steps packed into whole segments
    const faked = Math.ceil(0.1 * steps)
    const spoiled = Math.ceil(faked / m)
    expect(spoiled / S).toBeGreaterThanOrEqual(0.1)
    expect(missProbability(S, spoiled, 22) ** 2).toBeLessThanOrEqual(0.9 ** 44)
  })

  it('checked units: segment j = ⌊(s − 1) / m⌋ for a segment\'s last step s, a diverged proof\'s last step one past the last segment', () => {
    expect([4, 8, 10].map(s => checkedUnitOf(s, 10, 4))).toEqual([0, 1, 2])
    // a step inside a segment (a NaN found there) is its segment
    expect(checkedUnitOf(6, 10, 4)).toBe(1)
    // a diverged proof of k = 10 steps: its step 11 is unit ⌈10 / 4⌉ = 3, its transitions 0 … 9 are segments 0 … 2
    expect(checkedUnitOf(11, 10, 4)).toBe(3)
    expect(unitOfTransition(10, 10, 4)).toBe(3)
    expect(unitOfTransition(9, 10, 4)).toBe(2)
    expect(checkableUnits(10, false, 4)).toBe(3)
    expect(checkableUnits(10, true, 4)).toBe(4)
  })

  it('a unit\'s transitions (what the dashboard draws for a checked or disputed segment) are the inverse of unitOfTransition', () => {
    expect(transitionsOfUnit(7, 10, 1)).toEqual([7])
    expect(transitionsOfUnit(1, 10, 4)).toEqual([4, 5, 6, 7])
    // the short last segment, and a diverged proof's last step one past it
    expect(transitionsOfUnit(2, 10, 4)).toEqual([8, 9])
    expect(transitionsOfUnit(3, 10, 4)).toEqual([10])
    for (const m of [1, 3, 8]) {
      for (let u = 0; u <= checkableUnits(1000, true, m) - 1; u++) for (const t of transitionsOfUnit(u, 1000, m)) expect(unitOfTransition(t, 1000, m)).toBe(u)
    }
  })

  it('checkpoint loads follow the segment replays: from the checkpoint at or before c_j, continuing across consecutive segments', () => {
    // 40 steps, m = 4, checkpoints every 8: 0, 8, 16, 24, 32, 40
    const cks = checkpointStepsOf(40, 8)
    // segment 1 (steps 5 … 8) starts at 4: checkpoint 0; segment 2 (9 … 12) at 8: checkpoint 8
    expect(checkpointLoads([8], cks, 4, 40)).toEqual([0])
    expect(checkpointLoads([12], cks, 4, 40)).toEqual([8])
    // segments 1 and 2 back to back: segment 2 continues from the end of 1 (step 8), no second load
    expect(checkpointLoads([8, 12], cks, 4, 40)).toEqual([0])
    expect(checkpointLoads([4, 16, 40], cks, 4, 40)).toEqual([0, 8, 32])
    expect(withheldRunCheckpoints([16, 40], { stepCount: 40, checkpointEvery: 8, diverged: false }, 4)).toEqual([0, 8, 32])
  })
})
