import { peerIdFromString } from '@libp2p/peer-id'
import type { Stream } from '@libp2p/interface'
import { lpStream } from '@libp2p/utils'
import { decode, encode } from 'cborg'
import { DISPUTE_PROTOCOL, MAX_MESSAGE_BYTES, decodeSigned, type Signed } from '../../protocols/dispute/index.js'
import type { Host } from '../p2p/host.js'
import { closeStream } from '../p2p/stream-close.js'
import { noteProgress } from '../p2p/stream-progress.js'
import { toError } from '../shards/server.js'

// Request/response on /proofswarm/dispute/2.0.0: one stream per exchange,
// one length-prefixed CBOR frame each way. The challenger asks, the defender
// answers, so only the defender listens.
//   request  {d, hello: true}         "send your tape commitment"
//            {d: 0, prepare: {task, step}}   "a dispute of this (on-chain) step is coming: tape it now"
//            {d, m: Signed}            a challenger move
//   response {m: Signed}               the defender's answer (linked to the move: seq, prev)
//            {end: reason}             the defender ended the game (its own claim, or it is over)
//            {err: reason}             refused (malformed, not a party, not linked to our messages...)

export { DISPUTE_PROTOCOL }
/** a frame: one signed message and a little framing */
export const MAX_FRAME_BYTES = MAX_MESSAGE_BYTES + 4096
/** the whole request must arrive, and the answer be read, within this (a byte at a time does not keep a stream) */
export const FRAME_DEADLINE_MS = 30_000

export interface DisputeRequest { d: number, hello?: true, m?: Signed, prepare?: { task: number, step: number } }
export interface DisputeResponse { m?: Signed, end?: string, err?: string }

export function encodeRequest (r: DisputeRequest): Uint8Array {
  if (r.prepare != null) return encode({ d: r.d, prepare: { task: r.prepare.task, step: r.prepare.step } })
  return encode(r.m != null ? { d: r.d, m: { m: r.m.m, s: r.m.s, a: r.m.a } } : { d: r.d, hello: true })
}

export function decodeRequest (b: Uint8Array): DisputeRequest {
  const o = decode(b) as Record<string, unknown>
  if (typeof o !== 'object' || o === null || !Number.isSafeInteger(o.d) || (o.d as number) < 0) throw new Error('bad dispute request')
  if (o.hello === true) return { d: o.d as number, hello: true }
  const p = o.prepare as { task?: unknown, step?: unknown } | undefined
  if (p != null) {
    if (!Number.isSafeInteger(p.task) || !Number.isSafeInteger(p.step) || (p.task as number) < 0 || (p.step as number) < 0) throw new Error('bad prepare request')
    return { d: o.d as number, prepare: { task: p.task as number, step: p.step as number } }
  }
  return { d: o.d as number, m: decodeSigned(o.m) }
}

export function encodeResponse (r: DisputeResponse): Uint8Array {
  if (r.m != null) return encode({ m: { m: r.m.m, s: r.m.s, a: r.m.a } })
  return encode(r.end != null ? { end: r.end.slice(0, 200) } : { err: String(r.err ?? 'error').slice(0, 200) })
}

export function decodeResponse (b: Uint8Array): DisputeResponse {
  const o = decode(b) as Record<string, unknown>
  if (typeof o !== 'object' || o === null) throw new Error('bad dispute response')
  if (o.m != null) return { m: decodeSigned(o.m) }
  if (typeof o.end === 'string') return { end: o.end }
  return { err: String(o.err ?? 'malformed response') }
}

/** Sends one request to `peerId` and waits up to `timeoutMs` for its answer. */
export async function request (host: Host, peerId: string, req: DisputeRequest, timeoutMs: number): Promise<DisputeResponse> {
  const signal = AbortSignal.timeout(timeoutMs)
  const pid = peerIdFromString(peerId)
  let stream: Stream
  try {
    stream = await host.dialProtocol(pid, DISPUTE_PROTOCOL, { signal })
  } catch (err) {
    // known addresses may be stale: one DHT lookup, then retry
    const info = await host.peerRouting.findPeer(pid, { signal: AbortSignal.timeout(Math.min(timeoutMs, 10_000)) }).catch(() => undefined)
    if (info == null || info.multiaddrs.length === 0) throw toError(err)
    await host.peerStore.merge(pid, { multiaddrs: info.multiaddrs })
    stream = await host.dialProtocol(pid, DISPUTE_PROTOCOL, { signal })
  }
  try {
    const lp = lpStream(stream, { maxDataLength: MAX_FRAME_BYTES })
    const out = encodeRequest(req)
    await lp.write(out, { signal }).catch((e: unknown) => { throw toError(e) })
    const frame = await lp.read({ signal }).catch((e: unknown) => { throw toError(e) })
    noteProgress(stream, frame.byteLength)
    const res = decodeResponse(frame.subarray())
    void closeStream(stream)
    return res
  } catch (err) {
    stream.abort(toError(err))
    throw toError(err)
  }
}

/** Serves requests: `answer` turns one request into one response. */
export async function serve (
  host: Host, answer: (req: DisputeRequest, from: string) => Promise<DisputeResponse>, onError: (err: Error, from: string) => void
): Promise<void> {
  await host.handle(DISPUTE_PROTOCOL, (stream, connection) => {
    const from = connection.remotePeer.toString()
    void (async () => {
      const lp = lpStream(stream, { maxDataLength: MAX_FRAME_BYTES })
      let res: DisputeResponse
      try {
        const frame = await lp.read({ signal: AbortSignal.timeout(FRAME_DEADLINE_MS) })
        res = await answer(decodeRequest(frame.subarray()), from)
      } catch (err) {
        res = { err: toError(err).message }
      }
      // a silent defender (fault) answers nothing: the stream is left to time out
      if (res.err === SILENT) { await new Promise(resolve => setTimeout(resolve, 60_000)); stream.abort(new Error('silent')); return }
      const out = encodeResponse(res)
      await lp.write(out, { signal: AbortSignal.timeout(FRAME_DEADLINE_MS) }).catch((e: unknown) => { throw toError(e) })
      noteProgress(stream, out.byteLength)
      await closeStream(stream)
    })().catch((err: unknown) => { onError(toError(err), from); stream.abort(toError(err)) })
  }, { maxInboundStreams: 16, maxOutboundStreams: 16 })
}

/** What `answer` returns to send nothing at all (fault: silent). */
export const SILENT = '\u0000silent'
