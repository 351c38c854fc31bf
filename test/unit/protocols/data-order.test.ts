import { describe, expect, it } from 'vitest'
import { DataOrder, Rng, batchIndices, deriveSeed, epochPermutation, mix32 } from '../../../protocols/data/index.js'

describe('protocols/data', () => {
  it('Rng is deterministic per seed and differs across seeds', () => {
    const a = new Rng(7); const b = new Rng(7); const c = new Rng(8)
    const xa = Array.from({ length: 16 }, () => a.nextU32())
    const xb = Array.from({ length: 16 }, () => b.nextU32())
    const xc = Array.from({ length: 16 }, () => c.nextU32())
    expect(xa).toEqual(xb)
    expect(xa).not.toEqual(xc)
    expect(xa.every(x => Number.isInteger(x) && x >= 0 && x < 2 ** 32)).toBe(true)
  })

  it('below(n) stays in range and covers it', () => {
    const r = new Rng(1)
    const seen = new Set<number>()
    for (let i = 0; i < 2000; i++) { const v = r.below(10); expect(v).toBeGreaterThanOrEqual(0); expect(v).toBeLessThan(10); seen.add(v) }
    expect(seen.size).toBe(10)
    expect(() => r.below(0)).toThrow(RangeError)
  })

  it('mix32/deriveSeed are uint32 and label-sensitive', () => {
    expect(mix32(0)).toBe(0)
    expect(deriveSeed(1, 2)).not.toBe(deriveSeed(1, 3))
    expect(deriveSeed(1, 2, 3)).not.toBe(deriveSeed(1, 3, 2))
  })

  it('an epoch permutation is a permutation, different per epoch', () => {
    const p0 = epochPermutation(5, 0, 1000); const p1 = epochPermutation(5, 1, 1000)
    expect([...p0].sort((a, b) => a - b)).toEqual(Array.from({ length: 1000 }, (_, i) => i))
    expect([...p0]).not.toEqual([...p1])
    expect([...epochPermutation(5, 0, 1000)]).toEqual([...p0])
  })

  it('batchIndices equals the cached DataOrder, across epoch boundaries', () => {
    const o = new DataOrder(9, 100, 32) // 3 steps per epoch, 4 rows dropped
    for (let s = 0; s < 8; s++) expect([...o.batch(s)]).toEqual([...batchIndices(9, 100, 32, s)])
    expect([...batchIndices(9, 100, 32, 3)]).toEqual([...epochPermutation(9, 1, 100).slice(0, 32)])
    expect(() => batchIndices(9, 10, 32, 0)).toThrow(/larger than the dataset/)
  })
})
