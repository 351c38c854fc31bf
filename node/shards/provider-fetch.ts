import { peerIdFromString } from '@libp2p/peer-id'
import type { Stream } from '@libp2p/interface'
import type { CID } from 'multiformats/cid'
import {
  MAX_RESPONSE_BYTES, RESPONSE_HEADER_BYTES, SHARD_PROTOCOL, Status, chunksMatch, decodeResponse, encodeRequest, errorText
} from '../../protocols/shards/index.js'
import type { BlockQueue } from './block-queue.js'
import type { Candidate } from './provider-pool.js'
import type { FetcherDeps, ProviderSource } from './provider-source.js'
import { toError } from './server.js'
import { closeStream } from '../p2p/stream-close.js'
import { noteProgress } from '../p2p/stream-progress.js'
import { shardLp, type ShardLp } from './stream-pool.js'
import { PermanentError, concatChunks, isAborted, timeoutError } from './fetch-errors.js'

// One provider's share of a block fetch (fetcher.ts): one stream with up to
// `pipeline` requests in flight, every block checked against its CID, faults
// charged per block, and the provider's fate at the end (rewarded, retried
// after a backoff, or dropped).

/** a provider answering NOT_FOUND this many times without serving anything is dropped from the fetch */
const MAX_NOT_FOUND_WITHOUT_BLOCK = 8

/** What every provider worker of one fetch shares with the fetch's loop. */
export interface FetchRun {
  readonly deps: FetcherDeps
  readonly source: ProviderSource
  readonly cids: CID[]
  readonly q: BlockQueue
  readonly opts: { signal?: AbortSignal, onBlock?: (index: number, size: number, from: string) => void }
  readonly pipeline: number
  readonly requestTimeoutMs: number
  readonly sink: (index: number, cid: CID, chunks: Uint8Array[], size: number) => Promise<void>
  /** aborted once every block is stored: stops the lingering workers */
  readonly finished: AbortController
  /** blocks not stored yet */
  remaining: number
  /** a store failure: ends the whole fetch */
  fatal: Error | undefined
  /** wakes the fetch's loop (a worker ended, a block was given back, the last block was stored) */
  wake: () => void
}

