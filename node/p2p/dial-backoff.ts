/**
 * Per-peer backoff for the peer keeper's dials. On a machine starved of CPU,
 * noise handshakes time out; a keeper that redials the same unreachable peers
 * on every round spends the CPU its swarm needs on handshakes that fail again
 * (on both ends), and the swarm falls apart. A failed peer waits `minMs`,
 * doubled after each further failure up to `maxMs`; a success forgets it.
 */
export class DialBackoff {
  private readonly failures = new Map<string, { until: number, gapMs: number }>()

  constructor (private readonly minMs = 10_000, private readonly maxMs = 300_000, private readonly now: () => number = Date.now) {}

  /** may this peer be dialled now? */
  ready (peerId: string): boolean {
    return (this.failures.get(peerId)?.until ?? 0) <= this.now()
  }

  failed (peerId: string): void {
    const prev = this.failures.get(peerId)
    const gapMs = prev == null ? this.minMs : Math.min(prev.gapMs * 2, this.maxMs)
    this.failures.set(peerId, { until: this.now() + gapMs, gapMs })
  }

  succeeded (peerId: string): void { this.failures.delete(peerId) }

  /** peers in backoff (for status and tests) */
  get size (): number { return this.failures.size }
}

/** Fisher–Yates: candidates in random order, so one unreachable group cannot hold every round's dial slots */
export function shuffled<T> (xs: T[], rand: () => number = Math.random): T[] {
  const a = [...xs]
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [a[i], a[j]] = [a[j], a[i]]
  }
  return a
}
