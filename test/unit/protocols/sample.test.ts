import { describe, expect, it } from 'vitest'
import { intervalAt, intervalCount, intervalsForDetection, sampleIntervals } from '../../../protocols/verification/sample.js'

const seed = '0x' + '11'.repeat(32)
const alice = '0x' + 'aa'.repeat(32)
const bob = '0x' + 'bb'.repeat(32)

describe('verification sampling', () => {
  it('covers the run with intervals ending at the last step', () => {
    expect(intervalCount(95, 10)).toBe(10)
    expect(intervalAt(9, 95, 10)).toEqual({ index: 9, fromStep: 90, toStep: 95 })
  })

  it('is deterministic per (seed, verifier), distinct, in range, and differs between verifiers', () => {
    const a = sampleIntervals(seed, alice, 1000, 10, 5)
    expect(sampleIntervals(seed, alice, 1000, 10, 5)).toEqual(a)
    expect(new Set(a.map(i => i.index)).size).toBe(5)
    expect(a.every(i => i.index >= 0 && i.index < 100)).toBe(true)
    expect(sampleIntervals(seed, bob, 1000, 10, 5)).not.toEqual(a)
    expect(sampleIntervals(seed, alice, 30, 10, 10).map(i => i.index)).toEqual([0, 1, 2])
  })

  it('is roughly uniform', () => {
    const counts = new Array(10).fill(0)
    for (let v = 0; v < 2000; v++) {
      const acct = '0x' + v.toString(16).padStart(64, '0')
      counts[sampleIntervals(seed, acct, 100, 10, 1)[0].index]++
    }
    for (const c of counts) expect(c).toBeGreaterThan(140)
  })

  it('sizes the sample for a detection goal', () => {
    // faking 10% of steps, intervals of 10 steps: 0.9^10 = 0.349 per interval → 5 intervals for 99%
    expect(intervalsForDetection(0.1, 10, 0.01)).toBe(5)
    expect(intervalsForDetection(0, 10, 0.01)).toBe(Infinity)
  })
})
