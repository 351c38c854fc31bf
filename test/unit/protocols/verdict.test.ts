import { describe, expect, it } from 'vitest'
import { sampleSteps, samplesPerVerifier } from '../../../protocols/verification/sample.js'
import { MAX_CHECKED_STEPS, missingSampled, requiredSample, requiredSampleCount, verdictSteps, verifierSampleCount } from '../../../protocols/verification/verdict.js'

const seed = '0x' + '5a'.repeat(32)
const alice = '0x' + 'aa'.repeat(32)
const bob = '0x' + 'bb'.repeat(32)
const range = (a: number, b: number): number[] => Array.from({ length: b - a + 1 }, (_, i) => a + i)

describe('what an accepting verdict must list (protocols/verification/verdict.ts)', () => {
  it('requires a verifier\'s share of the detection sample, within the cap', () => {
    expect(requiredSampleCount(1)).toBe(samplesPerVerifier(1))
    expect(requiredSampleCount(1)).toBe(44)
    expect(requiredSampleCount(2)).toBe(22)
    expect(requiredSampleCount(64)).toBe(1)
    expect(requiredSampleCount(0)).toBe(44)
    for (let v = 0; v <= 64; v++) expect(requiredSampleCount(v)).toBeLessThanOrEqual(MAX_CHECKED_STEPS)
  })

  it('a verifier samples at least the required count, more only when asked', () => {
    expect(verifierSampleCount(2)).toBe(22)
    expect(verifierSampleCount(2, 5)).toBe(22) // --verify-steps 5 would be refused on chain
    expect(verifierSampleCount(2, 30)).toBe(30)
    expect(verifierSampleCount(2, Number.MAX_SAFE_INTEGER)).toBe(Number.MAX_SAFE_INTEGER) // --verify-steps all
    expect(verifierSampleCount(2, Number.NaN)).toBe(22)
  })

  it('the required sample is the head of any larger sample of the same verifier (prefix property)', () => {
    const req = requiredSample(seed, alice, 5000, 2)
    expect(req).toHaveLength(22)
    expect(req).toEqual(sampleSteps(seed, alice, 5000, 22))
    for (const n of [23, 100, 1000]) expect(missingSampled(req, sampleSteps(seed, alice, 5000, n))).toEqual([])
    expect(missingSampled(req, sampleSteps(seed, alice, 5000, Number.MAX_SAFE_INTEGER))).toEqual([])
    expect(requiredSample(seed, bob, 5000, 2)).not.toEqual(req)
    // a run shorter than the sample is required whole
    expect(requiredSample(seed, alice, 10, 2)).toEqual(range(1, 10))
  })

  it('missingSampled names the required steps a verdict leaves out', () => {
    expect(missingSampled([3, 7, 9], [9, 1, 3, 7])).toEqual([])
    expect(missingSampled([3, 7, 9], [3, 9])).toEqual([7])
    expect(missingSampled([3, 7, 9], [])).toEqual([3, 7, 9])
  })

  it('verdictSteps lists the sampled steps first, without duplicates, within the cap, and only steps that were checked', () => {
    expect(verdictSteps([5, 2], [1, 2, 3, 4, 5, 5, 6])).toEqual([5, 2, 1, 3, 4, 6])
    expect(verdictSteps([5, 2], [1, 2, 3, 4, 5, 6], 3)).toEqual([5, 2, 1])
    // a rejection listing the steps before the bad one: nothing it did not check is added
    expect(verdictSteps([5, 20], [1, 2, 3])).toEqual([1, 2, 3])
    expect(verdictSteps([], [])).toEqual([])
  })

  it('a verifier that replayed a whole run longer than the cap still lists its sample', () => {
    const steps = 3000
    const all = range(1, steps) // --verify-steps all, or a whistleblower's full replay
    const req = requiredSample(seed, alice, steps, 1)
    expect(req.some(s => s > MAX_CHECKED_STEPS)).toBe(true) // so the first 1024 steps would miss some
    expect(missingSampled(req, all.slice(0, MAX_CHECKED_STEPS)).length).toBeGreaterThan(0)
    const listed = verdictSteps(req, all)
    expect(listed).toHaveLength(MAX_CHECKED_STEPS)
    expect(missingSampled(req, listed)).toEqual([])
    expect(new Set(listed).size).toBe(listed.length)
    expect(listed.every(s => s >= 1 && s <= steps)).toBe(true)
  })
})
