import type { Multiaddr } from '@multiformats/multiaddr'

// Candidate providers for one fetch: discovered ones (DHT or an explicit
// list) wait here until a worker takes them; a provider that served well is
// put back when it runs out of work, so it can pick up blocks another
// provider dropped. A provider that failed in a way that can pass (its
// connection dropped, it timed out: a restart, a network blip) comes back
// after a backoff, RETRY_BASE_MS doubling to RETRY_MAX_MS, for up to
// MAX_RETRIES failures in a row; one that misbehaved is never re-added in
// this fetch.

export interface Candidate { peerId: string, addrs: Multiaddr[] }

export const RETRY_BASE_MS = 500
export const RETRY_MAX_MS = 4000
export const MAX_RETRIES = 10

export class ProviderPool {
  private readonly queue: Candidate[] = []
  private readonly seen = new Set<string>()
  private readonly failed = new Set<string>()
  /** failures in a row (reset by a good block) of providers that may come back */
  private readonly strikes = new Map<string, number>()
  private readonly retryTimers = new Set<NodeJS.Timeout>()
  private waiters: Array<() => void> = []
  /** set when the pool has no candidate and the fetch wants more: discovery re-queries */
  starving = false
  private starvingWaiters: Array<() => void> = []
  /** providers skipped because they are banned (reported in the no-provider error) */
  readonly excluded = new Set<string>()

  constructor (private readonly exclude: (peerId: string) => boolean, private readonly retryBaseMs = RETRY_BASE_MS) {}

  /** Adds a newly discovered provider; returns false when it was known or excluded. */
  add (c: Candidate): boolean {
    if (this.seen.has(c.peerId)) return false
    if (this.exclude(c.peerId)) { this.excluded.add(c.peerId); return false }
    this.seen.add(c.peerId)
    this.queue.push(c)
    this.notify()
    return true
  }

  /** Puts back a provider that behaved (it ran out of work, not into trouble). */
  release (c: Candidate): void {
    if (this.failed.has(c.peerId)) return
    this.queue.push(c)
    this.notify()
  }

  /** A provider that misbehaved (or failed MAX_RETRIES times): not used again in this fetch. */
  markFailed (peerId: string): void { this.failed.add(peerId) }

  /**
   * A provider whose connection failed: back in the pool after a backoff,
   * unless it failed too often in a row. Returns the delay, or undefined when given up.
   */
  retryLater (c: Candidate): number | undefined {
    const n = (this.strikes.get(c.peerId) ?? 0) + 1
    this.strikes.set(c.peerId, n)
    if (n > MAX_RETRIES || this.failed.has(c.peerId)) { this.markFailed(c.peerId); return undefined }
    const delay = Math.min(this.retryBaseMs * 2 ** (n - 1), RETRY_MAX_MS)
    const t = setTimeout(() => {
      this.retryTimers.delete(t)
      if (this.failed.has(c.peerId) || this.exclude(c.peerId)) return
      this.queue.push(c)
      this.notify()
    }, delay)
    t.unref()
    this.retryTimers.add(t)
    return delay
  }

  /** A good block from the provider: its failures in a row start again from 0. */
  succeeded (peerId: string): void {
    if (this.strikes.size > 0) this.strikes.delete(peerId)
  }

  /** providers waiting out a backoff */
  get retrying (): number { return this.retryTimers.size }

  get size (): number { return this.queue.length }
  get discovered (): number { return this.seen.size }

  /** The first candidate `usable` accepts (all when omitted), taken out of the pool. */
  take (usable?: (c: Candidate) => boolean): Candidate | undefined {
    const i = usable == null ? (this.queue.length > 0 ? 0 : -1) : this.queue.findIndex(usable)
    if (i < 0) return undefined
    const [c] = this.queue.splice(i, 1)
    this.starving = false
    return c
  }

  /** Resolves true when a candidate `usable` accepts is available, false after `ms` or on abort. */
  async wait (ms: number, signal?: AbortSignal, usable?: (c: Candidate) => boolean): Promise<boolean> {
    const ready = (): boolean => usable == null ? this.queue.length > 0 : this.queue.some(usable)
    if (ready()) return true
    this.setStarving()
    return await new Promise<boolean>(resolve => {
      const done = (v: boolean): void => {
        clearTimeout(t)
        signal?.removeEventListener('abort', onAbort)
        this.waiters = this.waiters.filter(w => w !== onAdd)
        resolve(v)
      }
      const onAdd = (): void => {
        if (ready()) done(true)
        else this.waiters.push(onAdd) // not one we can use: keep waiting
      }
      const onAbort = (): void => done(false)
      const t = setTimeout(() => done(ready()), ms)
      signal?.addEventListener('abort', onAbort, { once: true })
      this.waiters.push(onAdd)
    })
  }

  /** Resolves when a worker is waiting for a provider (discovery should query again). */
  async whenStarving (signal: AbortSignal): Promise<void> {
    if (this.starving) return
    await new Promise<void>(resolve => {
      const onAbort = (): void => resolve()
      signal.addEventListener('abort', onAbort, { once: true })
      this.starvingWaiters.push(() => { signal.removeEventListener('abort', onAbort); resolve() })
    })
  }

  setStarving (): void {
    this.starving = true
    const ws = this.starvingWaiters
    this.starvingWaiters = []
    for (const w of ws) w()
  }

  /** Stops pending retries (the fetch is over). */
  close (): void {
    for (const t of this.retryTimers) clearTimeout(t)
    this.retryTimers.clear()
  }

  private notify (): void {
    const ws = this.waiters
    this.waiters = []
    for (const w of ws) w()
  }
}
