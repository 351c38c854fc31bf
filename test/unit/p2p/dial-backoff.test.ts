import { describe, expect, it } from 'vitest'
import { DialBackoff, shuffled } from '../../../node/p2p/dial-backoff.js'

describe('peer keeper dial backoff', () => {
  it('a peer that failed waits, twice as long after each failure, up to the max', () => {
    let t = 0
    const b = new DialBackoff(10_000, 40_000, () => t)
    expect(b.ready('a')).toBe(true)
    b.failed('a')
    expect(b.ready('a')).toBe(false)
    t = 9_999; expect(b.ready('a')).toBe(false)
    t = 10_000; expect(b.ready('a')).toBe(true)
    b.failed('a') // gap 20 s
    t = 29_999; expect(b.ready('a')).toBe(false)
    t = 30_000; expect(b.ready('a')).toBe(true)
    b.failed('a'); b.failed('a'); b.failed('a') // capped at 40 s
    t += 40_000; expect(b.ready('a')).toBe(true)
    expect(b.ready('b')).toBe(true) // other peers unaffected
  })

  it('a success forgets the failures', () => {
    let t = 0
    const b = new DialBackoff(10_000, 40_000, () => t)
    b.failed('a'); b.failed('a')
    b.succeeded('a')
    expect(b.ready('a')).toBe(true)
    expect(b.size).toBe(0)
    b.failed('a')
    t = 10_000
    expect(b.ready('a')).toBe(true) // back to the minimum gap
  })

  it('shuffled keeps every element once and varies the order', () => {
    const xs = Array.from({ length: 20 }, (_, i) => i)
    const s = shuffled(xs)
    expect([...s].sort((a, b) => a - b)).toEqual(xs)
    expect(xs).toEqual(Array.from({ length: 20 }, (_, i) => i)) // input untouched
    const orders = new Set(Array.from({ length: 10 }, () => shuffled(xs).join(',')))
    expect(orders.size).toBeGreaterThan(1)
  })
})
