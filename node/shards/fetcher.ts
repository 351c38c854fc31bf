import { peerIdFromString } from '@libp2p/peer-id'
import type { Stream } from '@libp2p/interface'
import type { CID } from 'multiformats/cid'
import {
  MAX_PIPELINE, MAX_RESPONSE_BYTES, RESPONSE_HEADER_BYTES, SHARD_PROTOCOL, Status, chunksMatch, decodeResponse, encodeRequest, errorText
} from '../../protocols/shards/index.js'
import { BlockQueue } from './block-queue.js'
import type { Candidate } from './provider-pool.js'
import { NoProviderError, type FetcherDeps, type ProviderSource } from './provider-source.js'
import { toError } from './server.js'
import { shardLp, type ShardLp } from './stream-pool.js'

// Fetches a list of blocks from several providers at once. Each provider gets
// one stream with up to `pipeline` requests in flight; every block is checked
// against its CID before it is stored. Faults are charged per block: a
// provider that sends a wrong block is banned for that block (and for
// everything once it has sent MAX_BAD_BLOCKS of them), one that lacks a block
// is not asked for it again in this fetch; both go on serving the others. A
// provider whose connection fails or times out goes back to the pool after a
// backoff (provider-pool.ts): one that restarts is fetched from again. Blocks
// a provider did not deliver go back to the queue for the others.

/** a provider answering NOT_FOUND this many times without serving anything is dropped from the fetch */
const MAX_NOT_FOUND_WITHOUT_BLOCK = 8

export interface BlockFetchOptions {
  signal?: AbortSignal
  /** parallel providers (default 4) */
  maxProviders?: number
  /** requests in flight per provider (default 4, at most MAX_PIPELINE) */
  pipeline?: number
  /** one block must arrive within this time or the provider is dropped (default 30 s) */
  requestTimeoutMs?: number
  /** with no usable provider, wait this long for one before failing (default 30 s) */
  findTimeoutMs?: number
  onBlock?: (index: number, size: number, from: string) => void
  /**
   * Where a verified block goes (default: the store). fetchToFile writes it
   * at its offset in the output file instead of copying it into LevelDB.
   * Called once per index, never concurrently for the same index.
   */
  sink?: (index: number, cid: CID, chunks: Uint8Array[], size: number) => Promise<void>
}

/**
 * Fetches `cids` (all must be missing locally) into the store. Resolves when
 * every block is stored; rejects with NoProviderError when no usable provider
 * shows up within findTimeoutMs while blocks remain.
 */
