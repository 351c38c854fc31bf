import type { Multiaddr } from '@multiformats/multiaddr'

// Candidate providers for one fetch: discovered ones (DHT or an explicit
// list) wait here until a worker takes them; a provider that served well is
// put back when it runs out of work, so it can pick up blocks another
// provider dropped. A provider that failed is never re-added in this fetch.

export interface Candidate { peerId: string, addrs: Multiaddr[] }

export class ProviderPool {
  private readonly queue: Candidate[] = []
  private readonly seen = new Set<string>()
  private readonly failed = new Set<string>()
  private waiters: Array<() => void> = []
  /** set when the pool has no candidate and the fetch wants more: discovery re-queries */
  starving = false
  private starvingWaiters: Array<() => void> = []

  constructor (private readonly exclude: (peerId: string) => boolean) {}

  /** Adds a newly discovered provider; returns false when it was known or excluded. */
  /** providers skipped because they are banned (reported in the no-provider error) */
  readonly excluded = new Set<string>()

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

  markFailed (peerId: string): void { this.failed.add(peerId) }

  get size (): number { return this.queue.length }
  get discovered (): number { return this.seen.size }

  take (): Candidate | undefined {
    const c = this.queue.shift()
    if (c != null) this.starving = false
    return c
  }

  /** Resolves true when a candidate is available, false after `ms` or on abort. */
  async wait (ms: number, signal?: AbortSignal): Promise<boolean> {
    if (this.queue.length > 0) return true
    this.setStarving()
    return await new Promise<boolean>(resolve => {
      const done = (v: boolean): void => {
        clearTimeout(t)
        signal?.removeEventListener('abort', onAbort)
        this.waiters = this.waiters.filter(w => w !== onAdd)
        resolve(v)
      }
      const onAdd = (): void => done(true)
      const onAbort = (): void => done(false)
      const t = setTimeout(() => done(this.queue.length > 0), ms)
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

  private notify (): void {
    const ws = this.waiters
    this.waiters = []
    for (const w of ws) w()
  }
}
