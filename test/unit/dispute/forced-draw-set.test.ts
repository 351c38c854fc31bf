import { describe, expect, it } from 'vitest'
import { sha256 } from '../../../protocols/commit/merkle.js'
import { FORCED_ERRORS_PER_DRAW, forcedErrorFromOutput, forcedErrorRoom, forcedErrorsFromOutputs } from '../../../protocols/dispute/forced-error.js'
import { jackpotParts } from '../../../devnet/chain/runtime/jackpot.js'

// The draw orders a set of forced steps: FORCED_ERRORS_PER_DRAW picks, one
// VRF each, each a forced error with probability ppm at a uniform markable
// leaf, independently of the others. Outputs here are hashes standing in for
// VRF pre-outputs (the draw hashes them again, so any 32 bytes are as good).

/** draw i's pick outputs */
const outputs = (i: number): Uint8Array[] => Array.from({ length: FORCED_ERRORS_PER_DRAW }, (_, j) =>
  sha256(new TextEncoder().encode('draw-set-test'), Uint8Array.of(i & 0xff, (i >> 8) & 0xff, (i >> 16) & 0xff, j)))
const N = 20_000

describe('the forced-error draw orders several independent forced steps', () => {
  it('bounds the count: at most FORCED_ERRORS_PER_DRAW distinct markable steps, ascending; each pick forced at the rate ppm', () => {
    const [steps, m, every] = [1000, 5, 10]
    const room = forcedErrorRoom(steps, m, every)
    const counts = new Map<number, number>()
    let none = 0; let fired = 0
    for (let i = 0; i < N; i++) {
      const s = forcedErrorsFromOutputs(outputs(i), steps, 300_000, m, every)
      for (const o of outputs(i)) if (forcedErrorFromOutput(o, steps, 300_000, m, every) !== null) fired++
      if (s.length === 0) { none++; continue }
      expect(s.length).toBeLessThanOrEqual(FORCED_ERRORS_PER_DRAW)
      expect([...s].sort((a, b) => a - b)).toEqual(s)
      expect(new Set(s).size).toBe(s.length)
      for (const f of s) {
        expect((f + 1) % m).toBe(0) // a committed leaf
        expect((f + 1) % every).not.toBe(0) // never a checkpoint
        expect(f + 1).toBeLessThan(steps)
      }
      counts.set(s.length, (counts.get(s.length) ?? 0) + 1)
    }
    // each pick is forced with probability ppm: 0.3 ± 5 standard errors; no forced error at all with (1 − ppm)^4
    const picks = N * FORCED_ERRORS_PER_DRAW
    expect(Math.abs(fired / picks - 0.3)).toBeLessThan(5 * Math.sqrt(0.3 * 0.7 / picks))
    expect(Math.abs(none / N - 0.7 ** 4)).toBeLessThan(0.015)
    expect(room).toBe(100)
    // at ppm = 10⁶: four independent picks among 100 leaves are mostly four distinct steps
    let all4 = 0
    for (let i = 0; i < N; i++) if (forcedErrorsFromOutputs(outputs(i), steps, 1_000_000, m, every).length === FORCED_ERRORS_PER_DRAW) all4++
    const expected4 = [1, 2, 3].reduce((p, k) => p * (room - k) / room, 1)
    expect(Math.abs(all4 / N - expected4)).toBeLessThan(0.02)
    // a program with no markable leaf: nothing, whatever the rate
    expect(forcedErrorsFromOutputs(outputs(1), 20, 1_000_000, 4, 4)).toEqual([])
  })

  it('where one forced step lies says nothing about the others: P(b drawn | a drawn) is that of independent picks', () => {
    // 6 markable leaves (states 2, 4, 8, 10, 14, 16); the exact law of the set from all 6^4 equally likely picks
    const [steps, m, every] = [20, 2, 6]
    const room = forcedErrorRoom(steps, m, every)
    const leaves = [1, 3, 7, 9, 13, 15]
    expect(room).toBe(leaves.length)
    let both = 0; let one = 0
    const pick = (n: number, k: number): number => Math.floor(n / room ** k) % room
    for (let n = 0; n < room ** FORCED_ERRORS_PER_DRAW; n++) {
      const picks = new Set(Array.from({ length: FORCED_ERRORS_PER_DRAW }, (_, k) => pick(n, k)))
      if (picks.has(0)) { one++; if (picks.has(1)) both++ }
    }
    const exact = both / one
    // the same pair measured on the draw, and every other ordered pair
    const inSet = new Map<number, number>()
    const pairs = new Map<string, number>()
    for (let i = 0; i < N; i++) {
      const s = forcedErrorsFromOutputs(outputs(i), steps, 1_000_000, m, every)
      for (const a of s) {
        inSet.set(a, (inSet.get(a) ?? 0) + 1)
        for (const b of s) if (b !== a) pairs.set(`${a}:${b}`, (pairs.get(`${a}:${b}`) ?? 0) + 1)
      }
    }
    for (const a of leaves) {
      for (const b of leaves) {
        if (a === b) continue
        const conditional = (pairs.get(`${a}:${b}`) ?? 0) / inSet.get(a)!
        expect(Math.abs(conditional - exact)).toBeLessThan(0.03)
      }
    }
    // a verifier that found a never knows the others absent: another leaf is drawn with probability > 0.4
    expect(exact).toBeGreaterThan(0.4)
  })

  it('splits the jackpot across the forced steps: the parts add up to J, whatever their number', () => {
    const J = 200n * 10n ** 12n
    for (const owed of [[4], [1, 9], [1, 3, 7], [1, 3, 7, 9]]) {
      const parts = jackpotParts(J, owed)
      expect([...parts.keys()]).toEqual(owed)
      expect([...parts.values()].reduce((a, b) => a + b, 0n)).toBe(J)
      for (const p of parts.values()) expect(p - J / BigInt(owed.length)).toBeLessThan(BigInt(owed.length))
    }
    expect(jackpotParts(J, []).size).toBe(0)
  })
})
