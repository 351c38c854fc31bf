import { describe, expect, it } from 'vitest'
import { CHECKPOINT_COST_STEPS, CHECKPOINT_FLOPS_PER_BYTE, checkpointCostSteps, checkpointLoads, intervalAt, intervalCount, missProbability, recommendedCheckpointEvery, replaysFor, sampleSteps, samplesForDetection, samplesPerVerifier } from '../../../protocols/verification/sample.js'

const seed = '0x' + '11'.repeat(32)
const alice = '0x' + 'aa'.repeat(32)
const bob = '0x' + 'bb'.repeat(32)
const acct = (v: number): string => '0x' + v.toString(16).padStart(64, '0')

describe('verification sampling', () => {
  it('covers the run with intervals ending at the last step', () => {
    expect(intervalCount(95, 10)).toBe(10)
    expect(intervalAt(9, 95, 10)).toEqual({ index: 9, fromStep: 90, toStep: 95 })
  })

  it('draws distinct steps in range, deterministic per (seed, verifier), different between verifiers', () => {
    const a = sampleSteps(seed, alice, 1000, 22)
    expect(sampleSteps(seed, alice, 1000, 22)).toEqual(a)
    expect(new Set(a).size).toBe(22)
    expect(a.every(s => Number.isInteger(s) && s >= 1 && s <= 1000)).toBe(true)
    expect([...a].sort((x, y) => x - y)).toEqual(a)
    expect(sampleSteps(seed, bob, 1000, 22)).not.toEqual(a)
    expect(sampleSteps(seed, alice, 30, 100)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1))
    expect(() => sampleSteps(seed, alice, 0, 3)).toThrow(/positive/)
  })

  it('is roughly uniform over steps', () => {
    const counts = new Array(20).fill(0)
    for (let v = 0; v < 4000; v++) counts[sampleSteps(seed, acct(v), 20, 1)[0] - 1]++
    for (const c of counts) expect(c).toBeGreaterThan(140)
  })

  it('replays each interval from its checkpoint up to its latest sampled step', () => {
    expect(replaysFor([3, 7, 12, 30, 31], 35, 10)).toEqual([
      { index: 0, fromStep: 0, toStep: 7 },
      { index: 1, fromStep: 10, toStep: 12 },
      { index: 2, fromStep: 20, toStep: 30 },
      { index: 3, fromStep: 30, toStep: 31 }
    ])
    expect(() => replaysFor([36], 35, 10)).toThrow(/outside/)
  })

  it('sizes the sample for a detection goal, independent of where faked steps sit', () => {
    // 0.9^44 = 0.0097: 44 sampled steps catch ≥ 10% faked steps with ≥ 99%
    expect(samplesForDetection(0.1, 0.01)).toBe(44)
    expect(samplesForDetection(0, 0.01)).toBe(Infinity)
    expect(samplesPerVerifier(2)).toBe(22)
    expect(samplesPerVerifier(3)).toBe(15)
    expect(missProbability(1000, 100, 44)).toBeLessThanOrEqual(0.01)
    expect(missProbability(1000, 100, 40)).toBeGreaterThan(0.01)
  })

  it('catches a solver faking one contiguous block of 10% with the promised probability (two verifiers of 22)', () => {
    // the worst placement for interval sampling: one block of 100 faked steps in 1000
    let caught = 0
    const trials = 1500
    for (let t = 0; t < trials; t++) {
      const s = '0x' + t.toString(16).padStart(64, '0')
      const start = 1 + (t * 389) % 900
      const faked = (x: number): boolean => x >= start && x < start + 100
      // a verifier replaying from the checkpoint up to a sampled step checks at least that step
      const hit = [alice, bob].some(a => sampleSteps(s, a, 1000, samplesPerVerifier(2)).some(faked))
      if (hit) caught++
    }
    // expected ≥ 99.1%; 1500 deterministic trials leave a wide margin above 98%
    expect(caught / trials).toBeGreaterThan(0.98)
  })

  it('a checkpoint costs more steps of a task whose step does little work per byte of state', () => {
    // the Adam mlp (1.2 MB of state, 39 MFLOP a step) against the cnn (63 KB, 76 MFLOP)
    const mlp = checkpointCostSteps(101_770 * 12, 6 * 101_632 * 64)
    expect(mlp).toBeCloseTo(101_770 * 12 * CHECKPOINT_FLOPS_PER_BYTE / (6 * 101_632 * 64), 9)
    expect(mlp).toBeGreaterThan(1.5)
    expect(recommendedCheckpointEvery(1000, 101_770 * 12, mlp)).toBe(9)
    expect(checkpointCostSteps(5_258 * 12, 6 * 199_072 * 64)).toBe(CHECKPOINT_COST_STEPS)
    expect(checkpointCostSteps(0, 1e6)).toBe(CHECKPOINT_COST_STEPS)
    expect(checkpointCostSteps(1e6, 0)).toBe(CHECKPOINT_COST_STEPS)
  })

  it('recommends the checkpoint spacing with the least replay + checkpoint work', () => {
    expect(recommendedCheckpointEvery(1000)).toBe(5)
    expect(recommendedCheckpointEvery(10_000)).toBe(15)
    expect(recommendedCheckpointEvery(100)).toBe(2)
    expect(recommendedCheckpointEvery(40)).toBe(1)
    expect(recommendedCheckpointEvery(1)).toBe(1)
    // at most 1000 checkpoints, and 2 GiB of them
    expect(recommendedCheckpointEvery(1_000_000)).toBe(1000)
    expect(recommendedCheckpointEvery(1000, 100 << 20)).toBe(Math.ceil(1000 * (100 << 20) / 2 ** 31))
    expect(() => recommendedCheckpointEvery(0)).toThrow(/positive integer/)
    // the chosen k minimises 22 (k + 1) + c · steps / k over the integers
    for (const steps of [400, 1000, 2000, 10_000]) {
      const cost = (k: number): number => 22 * (k + 1) + CHECKPOINT_COST_STEPS * steps / k
      const k = recommendedCheckpointEvery(steps)
      expect(cost(k)).toBeLessThanOrEqual(Math.min(cost(k - 1 || 1), cost(k + 1)) + 1e-9)
    }
    // 44 samples replay ≈ 44 (k + 1) / 2 steps: ~13% of a 1000-step run
    expect(44 * (recommendedCheckpointEvery(1000) + 1) / 2 / 1000).toBeLessThan(0.14)
    // a measured checkpoint cost (erasure coding included) spaces them further apart, by the same optimum
    for (const c of [2, 14, 40]) {
      const cost = (k: number): number => 22 * (k + 1) + c * 1000 / k
      const k = recommendedCheckpointEvery(1000, 0, c)
      expect(cost(k)).toBeLessThanOrEqual(Math.min(cost(k - 1 || 1), cost(k + 1)) + 1e-9)
    }
    expect(recommendedCheckpointEvery(1000, 0, 14)).toBe(25)
    expect(recommendedCheckpointEvery(3, 0, 1000)).toBe(3)
    expect(() => recommendedCheckpointEvery(1000, 0, 0)).toThrow(/positive number/)
    expect(() => recommendedCheckpointEvery(1000, 0, NaN)).toThrow(/positive number/)
  })

  it('lists the checkpoints a replay of a sample loads', () => {
    const cks = [0, 4, 8, 12, 16, 20]
    // one per interval with a sample; a sample continuing from the previous one loads nothing
    expect(checkpointLoads([3, 6, 7, 14], cks)).toEqual([0, 4, 12])
    // consecutive samples run on across checkpoints: every step loads one checkpoint
    expect(checkpointLoads(Array.from({ length: 20 }, (_, i) => i + 1), cks)).toEqual([0])
    // a sample right after a checkpoint starts from it; a gap restarts from the sample's own checkpoint
    expect(checkpointLoads([5, 6, 11], cks)).toEqual([4, 8])
    expect(checkpointLoads([9], cks)).toEqual([8])
    expect(() => checkpointLoads([3], [4])).toThrow(/no checkpoint/)
  })
})
