import type { CID } from 'multiformats/cid'
import { MAX_PIPELINE } from '../../protocols/shards/index.js'
import { BlockQueue } from './block-queue.js'
import type { Candidate } from './provider-pool.js'
import { NoProviderError, type FetcherDeps, type ProviderSource } from './provider-source.js'
import { concatChunks, isAborted } from './fetch-errors.js'
import { fetchFromProvider, type FetchRun } from './provider-fetch.js'

export { concatChunks } from './fetch-errors.js'

// Fetches a list of blocks from several providers at once. Each provider gets
// one stream with up to `pipeline` requests in flight; every block is checked
// against its CID before it is stored. Faults are charged per block: a
// provider that sends a wrong block is banned for that block (and for
// everything once it has sent MAX_BAD_BLOCKS of them), one that lacks a block
// is not asked for it again in this fetch; both go on serving the others. A
// provider whose connection fails or times out goes back to the pool after a
// backoff (provider-pool.ts): one that restarts is fetched from again. Blocks
// a provider did not deliver go back to the queue for the others. One
// provider's worker is in provider-fetch.ts; here: the queue and the loop that
// starts workers and waits for providers.

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
  if (cids.length === 0) return
  const q = new BlockQueue(cids, deps.blockBanned)
  const { queue } = q
  const run: FetchRun = {
    deps, source, cids, q, opts, pipeline, requestTimeoutMs, sink, finished: new AbortController(), remaining: cids.length, fatal: undefined, wake: () => {}
  }
  const hasWorkFor = (c: Candidate): boolean => q.hasWorkFor(c.peerId)
  const active = new Set<Promise<void>>()

  const start = (c: Candidate): void => {
    const p: Promise<void> = fetchFromProvider(run, c).finally(() => { active.delete(p) })
    active.add(p)
  }

  let idleSince = Date.now()
  while (run.remaining > 0) {
    if (run.fatal != null) throw run.fatal
    if (isAborted(opts.signal)) throw new Error('fetch aborted')
    while (active.size < maxProviders) {
      const c = source.pool.take(hasWorkFor)
      if (c == null) break
      start(c)
    }
    if (active.size > 0) idleSince = Date.now()
    if (run.remaining === 0) break
    const woke = new Promise<void>(resolve => { run.wake = resolve })
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
        throw new NoProviderError(`no usable provider found within ${Math.round(findTimeoutMs / 100) / 10} s (${run.remaining} of ${cids.length} block(s) missing)${detail}`)
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
  run.finished.abort()
  await Promise.allSettled([...active])
  if (run.fatal != null) throw run.fatal
}
