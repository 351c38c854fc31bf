import { describe, expect, it } from 'vitest'
import { FLOOD_PENALTY, FloodPenalties, GossipRate } from '../../../node/p2p/gossip-rate.js'

// The per-author and per-topic token buckets of gossip (the flood itself, over
// real peers: test/adversarial/gossip-flood.test.ts). The clock is a number here.

describe('gossip rates', () => {
  it('an author gets its burst at once, then its rate; another author and another topic are counted apart', () => {
    let now = 0
    const r = new GossipRate({ burst: 3, perSecond: 2 }, () => now)
    expect([1, 2, 3, 4].map(() => r.take('t', 'a'))).toEqual(['ok', 'ok', 'ok', 'author'])
    expect(r.take('t', 'b')).toBe('ok')
    expect(r.take('u', 'a')).toBe('ok')
    now = 400
    expect(r.take('t', 'a')).toBe('author') // 0.8 of a token
    now = 600
    expect(r.take('t', 'a')).toBe('ok')
    // a long silence refills the burst, not more
    now = 60_000
    expect([1, 2, 3, 4].map(() => r.take('t', 'a'))).toEqual(['ok', 'ok', 'ok', 'author'])
  })

  it('a topic with a rate of its own counts every author together; an author over its own rate uses none of it', () => {
    let now = 0
    const r = new GossipRate({ burst: 2, perSecond: 1 }, () => now)
    r.limitTopic('open', { burst: 4, perSecond: 10 })
    expect(['k1', 'k2', 'k3', 'k4', 'k5'].map(k => r.take('open', k))).toEqual(['ok', 'ok', 'ok', 'ok', 'topic'])
    now = 100 // one token back for the topic
    expect(r.take('open', 'k1')).toBe('ok')
    expect(r.take('open', 'k1')).toBe('author')
    expect(r.take('open', 'k6')).toBe('topic')
    // other topics have none
    expect(['k1', 'k2', 'k3'].map(k => r.take('closed', k))).toEqual(['ok', 'ok', 'ok'])
  })

  it('a flood penalty adds up per peer and decays as an invalid message\'s does', () => {
    let now = 0
    const p = new FloodPenalties(() => now)
    p.add('a'); p.add('a'); p.add('a'); p.add('a')
    expect(p.of('a')).toBe(4 * FLOOD_PENALTY)
    expect(p.of('b')).toBe(0)
    now = 69_000 // 0.99^69 ≈ ½
    expect(p.of('a')).toBeCloseTo(4 * FLOOD_PENALTY * 0.99 ** 69, 6)
    expect(p.of('a')).toBeLessThan(2.01 * FLOOD_PENALTY)
  })
})
