import { describe, expect, it } from 'vitest'
import { ServeBudget } from '../../../node/shards/serve-budget.js'

const settled = async (p: Promise<unknown>): Promise<boolean> => {
  let done = false
  void p.then(() => { done = true }, () => { done = true })
  for (let i = 0; i < 5; i++) await Promise.resolve()
  return done
}

describe('serve budget', () => {
  it('holds a peer at its share while other peers are served', async () => {
    const b = new ServeBudget(10, 30)
    await b.acquire('slow', 10)
    const blocked = b.acquire('slow', 1)
    expect(await settled(blocked)).toBe(false)
    // another peer queued behind the blocked one is not held up by it
    await b.acquire('honest', 10)
    expect(b.inUse).toBe(20)
    b.release('slow', 10)
    expect(await settled(blocked)).toBe(true)
    expect(b.peerUse('slow')).toBe(1)
  })

  it('never exceeds the total', async () => {
    const b = new ServeBudget(10, 15)
    await b.acquire('a', 10)
    const w = b.acquire('b', 10)
    expect(await settled(w)).toBe(false)
    b.release('a', 5)
    expect(await settled(w)).toBe(true)
    expect(b.inUse).toBe(15)
  })

  it('a waiter whose stream ends is dropped without a charge', async () => {
    const b = new ServeBudget(10, 10)
    await b.acquire('a', 10)
    const ctl = new AbortController()
    const w = b.acquire('a', 5, ctl.signal)
    ctl.abort(new Error('stream closed'))
    await expect(w).rejects.toThrow('stream closed')
    b.release('a', 10)
    expect(b.inUse).toBe(0)
  })

  it('refuses a charge over the per-peer share', async () => {
    await expect(new ServeBudget(10, 20).acquire('a', 11)).rejects.toThrow(/per-peer/)
  })
})
