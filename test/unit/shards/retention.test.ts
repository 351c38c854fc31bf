import { describe, expect, it } from 'vitest'
import { holdActive, rootKept, type RootRecord } from '../../../node/shards/root-records.js'
import { parseFault } from '../../../node/shards/server.js'
import { ProviderPool } from '../../../node/shards/provider-pool.js'

const rec = (over: Partial<RootRecord>): RootRecord => ({
  cid: 'x', name: '', kind: 'checkpoint', size: 0, blocks: 0, complete: true, pinned: false, holds: {}, addedAt: 0, source: 'added', ...over
})

describe('retention holds', () => {
  it('a block hold lasts until the chain reaches the block; unknown height keeps it', () => {
    expect(holdActive({ untilBlock: 10 }, 0, 9)).toBe(true)
    expect(holdActive({ untilBlock: 10 }, 0, 10)).toBe(false)
    expect(holdActive({ untilBlock: 10 }, 0, undefined)).toBe(true)
  })
  it('a time hold lasts until the time; with both deadlines the later one wins', () => {
    expect(holdActive({ untilTime: 1000 }, 999, undefined)).toBe(true)
    expect(holdActive({ untilTime: 1000 }, 1000, undefined)).toBe(false)
    expect(holdActive({ untilTime: 1000, untilBlock: 5 }, 2000, 4)).toBe(true)
    expect(holdActive({ untilTime: 1000, untilBlock: 5 }, 2000, 5)).toBe(false)
  })
  it('a root is kept while pinned or any hold is active', () => {
    expect(rootKept(rec({}), 0, 0)).toBe(false)
    expect(rootKept(rec({ pinned: true }), 0, 0)).toBe(true)
    expect(rootKept(rec({ holds: { a: { untilBlock: 3 }, b: { untilTime: 50 } } }), 100, 2)).toBe(true)
    expect(rootKept(rec({ holds: { a: { untilBlock: 3 }, b: { untilTime: 50 } } }), 100, 3)).toBe(false)
  })
})

describe('fault flag', () => {
  it('parses corrupt and delay, refuses anything else by name', () => {
    expect(parseFault(undefined)).toEqual({ corrupt: false, delayMs: 0 })
    expect(parseFault('corrupt,delay:20')).toEqual({ corrupt: true, delayMs: 20 })
    expect(() => parseFault('explode')).toThrow('unknown fault "explode"')
  })
})

describe('provider pool', () => {
  it('skips excluded and known providers, hands out FIFO, never re-adds a failed one', async () => {
    const pool = new ProviderPool(id => id === 'banned')
    expect(pool.add({ peerId: 'a', addrs: [] })).toBe(true)
    expect(pool.add({ peerId: 'a', addrs: [] })).toBe(false)
    expect(pool.add({ peerId: 'banned', addrs: [] })).toBe(false)
    expect([...pool.excluded]).toEqual(['banned'])
    pool.add({ peerId: 'b', addrs: [] })
    const a = pool.take()!
    expect(a.peerId).toBe('a')
    pool.markFailed('a')
    pool.release(a)
    expect(pool.take()?.peerId).toBe('b')
    expect(pool.take()).toBeUndefined()
  })
  it('wait is bounded and wakes on a new provider', async () => {
    const pool = new ProviderPool(() => false)
    const t0 = Date.now()
    expect(await pool.wait(100)).toBe(false)
    expect(Date.now() - t0).toBeGreaterThanOrEqual(90)
    const w = pool.wait(5000)
    setTimeout(() => pool.add({ peerId: 'late', addrs: [] }), 20)
    expect(await w).toBe(true)
  })
})
