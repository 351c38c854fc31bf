import { lpStream } from '@libp2p/utils'
import type { Connection, Stream } from '@libp2p/interface'
import type { Logger } from 'pino'
import { MAX_PIPELINE, MAX_REQUEST_BYTES, MAX_RESPONSE_BYTES, RESPONSE_HEADER_BYTES, SHARD_PROTOCOL, Status, decodeRequest, encodeResponseHeader } from '../../protocols/shards/index.js'
import type { Host } from '../p2p/host.js'
import { closeStream } from '../p2p/stream-close.js'
import { noteProgress } from '../p2p/stream-progress.js'
import { ServeBudget } from './serve-budget.js'
import type { BlockStore } from './store.js'
import { withHeapGrowth } from '../heap-growth.js'

// Serves blocks on /proofswarm/shards/1.0.0: reads requests one by one and
// answers in order. Requests over MAX_REQUEST_BYTES or malformed ones get an
// ERROR frame and the stream is closed. Fault injection (tests only) comes
// from PROOFSWARM_FAULT_SHARDS: "corrupt" flips a byte in every served block,
// "corrupt:<cid>" in that block only, "delay:<ms>" waits before each answer
// (to kill a provider mid-transfer).

export interface ShardFault {
  corrupt: boolean
  delayMs: number
  /** blocks (CID strings) served with a byte flipped */
  corruptCids?: Set<string>
}

export function parseFault (s: string | undefined): ShardFault {
  const f: ShardFault = { corrupt: false, delayMs: 0 }
  for (const part of (s ?? '').split(',').map(p => p.trim()).filter(Boolean)) {
    if (part === 'corrupt') f.corrupt = true
    else if (/^delay:\d+$/.test(part)) f.delayMs = Number(part.slice(6))
    else if (part.startsWith('corrupt:')) (f.corruptCids ??= new Set()).add(part.slice(8))
    else throw new Error(`PROOFSWARM_FAULT_SHARDS: unknown fault "${part}" (use corrupt, corrupt:<cid>, delay:<ms>)`)
  }
  return f
}

export const MAX_INBOUND_STREAMS = 32
/** an answer not written within this time ends its stream (the fetcher stopped reading) */
export const WRITE_STALL_MS = 30_000
/**
 * a stream with no answer pending ends when no whole request arrived for this
 * long: a stream opened and never used, or a request sent a byte at a time,
 * held a stream slot and exempted its connection from trimming for ever. A
 * fetcher keeps its idle streams 10 s (stream-pool.ts IDLE_MS) and gives up on
 * a provider after 30 s without a block: a fetcher starved that long is
 * already failing its fetch, and the server is never the stricter one.
 */
export const SERVE_IDLE_MS = 30_000

export interface ServerStats { streams: number, served: number, notFound: number, refused: number, bytes: number }

export class ShardServer {
  readonly stats: ServerStats = { streams: 0, served: 0, notFound: 0, refused: 0, bytes: 0 }

  constructor (
    private readonly host: Host,
    private readonly store: BlockStore,
    private readonly log: Logger,
    private readonly fault: ShardFault = { corrupt: false, delayMs: 0 },
    readonly budget = new ServeBudget(),
    private readonly writeStallMs = WRITE_STALL_MS,
    private readonly idleMs = SERVE_IDLE_MS
  ) {}

  async start (): Promise<void> {
    if (this.fault.corrupt || this.fault.delayMs > 0 || this.fault.corruptCids != null) this.log.warn({ fault: this.fault }, 'shard server fault injection is ON (testing only)')
    await this.host.handle(SHARD_PROTOCOL, (stream, connection) => {
      // serving moves checkpoints: V8's raised heap growth while it runs (node/heap-growth.ts)
      void withHeapGrowth(async () => await this.serve(stream, connection)).catch((err: unknown) => {
        this.log.debug({ err: errMessage(err), peer: connection.remotePeer.toString() }, 'shard stream ended with an error')
        stream.abort(toError(err))
      })
    }, { maxInboundStreams: MAX_INBOUND_STREAMS, maxOutboundStreams: MAX_INBOUND_STREAMS })
  }

