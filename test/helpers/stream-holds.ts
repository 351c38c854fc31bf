import type { Connection, PeerId, Stream } from '@libp2p/interface'
import { lpStream } from '@libp2p/utils'
import type { CID } from 'multiformats/cid'
import { DISPUTE_PROTOCOL, encodeRequest as encodeDisputeRequest } from '../../node/dispute/transport.js'
import type { Host } from '../../node/p2p/host.js'
import { DHT_PROTOCOL } from '../../node/p2p/limits.js'
import { TASKBOOK_PROTOCOL } from '../../node/roles/task-book.js'
import { MAX_PIPELINE, SHARD_PROTOCOL, encodeRequest as encodeShardRequest } from '../../protocols/shards/index.js'

// How a hostile peer keeps a stream open on a victim's protocols without
// doing any work: each hold opens its stream(s) by hand on a raw libp2p host
// and keeps them open for as long as the victim lets it (every loop bounded
// in count and by `stop`).

export interface HoldTarget {
  victim: PeerId
  /** a block the victim serves (for a read that never finishes) */
  bigBlock: CID
  /** a block the victim does not have */
  missingBlock: CID
}

export type Hold = (h: Host, t: HoldTarget, stop: AbortSignal) => Promise<void>

const sleep = async (ms: number, signal: AbortSignal): Promise<void> => await new Promise(resolve => {
  const done = (): void => { clearTimeout(t); signal.removeEventListener('abort', done); resolve() }
  const t = setTimeout(done, ms)
  signal.addEventListener('abort', done, { once: true })
})
const open = (s: Stream): boolean => s.status === 'open'
/** the connection open to the victim: a hold never redials, and ends with it */
const connectionTo = (h: Host, victim: PeerId): Connection => {
  const conn = h.getConnections(victim).find(c => c.status === 'open')
  if (conn == null) throw new Error('not connected to the victim')
  return conn
}
const streamOn = async (conn: Connection, protocol: string): Promise<Stream> => {
  if (conn.status !== 'open') throw new Error('the victim closed the connection')
  return await conn.newStream(protocol, { signal: AbortSignal.timeout(5000) })
}
/** a frame with its one-byte length prefix (every frame here is under 128 bytes) */
const framed = (b: Uint8Array): Uint8Array => { if (b.length >= 128) throw new Error('frame too long'); return Uint8Array.from([b.length, ...b]) }

/** Until the victim closes it or `stop`: nothing sent. */
const waitOut = async (s: Stream, stop: AbortSignal, maxMs = 120_000): Promise<void> => {
  for (let i = 0; i < maxMs / 250 && open(s) && !stop.aborted; i++) await sleep(250, stop)
}

/** Sends `bytes` one byte every `gapMs`, then waits out the stream. */
const trickle = async (s: Stream, bytes: Uint8Array, gapMs: number, stop: AbortSignal): Promise<void> => {
  for (let i = 0; i < bytes.length && open(s) && !stop.aborted; i++) {
    try { s.send(bytes.subarray(i, i + 1)) } catch { return }
    await sleep(gapMs, stop)
  }
  await waitOut(s, stop)
}

export const HOLDS = {
  /** a shard stream opened and never used */
  idleShard: async (h, t, stop) => { await waitOut(await streamOn(connectionTo(h, t.victim), SHARD_PROTOCOL), stop) },
  /** a shard request sent one byte every 2 s */
  trickleShard: async (h, t, stop) => {
    await trickle(await streamOn(connectionTo(h, t.victim), SHARD_PROTOCOL), framed(encodeShardRequest({ id: 1, cid: t.missingBlock })), 2000, stop)
  },
  /** a full pipeline of 1 MiB blocks asked for, and never read */
  slowLoris: async (h, t, stop) => {
    const s = await streamOn(connectionTo(h, t.victim), SHARD_PROTOCOL)
    s.pause()
    for (let r = 0; r < MAX_PIPELINE; r++) s.send(framed(encodeShardRequest({ id: r + 1, cid: t.bigBlock })))
    await waitOut(s, stop)
  },
  /** one small request every 3 s, answers read (NOT_FOUND): frames move, next to no bytes */
  cheapRequests: async (h, t, stop) => {
    const s = await streamOn(connectionTo(h, t.victim), SHARD_PROTOCOL)
    const lp = lpStream(s)
    for (let r = 0; r < 40 && open(s) && !stop.aborted; r++) {
      try {
        await lp.write(encodeShardRequest({ id: r + 1, cid: t.missingBlock }))
        await lp.read({ signal: AbortSignal.timeout(5000) })
      } catch { return }
      await sleep(3000, stop)
    }
  },
  /** a task-book request answered, and our end of the stream never closed */
  halfOpenTaskbook: async (h, t, stop) => {
    const s = await streamOn(connectionTo(h, t.victim), TASKBOOK_PROTOCOL)
    const lp = lpStream(s)
    await lp.write(new TextEncoder().encode(JSON.stringify({ taskId: 1 })))
    await lp.read({ signal: AbortSignal.timeout(5000) })
    await waitOut(s, stop)
  },
  /** a dispute request sent one byte every 2 s */
  trickleDispute: async (h, t, stop) => {
    await trickle(await streamOn(connectionTo(h, t.victim), DISPUTE_PROTOCOL), framed(encodeDisputeRequest({ d: 1, hello: true })), 2000, stop)
  },
  /** a dispute request answered, and our end of the stream never closed */
  halfOpenDispute: async (h, t, stop) => {
    const s = await streamOn(connectionTo(h, t.victim), DISPUTE_PROTOCOL)
    const lp = lpStream(s)
    await lp.write(encodeDisputeRequest({ d: 1, hello: true }))
    await lp.read({ signal: AbortSignal.timeout(5000) })
    await waitOut(s, stop)
  },
  /** every 4 s a new dispute stream carrying a 100 KiB request nobody needs (refused), left half open: bytes, but no work */
  bigDisputeRequests: async (h, t, stop) => {
    const conn = connectionTo(h, t.victim)
    for (let i = 0; i < 30 && !stop.aborted; i++) {
      let s: Stream
      try { s = await streamOn(conn, DISPUTE_PROTOCOL) } catch { return }
      const lp = lpStream(s, { maxDataLength: 1024 * 1024 })
      try {
        await lp.write(new Uint8Array(100 * 1024).fill(0xa5))
        await lp.read({ signal: AbortSignal.timeout(5000) })
      } catch { return }
      await sleep(4000, stop)
    }
  },
  /** a DHT stream with nothing sent, reopened each time the victim closes it */
  cyclingDht: async (h, t, stop) => {
    const conn = connectionTo(h, t.victim)
    for (let i = 0; i < 20 && !stop.aborted; i++) {
      let s: Stream
      try { s = await streamOn(conn, DHT_PROTOCOL) } catch { return }
      await waitOut(s, stop)
    }
  }
} satisfies Record<string, Hold>

export type HoldName = keyof typeof HOLDS
