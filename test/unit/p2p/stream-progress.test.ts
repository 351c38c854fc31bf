import { describe, expect, it } from 'vitest'
import { addProgress, recentBytes, streamBusy, type BusyPolicy, type StreamView } from '../../../node/p2p/stream-progress.js'

const W = 10_000
const policy: BusyPolicy = { windowMs: W, minBytes: 1000, untrackedMs: 30_000 }
const view = (over: Partial<StreamView>): StreamView => ({ direction: 'inbound', protocol: '/x', ageMs: 0, ...over })

describe('stream progress', () => {
  it('counts bytes in the current and the previous window, and forgets older ones', () => {
    let p = addProgress(undefined, 600, 5 * W + 1, W)
    p = addProgress(p, 300, 5 * W + 9000, W)
    expect(recentBytes(p, 5 * W + 9999, W)).toBe(900)
    p = addProgress(p, 200, 6 * W + 10, W)
    expect(recentBytes(p, 6 * W + 10, W)).toBe(1100)
    expect(recentBytes(p, 7 * W + 10, W)).toBe(200)
    expect(recentBytes(p, 8 * W, W)).toBe(0)
    // a gap of more than one window starts over
    expect(addProgress(p, 50, 9 * W, W)).toEqual({ window: 9, bytes: 50, previous: 0 })
  })

  it('a stream of ours is busy only while it moves the minimum; an open stream that moves nothing never is', () => {
    const moving = addProgress(undefined, 1500, 3 * W, W)
    expect(streamBusy(view({ progress: moving }), 3 * W + 5000, policy)).toBe(true)
    expect(streamBusy(view({ progress: moving }), 5 * W, policy)).toBe(false)
    expect(streamBusy(view({ progress: addProgress(undefined, 999, 3 * W, W) }), 3 * W, policy)).toBe(false)
    // an inbound stream of a protocol we do not frame (a DHT query held open, a stream still negotiating): never
    expect(streamBusy(view({ ageMs: 1 }), 0, policy)).toBe(false)
    // one we opened (our own DHT query): for 30 s
    expect(streamBusy(view({ direction: 'outbound', ageMs: 29_999 }), 0, policy)).toBe(true)
    expect(streamBusy(view({ direction: 'outbound', ageMs: 30_000 }), 0, policy)).toBe(false)
  })
})