  async stop (): Promise<void> {
    await this.host.unhandle(SHARD_PROTOCOL).catch(() => {})
  }

  // A reader loop parses requests and starts their LevelDB reads at once; a
  // writer loop sends the answers in request order. Reading block n+1 while
  // block n is on the wire keeps the stream busy (the store read would
  // otherwise leave it idle between blocks). Backpressure: at most
  // MAX_PIPELINE answers are pending per stream, each is charged to the
  // fetcher's share of the serve budget before its block is read, and the
  // reader reads no further request until the charge is granted. An answer
  // that cannot be written within WRITE_STALL_MS (a fetcher that stopped
  // reading) ends the stream, which frees its share; so does a stream with
  // nothing pending that sends no whole request within SERVE_IDLE_MS.
  private async serve (stream: Stream, connection: Connection): Promise<void> {
    this.stats.streams++
    const lp = lpStream(stream, { maxDataLength: MAX_REQUEST_BYTES })
    const peer = connection.remotePeer.toString()
    const pending: Array<{ answer: Promise<{ frame: Uint8Array, last: boolean }>, cost: number }> = []
    const ended = new AbortController()
    // a reset stream must also wake a reader queued for budget (it reads nothing meanwhile)
    const onClose = (): void => { ended.abort(); wakeReader(); wakeWriter() }
    stream.addEventListener('close', onClose, { once: true })
    let readerDone = false
    let wakeWriter: () => void = () => {}
    let wakeReader: () => void = () => {}
    // idle deadline: runs only while nothing is pending and the reader is not queued for budget
    let lastProgress = Date.now()
    let waitingBudget = false
    let idleTimer: NodeJS.Timeout | undefined
    const checkIdle = (): void => {
      const quietMs = Date.now() - lastProgress
      const idle = pending.length === 0 && !waitingBudget
      if (idle && quietMs >= this.idleMs) {
        stream.abort(new Error(`no request within ${this.idleMs} ms`))
        return
      }
      // every event that ends a busy spell moves lastProgress: the deadline stays exact
      idleTimer = setTimeout(checkIdle, idle ? this.idleMs - quietMs : this.idleMs)
      idleTimer.unref()
    }
    checkIdle()

    const reader = async (): Promise<void> => {
      try {
        while (true) {
          while (pending.length >= MAX_PIPELINE && !ended.signal.aborted) await new Promise<void>(resolve => { wakeReader = resolve })
          if (ended.signal.aborted) return
          let frame: { subarray: () => Uint8Array }
          try {
            frame = await lp.read()
          } catch (err) {
            const name = (err as Error)?.name
            if (name === 'UnexpectedEOFError') return
            if (name === 'InvalidDataLengthError' || name === 'InvalidDataLengthLengthError') {
              this.stats.refused++
              this.log.warn({ peer }, `refused an oversized shard request (over ${MAX_REQUEST_BYTES} bytes)`)
              pending.push({ answer: Promise.resolve({ frame: errorFrame(0, `request over ${MAX_REQUEST_BYTES} bytes`), last: true }), cost: 0 })
              return
            }
            throw err
          }
          lastProgress = Date.now()
          let req
          try {
            req = decodeRequest(frame.subarray())
          } catch (err) {
            this.stats.refused++
            pending.push({ answer: Promise.resolve({ frame: errorFrame(0, (err as Error).message), last: true }), cost: 0 })
            return
          }
          waitingBudget = true
          try {
            await this.budget.acquire(peer, MAX_RESPONSE_BYTES, ended.signal)
          } catch { return } finally { // the stream ended while waiting
            waitingBudget = false
            lastProgress = Date.now()
          }
          const entry = { answer: this.answer(req.id, req.cid), cost: MAX_RESPONSE_BYTES }
          // charge what the answer really holds (a NOT_FOUND is 5 bytes)
          entry.answer = entry.answer.then(a => {
            const extra = entry.cost - a.frame.byteLength
            if (extra > 0) { entry.cost -= extra; this.budget.release(peer, extra) }
            return a
          })
          // read failures reach the writer in order; until then this one is not left unobserved
          entry.answer.catch(() => {})
          pending.push(entry)
          wakeWriter()
        }
      } finally {
        readerDone = true
        wakeWriter()
      }
    }

    const readerDonePromise = reader()
    readerDonePromise.catch(() => {})
    try {
      while (true) {
        if (pending.length === 0) {
          if (readerDone) break
          await new Promise<void>(resolve => { wakeWriter = resolve; if (pending.length > 0 || readerDone) resolve() })
          continue
        }
        const head = pending[0]
        const { frame, last } = await head.answer
        // fault injection: one answer per delay, in order (a slow provider)
        if (this.fault.delayMs > 0) await new Promise(resolve => setTimeout(resolve, this.fault.delayMs))
        await write(lp, frame, this.writeStallMs)
        lastProgress = Date.now()
        noteProgress(stream, frame.byteLength)
        pending.shift()
        this.budget.release(peer, head.cost)
        wakeReader()
        if (last) break
      }
    } finally {
      clearTimeout(idleTimer)
      stream.removeEventListener('close', onClose)
      ended.abort()
      wakeReader()
      // answers never written: their charge is released once their reads settle
      for (const p of pending.splice(0)) void p.answer.then(() => {}, () => {}).then(() => this.budget.release(peer, p.cost))
    }
    await readerDonePromise // rethrows a read error (stream reset...)
    await closeStream(stream)
  }