export async function fetchFromProvider (run: FetchRun, c: Candidate): Promise<void> {
  const stat = run.source.stat(c.peerId)
  const inflight: Array<{ index: number, id: number }> = []
  let stream: Stream | undefined
  let nextId = 1
  let failed = false
  let lingering = false
  let writing: Promise<void> = Promise.resolve()
  // one controller per provider, its deadline pushed back at every block
  // (cheaper than a combined signal per frame, which showed up in profiles)
  const ctl = new AbortController()
  const timer = setTimeout(() => ctl.abort(timeoutError()), run.requestTimeoutMs)
  const onAbort = (): void => ctl.abort(run.opts.signal?.reason)
  run.opts.signal?.addEventListener('abort', onAbort, { once: true })
  run.finished.signal.addEventListener('abort', onAbort, { once: true })
  const signal = ctl.signal
  // frames read on the current stream (a pooled stream failing before any is retried)
  let frames = 0
  const dial = async (pid: ReturnType<typeof peerIdFromString>): Promise<Stream> => {
    try {
      return await run.deps.host.dialProtocol(pid, SHARD_PROTOCOL, { signal })
    } catch (err) {
      // known addresses may be stale (the provider restarted on another
      // port): look the peer up in the DHT once and retry
      if (isAborted(run.opts.signal)) throw err
      const info = await run.deps.host.peerRouting.findPeer(pid, { signal: AbortSignal.timeout(Math.min(run.requestTimeoutMs, 10_000)) }).catch(() => undefined)
      if (info == null || info.multiaddrs.length === 0) throw err
      await run.deps.host.peerStore.merge(pid, { multiaddrs: info.multiaddrs })
      return await run.deps.host.dialProtocol(pid, SHARD_PROTOCOL, { signal })
    }
  }
  const requeue = (): void => { run.q.requeue(inflight) }
  const fetchLoop = async (lp: ShardLp): Promise<void> => {
    frames = 0
    // Each block is verified as it arrives (sync sha256 over the contiguous
    // block: measured faster than WebCrypto here, whose thread-pool jobs queue
    // behind LevelDB's and need a copy) and stored in the background, one put
    // at a time, while the loop reads the next frames.
    let backlog = 0
    while (true) {
      while (inflight.length < run.pipeline) {
        let index = run.q.takeFor(c.peerId)
        index ??= run.q.nextDuplicate(inflight, c.peerId)
        if (index == null) break
        const id = nextId++
        inflight.push({ index, id })
        run.q.flying[index]++
        await lp.write(encodeRequest({ id, cid: run.cids[index] }), { signal })
      }
      if (inflight.length === 0) break
      const frame = await lp.read({ signal })
      frames++
      timer.refresh()
      if (stream != null) noteProgress(stream, frame.byteLength)
      // the header is decoded from a 5-byte copy; the payload stays in the
      // chunks it arrived in: a 1 MiB copy per block was ~20% of the
      // fetcher's garbage, and GC most of its CPU
      if (frame.byteLength > MAX_RESPONSE_BYTES) throw new Error(`response over ${MAX_RESPONSE_BYTES} bytes`)
      const resp = decodeResponse(frame.subarray(0, Math.min(frame.byteLength, RESPONSE_HEADER_BYTES)))
      const chunks = [...frame.sublist(RESPONSE_HEADER_BYTES)]
      const size = frame.byteLength - RESPONSE_HEADER_BYTES
      const want = inflight[0]
      if (resp.status === Status.ERROR) throw new PermanentError(`provider refused: ${errorText(concatChunks(chunks))}`)
      if (resp.id !== want.id) throw new PermanentError(`protocol error: answer ${resp.id} for request ${want.id}`)
      const cid = run.cids[want.index]
      // a block this provider cannot give: not asked of it again, and back to the queue for the others
      const giveBack = (why: Map<number, Set<string>>): void => {
        inflight.shift()
        run.q.giveBack(want.index, c.peerId, why)
        run.wake()
      }
      if (resp.status === Status.NOT_FOUND) {
        stat.notFound++
        if (stat.blocks === 0 && stat.notFound >= MAX_NOT_FOUND_WITHOUT_BLOCK) throw new PermanentError(`provider has none of the ${stat.notFound} blocks asked`)
        giveBack(run.q.notFound)
        continue
      }
      if (!chunksMatch(cid, chunks)) {
        stat.corrupt++
        giveBack(run.q.badCopy)
        if (run.deps.penalise(c.peerId, `sent a block whose bytes do not match ${cid.toString()}`, run.q.keyOf(want.index)) === 'peer') {
          throw new PermanentError(`served blocks not matching their CIDs (${stat.corrupt} in this fetch; banned)`)
        }
        continue
      }
      inflight.shift()
      run.q.flying[want.index]--
      run.source.pool.succeeded(c.peerId)
      if (run.q.done[want.index] === 1) continue // the other copy of an end-game duplicate won
      run.q.done[want.index] = 1
      backlog++
      writing = writing.then(async () => {
        try {
          await run.sink(want.index, cid, chunks, size)
        } catch (err) {
          run.fatal ??= new Error(`cannot store block ${cid.toString()}: ${(err as Error).message}`)
          throw run.fatal
        } finally { backlog-- }
        stat.blocks++
        stat.bytes += size
        run.remaining--
        run.opts.onBlock?.(want.index, size, c.peerId)
        if (run.remaining === 0) run.wake()
      })
      // surface write errors promptly (disk full...) rather than at the end
      writing.catch(() => {})
      // bound the memory held by unverified/unstored blocks
      if (backlog >= run.pipeline * 2) await writing
    }
  }
  let lp: ShardLp | undefined
  try {
    const pid = peerIdFromString(c.peerId)
    // a pooled stream may have been closed by the provider just now: if it
    // fails before its first answer, the fetch goes on over a fresh stream
    for (let attempt = 0; ; attempt++) {
      const pooled = attempt === 0 ? run.deps.streams?.take(c.peerId) : undefined
      try {
        if (pooled != null) {
          stream = pooled.stream
          lp = pooled.lp
        } else {
          stream = await dial(pid)
          lp = shardLp(stream)
        }
        await fetchLoop(lp)
        break
      } catch (err) {
        if (pooled == null || frames > 0 || signal.aborted || run.finished.signal.aborted) throw err
        stream?.abort(toError(err))
        requeue()
        run.deps.log.debug({ provider: c.peerId, err: toError(err).message }, 'pooled shard stream failed; opening a new one')
      }
    }
    await writing
    // every request answered: the stream can serve the next fetch
    if (run.deps.streams != null) run.deps.streams.put(c.peerId, stream!, lp!)
    else void closeStream(stream!)
  } catch (err) {
    const e = toError(err)
    if (run.finished.signal.aborted) {
      // all blocks arrived from others while this provider still had some in flight
      lingering = true
      stream?.abort(e)
      return
    }
    failed = true
    const msg = e.name === 'TimeoutError' || e.name === 'AbortError'
      ? (run.opts.signal?.aborted === true ? 'aborted' : `no answer within ${run.requestTimeoutMs} ms`)
      : e.message
    stat.error = msg
    stream?.abort(e)
    if (run.opts.signal?.aborted === true) {
      run.source.pool.markFailed(c.peerId)
    } else if (e instanceof PermanentError || run.fatal != null) {
      run.source.pool.markFailed(c.peerId)
      run.deps.log.warn({ provider: c.peerId, err: msg, requeued: inflight.length }, 'dropping a shard provider')
    } else {
      // a dropped connection or a timeout may pass (the provider restarts): try it again later
      const delay = run.source.pool.retryLater(c)
      if (delay != null) stat.retries++
      run.deps.log.warn({ provider: c.peerId, err: msg, requeued: inflight.length, retryInMs: delay }, delay != null ? 'shard provider failed; trying it again after a backoff' : 'dropping a shard provider (failed too often)')
    }
  } finally {
    clearTimeout(timer)
    run.opts.signal?.removeEventListener('abort', onAbort)
    run.finished.signal.removeEventListener('abort', onAbort)
    // let blocks already received finish their check and store (or go back to the queue)
    await writing.catch(() => {})
    requeue()
    if (!failed) {
      if (!lingering) run.deps.reward(c.peerId)
      run.source.pool.release(c)
    }
    run.wake()
  }
}
