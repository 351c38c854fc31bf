import { describe, expect, it } from 'vitest'
import { GossipRate } from '../../../node/p2p/gossip-rate.js'

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
})
