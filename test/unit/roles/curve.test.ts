import { describe, expect, it } from 'vitest'
import { addCurvePoint } from '../../../node/roles/work-progress.js'

describe('the loss curve a solver reports with its progress', () => {
  it('keeps points in step order, skips NaN and repeats, and thins itself to span the whole run', () => {
    const c: Array<[number, number]> = []
    addCurvePoint(c, 1, 2.5)
    addCurvePoint(c, 1, 2.4)
    addCurvePoint(c, 2, NaN)
    addCurvePoint(c, 3, 2.0)
    expect(c).toEqual([[1, 2.5], [3, 2.0]])
    const long: Array<[number, number]> = []
    for (let s = 1; s <= 1000; s++) addCurvePoint(long, s, 1 / s, 50)
    expect(long.length).toBeLessThanOrEqual(50)
    expect(long[0]).toEqual([1, 1])
    expect(long[long.length - 1]).toEqual([1000, 1 / 1000])
    for (let i = 1; i < long.length; i++) expect(long[i][0]).toBeGreaterThan(long[i - 1][0])
    // thinning keeps it spread out: no half of the run without points
    const firstHalf = long.filter(p => p[0] <= 500).length / long.length
    expect(firstHalf).toBeGreaterThan(0.3)
    expect(firstHalf).toBeLessThan(0.7)
    expect(long.length).toBeGreaterThan(20)
  })
})