  private async answer (id: number, cid: import('multiformats/cid').CID): Promise<{ frame: Uint8Array, last: boolean }> {
    // the block is read into the frame after room for the header: no 1 MiB copy
    const frame = await this.store.getFramed(cid, RESPONSE_HEADER_BYTES)
    if (frame == null) {
      this.stats.notFound++
      return { frame: encodeResponseHeader(Status.NOT_FOUND, id), last: false }
    }
    frame.set(encodeResponseHeader(Status.OK, id), 0)
    const size = frame.length - RESPONSE_HEADER_BYTES
    // fault injection: flip one byte of the payload (the frame is a fresh buffer, never the stored block)
    if ((this.fault.corrupt || this.fault.corruptCids?.has(cid.toString()) === true) && size > 0) frame[RESPONSE_HEADER_BYTES + (size >> 1)] ^= 0xff
    this.stats.served++
    this.stats.bytes += size
    return { frame, last: false }
  }
}

async function write (lp: { write: (d: Uint8Array, o?: { signal?: AbortSignal }) => Promise<void> }, data: Uint8Array, stallMs: number): Promise<void> {
  try {
    await lp.write(data, { signal: AbortSignal.timeout(stallMs) })
  } catch (err) {
    const e = toError(err)
    if (e.name === 'TimeoutError' || e.name === 'AbortError') throw new Error(`the fetcher read nothing for ${stallMs} ms: stream closed`)
    throw e
  }
}

function errorFrame (id: number, reason: string): Uint8Array {
  return concat(encodeResponseHeader(Status.ERROR, id), new TextEncoder().encode(reason.slice(0, 200)))
}

// one frame = header ‖ payload; a 1 MiB copy costs far less than encrypting it
function concat (a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length)
  out.set(a, 0)
  out.set(b, a.length)
  return out
}

/** libp2p 3 may reject writes with an Event (stream closed) instead of an Error. */
export function toError (err: unknown): Error {
  if (err instanceof Error) return err
  const e = err as { type?: string, error?: unknown }
  if (e?.error instanceof Error) return e.error
  return new Error(`stream ${e?.type ?? 'failure'}`)
}

export function errMessage (err: unknown): string {
  return toError(err).message
}