export async function fetchBlocks (deps: FetcherDeps, source: ProviderSource, cids: CID[], opts: BlockFetchOptions = {}): Promise<void> {
  const maxProviders = Math.max(1, opts.maxProviders ?? 4)
  const pipeline = Math.min(Math.max(1, opts.pipeline ?? 4), MAX_PIPELINE)
  const requestTimeoutMs = opts.requestTimeoutMs ?? 30_000
  const findTimeoutMs = opts.findTimeoutMs ?? 30_000
  const sink = opts.sink ?? (async (_i: number, cid: CID, chunks: Uint8Array[]) => await deps.store.put(cid, concatChunks(chunks)))
  let remaining = cids.length
  if (remaining === 0) return
  const q = new BlockQueue(cids, deps.blockBanned)
  const { queue, done, flying } = q
  const finished = new AbortController() // every block stored: stop the lingering workers
  const hasWorkFor = (c: Candidate): boolean => q.hasWorkFor(c.peerId)
  const active = new Set<Promise<void>>()
  let fatal: Error | undefined
  let wake: () => void = () => {}
  const wakeUp = (): void => { wake() }

  const worker = async (c: Candidate): Promise<void> => {
    const stat = source.stat(c.peerId)
    const inflight: Array<{ index: number, id: number }> = []
    let stream: Stream | undefined
    let nextId = 1
    let failed = false
    let lingering = false
    let writing: Promise<void> = Promise.resolve()
    // one controller per provider, its deadline pushed back at every block
    // (cheaper than a combined signal per frame, which showed up in profiles)
    const ctl = new AbortController()
    const timer = setTimeout(() => ctl.abort(timeoutError()), requestTimeoutMs)
    const onAbort = (): void => ctl.abort(opts.signal?.reason)
    opts.signal?.addEventListener('abort', onAbort, { once: true })
    finished.signal.addEventListener('abort', onAbort, { once: true })
    const signal = ctl.signal
    // frames read on the current stream (a pooled stream failing before any is retried)
    let frames = 0
    const dial = async (pid: ReturnType<typeof peerIdFromString>): Promise<Stream> => {
      try {
        return await deps.host.dialProtocol(pid, SHARD_PROTOCOL, { signal })
      } catch (err) {
        // known addresses may be stale (the provider restarted on another
        // port): look the peer up in the DHT once and retry
        if (isAborted(opts.signal)) throw err
        const info = await deps.host.peerRouting.findPeer(pid, { signal: AbortSignal.timeout(Math.min(requestTimeoutMs, 10_000)) }).catch(() => undefined)
        if (info == null || info.multiaddrs.length === 0) throw err
        await deps.host.peerStore.merge(pid, { multiaddrs: info.multiaddrs })
        return await deps.host.dialProtocol(pid, SHARD_PROTOCOL, { signal })
      }
    }
    const requeue = (): void => { q.requeue(inflight) }
    const fetchLoop = async (lp: ShardLp): Promise<void> => {
      frames = 0
      // Each block is verified as it arrives (sync sha256 over the contiguous
      // block: measured faster than WebCrypto here, whose thread-pool jobs queue
      // behind LevelDB's and need a copy) and stored in the background, one put
      // at a time, while the loop reads the next frames.
      let backlog = 0
      while (true) {
        while (inflight.length < pipeline) {
          let index = q.takeFor(c.peerId)
          index ??= q.nextDuplicate(inflight, c.peerId)
          if (index == null) break
          const id = nextId++
          inflight.push({ index, id })
          flying[index]++
          await lp.write(encodeRequest({ id, cid: cids[index] }), { signal })
        }
        if (inflight.length === 0) break
        const frame = await lp.read({ signal })
        frames++
        timer.refresh()
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
        const cid = cids[want.index]
        // a block this provider cannot give: not asked of it again, and back to the queue for the others
        const giveBack = (why: Map<number, Set<string>>): void => {
          inflight.shift()
          q.giveBack(want.index, c.peerId, why)
          wakeUp()
        }
        if (resp.status === Status.NOT_FOUND) {
          stat.notFound++
          if (stat.blocks === 0 && stat.notFound >= MAX_NOT_FOUND_WITHOUT_BLOCK) throw new PermanentError(`provider has none of the ${stat.notFound} blocks asked`)
          giveBack(q.notFound)
          continue
        }
        if (!chunksMatch(cid, chunks)) {
          stat.corrupt++
          giveBack(q.badCopy)
          if (deps.penalise(c.peerId, `sent a block whose bytes do not match ${cid.toString()}`, q.keyOf(want.index)) === 'peer') {
            throw new PermanentError(`served blocks not matching their CIDs (${stat.corrupt} in this fetch; banned)`)
          }
          continue
        }
        inflight.shift()
        flying[want.index]--
        source.pool.succeeded(c.peerId)
        if (done[want.index] === 1) continue // the other copy of an end-game duplicate won
        done[want.index] = 1
        backlog++
        writing = writing.then(async () => {
          try {
            await sink(want.index, cid, chunks, size)
          } catch (err) {
            fatal ??= new Error(`cannot store block ${cid.toString()}: ${(err as Error).message}`)
            throw fatal
          } finally { backlog-- }
          stat.blocks++
          stat.bytes += size
          remaining--
          opts.onBlock?.(want.index, size, c.peerId)
          if (remaining === 0) wakeUp()
        })
        // surface write errors promptly (disk full...) rather than at the end
        writing.catch(() => {})
        // bound the memory held by unverified/unstored blocks
        if (backlog >= pipeline * 2) await writing
      }
    }
    let lp: ShardLp | undefined
    try {
      const pid = peerIdFromString(c.peerId)
      // a pooled stream may have been closed by the provider just now: if it
      // fails before its first answer, the fetch goes on over a fresh stream
      for (let attempt = 0; ; attempt++) {
        const pooled = attempt === 0 ? deps.streams?.take(c.peerId) : undefined
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
          if (pooled == null || frames > 0 || signal.aborted || finished.signal.aborted) throw err
          stream?.abort(toError(err))
          requeue()
          deps.log.debug({ provider: c.peerId, err: toError(err).message }, 'pooled shard stream failed; opening a new one')
        }
      }
      await writing
      // every request answered: the stream can serve the next fetch
      if (deps.streams != null) deps.streams.put(c.peerId, stream!, lp!)
      else await stream!.close().catch(() => {})
    } catch (err) {
      const e = toError(err)
      if (finished.signal.aborted) {
        // all blocks arrived from others while this provider still had some in flight
        lingering = true
        stream?.abort(e)
        return
      }
      failed = true
      const msg = e.name === 'TimeoutError' || e.name === 'AbortError'
        ? (opts.signal?.aborted === true ? 'aborted' : `no answer within ${requestTimeoutMs} ms`)
        : e.message
      stat.error = msg
      stream?.abort(e)
      if (opts.signal?.aborted === true) {
        source.pool.markFailed(c.peerId)
      } else if (e instanceof PermanentError || fatal != null) {
        source.pool.markFailed(c.peerId)
        deps.log.warn({ provider: c.peerId, err: msg, requeued: inflight.length }, 'dropping a shard provider')
      } else {
        // a dropped connection or a timeout may pass (the provider restarts): try it again later
        const delay = source.pool.retryLater(c)
        if (delay != null) stat.retries++
        deps.log.warn({ provider: c.peerId, err: msg, requeued: inflight.length, retryInMs: delay }, delay != null ? 'shard provider failed; trying it again after a backoff' : 'dropping a shard provider (failed too often)')
      }
    } finally {
      clearTimeout(timer)
      opts.signal?.removeEventListener('abort', onAbort)
      finished.signal.removeEventListener('abort', onAbort)
      // let blocks already received finish their check and store (or go back to the queue)
      await writing.catch(() => {})
      requeue()
      if (!failed) {
        if (!lingering) deps.reward(c.peerId)
        source.pool.release(c)
      }
      wakeUp()
    }
  }

  const start = (c: Candidate): void => {
    const p: Promise<void> = worker(c).finally(() => { active.delete(p) })
    active.add(p)
  }

  let idleSince = Date.now()
  while (remaining > 0) {
    if (fatal != null) throw fatal
    if (isAborted(opts.signal)) throw new Error('fetch aborted')
    while (active.size < maxProviders) {
      const c = source.pool.take(hasWorkFor)
      if (c == null) break
      start(c)
    }
    if (active.size > 0) idleSince = Date.now()
    if (remaining === 0) break
    const woke = new Promise<void>(resolve => { wake = resolve })
    if (active.size === 0) {
      // nobody is working: wait (bounded) for a provider to appear; with only
      // explicit providers, none lacking these blocks, and none backing off,
      // none can appear: waiting would only delay the answer
      const exhausted = !source.discovering && source.pool.retrying === 0
      const left = exhausted ? 0 : findTimeoutMs - (Date.now() - idleSince)
      if (left <= 0 || !(await source.pool.wait(left, opts.signal, hasWorkFor))) {
        if (isAborted(opts.signal)) throw new Error('fetch aborted')
        const tried = [...source.stats.values()].filter(s => s.error != null)
        let detail = tried.length > 0 ? `; ${tried.length} provider(s) failed: ${tried.map(s => `${s.peerId.slice(-8)}: ${s.error ?? ''}`).join('; ')}` : ''
        const banned = [...source.pool.excluded]
        if (banned.length > 0) detail += `; ignored ${banned.length} provider(s) banned for serving bad blocks: ${banned.map(id => id.slice(-8)).join(', ')}`
        detail += q.missingDetail()
        throw new NoProviderError(`no usable provider found within ${Math.round(findTimeoutMs / 100) / 10} s (${remaining} of ${cids.length} block(s) missing)${detail}`)
      }
      continue
    }
    const waits: Array<Promise<unknown>> = [woke, ...active]
    const cancel = new AbortController()
    // a free worker slot and queued work: a new provider would be used at once
    // (the pool is empty here, else the loop above would have started one)
    if (queue.length > 0 && active.size < maxProviders) waits.push(source.pool.wait(60_000, cancel.signal, hasWorkFor))
    await Promise.race(waits)
    cancel.abort()
  }
  finished.abort()
  await Promise.allSettled([...active])
  if (fatal != null) throw fatal
}

/** A provider fault that will not pass by trying again (protocol error, refusal, ban). */
class PermanentError extends Error {}

export function concatChunks (chunks: Uint8Array[]): Uint8Array {
  if (chunks.length === 1) return chunks[0]
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0))
  let off = 0
  for (const c of chunks) { out.set(c, off); off += c.length }
  return out
}

function timeoutError (): Error {
  const e = new Error('no answer in time')
  e.name = 'TimeoutError'
  return e
}

function isAborted (signal?: AbortSignal): boolean {
  return signal?.aborted === true
}
