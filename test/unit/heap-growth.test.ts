import { join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'

// The raised old-generation growth is held only while checkpoints move
// (node/heap-growth.ts): on with the first hold, off a linger after the last
// release, never on when the peer settings did not enable it.
const MOD = join(process.cwd(), 'dist/node/heap-growth.js')
type HeapGrowth = typeof import('../../node/heap-growth.js')

async function fresh (): Promise<HeapGrowth> {
  vi.resetModules()
  return await import(MOD) as HeapGrowth
}

describe('heap growth held around transfers', () => {
  afterEach(() => { vi.useRealTimers() })

  it('does nothing unless enabled (an operator\'s own --heap-growing-percent, or PROOFSWARM_PEER_HEAP=default)', async () => {
    const h = await fresh()
    const release = h.holdHeapGrowth()
    expect(h.heapGrowthRaised()).toBe(false)
    release()
    expect(h.heapGrowthRaised()).toBe(false)
  })

  it('is raised while any hold is open, and dropped a linger after the last release', async () => {
    vi.useFakeTimers()
    const h = await fresh()
    h.enableHeapGrowthHolds(200)
    expect(h.heapGrowthRaised()).toBe(false)
    const a = h.holdHeapGrowth()
    const b = h.holdHeapGrowth()
    expect(h.heapGrowthRaised()).toBe(true)
    a()
    a() // a second release of the same hold does not release another
    await vi.advanceTimersByTimeAsync(60_000)
    expect(h.heapGrowthRaised()).toBe(true)
    b()
    expect(h.heapGrowthRaised()).toBe(true) // lingers: a verifier fetches its checkpoints one after another
    const c = h.holdHeapGrowth() // the next fetch within the linger keeps it
    await vi.advanceTimersByTimeAsync(60_000)
    expect(h.heapGrowthRaised()).toBe(true)
    c()
    await vi.advanceTimersByTimeAsync(60_000)
    expect(h.heapGrowthRaised()).toBe(false)
  })

  it('withHeapGrowth releases when the work fails', async () => {
    vi.useFakeTimers()
    const h = await fresh()
    h.enableHeapGrowthHolds(200)
    await expect(h.withHeapGrowth(async () => { expect(h.heapGrowthRaised()).toBe(true); throw new Error('fetch failed') })).rejects.toThrow('fetch failed')
    await vi.advanceTimersByTimeAsync(60_000)
    expect(h.heapGrowthRaised()).toBe(false)
  })
})
