import { lpStream } from '@libp2p/utils'
import type { Stream } from '@libp2p/interface'
import { MAX_PIPELINE, MAX_RESPONSE_BYTES } from '../../protocols/shards/index.js'
import { closeStream } from '../p2p/stream-close.js'

// Idle shard streams kept open per provider for the next fetch. A verifier
// fetches each checkpoint as two shards (manifest, then blocks) of two
// files: with a stream per fetch that was four stream opens per checkpoint,
// each a multistream-select exchange, SYN/FIN frames and a yamux window
// update for every one of those small frames — about half the frames (each
// two socket writes and a noise encryption) on the wire. The server answers
// any number of requests on a stream, so a stream whose requests were all
// answered is handed to the next fetch. Streams idle for IDLE_MS are closed.

export type ShardLp = ReturnType<typeof lpStream<Stream>>

export interface PooledStream { stream: Stream, lp: ShardLp }

export const IDLE_MS = 10_000
/** idle streams kept per provider (concurrent fetches from one provider each need their own) */
export const IDLE_PER_PEER = 2

/** A length-prefixed shard stream, buffering enough for a full pipeline. */
export function shardLp (stream: Stream): ShardLp {
  return lpStream(stream, { maxDataLength: MAX_RESPONSE_BYTES, maxBufferSize: (MAX_PIPELINE + 1) * (MAX_RESPONSE_BYTES + 8) })
}

export function usable (s: Stream): boolean {
  return s.status === 'open' && s.writeStatus === 'writable' && s.readStatus === 'readable' && s.remoteWriteStatus === 'writable'
}

export class StreamPool {
  private readonly idle = new Map<string, Array<PooledStream & { timer: NodeJS.Timeout }>>()
  private closed = false

  constructor (private readonly idleMs = IDLE_MS, private readonly perPeer = IDLE_PER_PEER) {}

  /** An idle open stream to `peerId`, or undefined. */
  take (peerId: string): PooledStream | undefined {
    const list = this.idle.get(peerId)
    while (list != null && list.length > 0) {
      const p = list.pop()!
      clearTimeout(p.timer)
      if (usable(p.stream)) {
        if (list.length === 0) this.idle.delete(peerId)
        return { stream: p.stream, lp: p.lp }
      }
      p.stream.abort(new Error('stale pooled stream'))
    }
    this.idle.delete(peerId)
    return undefined
  }

  /** Keeps a stream with no request outstanding for the next fetch (or closes it). */
  put (peerId: string, stream: Stream, lp: ShardLp): void {
    const list = this.idle.get(peerId) ?? []
    if (this.closed || !usable(stream) || list.length >= this.perPeer) {
      void closeStream(stream)
      return
    }
    const entry = {
      stream,
      lp,
      timer: setTimeout(() => {
        const l = this.idle.get(peerId)
        const i = l?.indexOf(entry) ?? -1
        if (i >= 0) l!.splice(i, 1)
        if (l?.length === 0) this.idle.delete(peerId)
        void closeStream(stream)
      }, this.idleMs)
    }
    entry.timer.unref()
    list.push(entry)
    this.idle.set(peerId, list)
  }

  close (): void {
    this.closed = true
    for (const list of this.idle.values()) {
      for (const p of list) { clearTimeout(p.timer); void closeStream(p.stream) }
    }
    this.idle.clear()
  }
}
