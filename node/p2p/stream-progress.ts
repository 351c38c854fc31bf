import type { Stream } from '@libp2p/interface'

// What makes a connection busy for the trimmer (conn-trim.ts): a stream that
// moves data, not one that is merely open. An open stream costs its holder
// nothing, so "busy = a stream is open" let any peer escape trimming forever
// by holding one (a request never sent, an answer read one byte at a time, a
// stream left half-open). The protocols this node speaks itself (shards,
// disputes, the task book) note here every whole answer they write to a peer
// and every whole answer they read from one: what is served, never what is
// asked (a peer sending big requests nobody needs does no work for anyone).
// A stream is busy while those answers add up to BUSY_MIN_BYTES within the
// last one to two windows of BUSY_WINDOW_MS, the pace of a slow but honest
// transfer. Streams of protocols the node does not frame itself (the DHT, a
// stream still negotiating) are busy only if this node opened them and for
// UNTRACKED_BUSY_MS: a query of ours, never one a remote peer holds open.

/** the window progress is counted in (the trimmer's interval) */
export const BUSY_WINDOW_MS = 10_000
/** bytes of whole answers a stream must carry within one to two windows to count as busy: ≥ 3.2 KiB/s */
export const BUSY_MIN_BYTES = 64 * 1024
/** how long a stream this node opened on a protocol it does not frame itself protects its connection */
export const UNTRACKED_BUSY_MS = 30_000

export interface Progress {
  /** the window (floor(time / windowMs)) `bytes` were counted in */
  window: number
  bytes: number
  /** bytes of the window before it */
  previous: number
}

export interface BusyPolicy { windowMs: number, minBytes: number, untrackedMs: number }

export const BUSY_POLICY: BusyPolicy = { windowMs: BUSY_WINDOW_MS, minBytes: BUSY_MIN_BYTES, untrackedMs: UNTRACKED_BUSY_MS }

/** `p` after `bytes` more at time `now` (pure). */
export function addProgress (p: Progress | undefined, bytes: number, now: number, windowMs: number): Progress {
  const w = Math.floor(now / windowMs)
  if (p == null || p.window < w - 1) return { window: w, bytes, previous: 0 }
  if (p.window === w - 1) return { window: w, bytes, previous: p.bytes }
  return { window: p.window, bytes: p.bytes + bytes, previous: p.previous }
}

/** bytes moved in the current and the previous window at `now` (pure) */
export function recentBytes (p: Progress | undefined, now: number, windowMs: number): number {
  if (p == null) return 0
  const w = Math.floor(now / windowMs)
  if (p.window === w) return p.bytes + p.previous
  if (p.window === w - 1) return p.bytes
  return 0
}

/** What the trimmer knows of one stream. */
export interface StreamView {
  direction: 'inbound' | 'outbound'
  protocol?: string
  /** ms the stream has been open */
  ageMs: number
  /** undefined: no protocol of ours noted anything on it */
  progress?: Progress
}

/** Is this stream work in progress that its connection must not be closed under? (pure) */
export function streamBusy (s: StreamView, now: number, policy: BusyPolicy = BUSY_POLICY): boolean {
  if (s.progress != null) return recentBytes(s.progress, now, policy.windowMs) >= policy.minBytes
  return s.direction === 'outbound' && s.ageMs < policy.untrackedMs
}

const progress = new WeakMap<Stream, Progress>()

/** Records a whole answer of `bytes` written (a server) or read (a client) on `stream` by one of this node's protocols. */
export function noteProgress (stream: Stream, bytes: number, now = Date.now()): void {
  progress.set(stream, addProgress(progress.get(stream), bytes, now, BUSY_WINDOW_MS))
}

/** The trimmer's view of a live stream. */
export function viewStream (stream: Stream, now = Date.now()): StreamView {
  return { direction: stream.direction, protocol: stream.protocol, ageMs: now - stream.timeline.open, progress: progress.get(stream) }
}
