// Bytes a provider may hold in answers read from its store but not yet
// written out, per fetcher peer and in total. An answer is charged before its
// block is read and released once written (or dropped), so a fetcher that
// never reads its responses pins at most its own share: its requests wait
// here, unread, and the rest of the swarm is served from what is left.
// Without it each slow stream pinned a full pipeline (8 × 1 MiB) and a
// connection 32 such streams: ~100 MiB per slow reader.

import { MAX_PIPELINE, MAX_RESPONSE_BYTES } from '../../protocols/shards/index.js'

/** one full pipeline of answers */
export const SERVE_BYTES_PER_PEER = MAX_PIPELINE * MAX_RESPONSE_BYTES
/** eight fetchers at full pipeline: more than a provider's link can carry at once */
export const SERVE_BYTES_TOTAL = 8 * SERVE_BYTES_PER_PEER

interface Waiter { peer: string, n: number, resolve: () => void, reject: (err: Error) => void }

export class ServeBudget {
  private used = 0
  private readonly byPeer = new Map<string, number>()
  private waiters: Waiter[] = []

  constructor (readonly perPeer = SERVE_BYTES_PER_PEER, readonly total = SERVE_BYTES_TOTAL) {
    if (perPeer <= 0 || total < perPeer) throw new Error('serve budget: need 0 < perPeer ≤ total')
  }

  /** bytes charged now (all peers) */
  get inUse (): number { return this.used }
  /** bytes charged now to one peer */
  peerUse (peer: string): number { return this.byPeer.get(peer) ?? 0 }

  /** Resolves once `n` bytes (≤ perPeer) are charged to `peer`; rejects if `signal` aborts first. */
  async acquire (peer: string, n: number, signal?: AbortSignal): Promise<void> {
    if (n > this.perPeer) throw new Error(`cannot charge ${n} bytes: over the per-peer budget (${this.perPeer})`)
    if (this.waiters.length === 0 && this.fits(peer, n)) { this.charge(peer, n); return }
    signal?.throwIfAborted()
    await new Promise<void>((resolve, reject) => {
      const w: Waiter = {
        peer,
        n,
        resolve: () => { signal?.removeEventListener('abort', onAbort); resolve() },
        reject
      }
      const onAbort = (): void => {
        this.waiters = this.waiters.filter(x => x !== w)
        reject(signal?.reason instanceof Error ? signal.reason : new Error('aborted'))
        this.grant() // a waiter behind this one may fit now
      }
      signal?.addEventListener('abort', onAbort, { once: true })
      this.waiters.push(w)
      this.grant()
    })
  }

  release (peer: string, n: number): void {
    if (n <= 0) return
    this.used -= n
    const left = (this.byPeer.get(peer) ?? 0) - n
    if (left <= 0) this.byPeer.delete(peer)
    else this.byPeer.set(peer, left)
    this.grant()
  }

  private fits (peer: string, n: number): boolean {
    return this.used + n <= this.total && (this.byPeer.get(peer) ?? 0) + n <= this.perPeer
  }

  private charge (peer: string, n: number): void {
    this.used += n
    this.byPeer.set(peer, (this.byPeer.get(peer) ?? 0) + n)
  }

  // In arrival order, skipping waiters whose own peer is at its share: one
  // stalled peer never holds up the others queued behind it.
  private grant (): void {
    for (let i = 0; i < this.waiters.length && this.used < this.total;) {
      const w = this.waiters[i]
      if (this.fits(w.peer, w.n)) {
        this.waiters.splice(i, 1)
        this.charge(w.peer, w.n)
        w.resolve()
      } else i++
    }
  }
}
