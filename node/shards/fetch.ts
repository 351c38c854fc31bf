import type { CID } from 'multiformats/cid'
import { DAG_CBOR_CODEC, decodeManifest, parseShardCid, type Manifest } from '../../protocols/shards/index.js'
import { concatChunks, fetchBlocks, type BlockFetchOptions } from './fetcher.js'
import { ProviderSource, type FetcherDeps } from './provider-source.js'
import { readShard } from './local.js'
import type { ShardProviders } from './providers.js'
import type { ShardRetention } from './retention.js'
import type { FetchOptions, FetchResult, ShardContext } from './types.js'

// Fetching shards from the swarm into the store: verified block by block,
// resumed from the blocks already here, one fetch per root at a time.

/** What fetchBytes holds in memory at most, unless its caller says otherwise. */
export const MAX_FETCH_BYTES = 128 * 1024 * 1024

/** A shard whose manifest declares more than its fetcher's bound: refused before any block is fetched. */
export class ShardTooLargeError extends Error {
  constructor (root: string, size: number, max: number) {
    super(`${root} declares ${size} bytes, more than the ${max} expected of it: not fetched`)
    this.name = 'ShardTooLargeError'
  }
}

/** What every fetch starts with: timing, the abort signal, the providers. */
export interface FetchStart { key: string, started: number, cpu0: NodeJS.CpuUsage, signal: AbortSignal, deps: FetcherDeps, source: ProviderSource }

export interface LoadedManifest { manifest: Manifest, haveManifest: boolean, blockOpts: BlockFetchOptions, startSource: () => void }

export class ShardFetch {
  /** fetches under way, by root (fetchToFile registers its own here too) */
  readonly running = new Map<string, Promise<FetchResult>>()

  constructor (private readonly ctx: ShardContext, private readonly retention: ShardRetention, private readonly providers: ShardProviders) {}

  /**
   * Fetches a shard into the local store (blocks already here are not
   * fetched again, so a fetch interrupted by a restart resumes), then
   * announces this peer as a provider too.
   */
  async fetch (root: CID | string, opts: FetchOptions = {}): Promise<FetchResult> {
    const cid = typeof root === 'string' ? parseShardCid(root) : root
    if (cid.code !== DAG_CBOR_CODEC) throw new Error(`${cid.toString()} is a raw block, not a shard root (manifest)`)
    const key = cid.toString()
    const running = this.running.get(key)
    if (running != null) return await running
    const p = this.doFetch(cid, opts).finally(() => this.running.delete(key))
    this.running.set(key, p)
    return await p
  }

  /** Fetches a shard (if needed) and returns its content: at most `maxBytes` (default MAX_FETCH_BYTES). */
  async fetchBytes (root: CID | string, opts: FetchOptions = {}): Promise<Uint8Array> {
    const o = { ...opts, maxBytes: opts.maxBytes ?? MAX_FETCH_BYTES }
    const r = await this.fetch(root, o)
    // a fetch of the same root already under way (started without this bound) is joined, not re-checked
    if (r.size > o.maxBytes) throw new ShardTooLargeError(r.cid, r.size, o.maxBytes)
    return await readShard(this.ctx.store, root)
  }

  /** Starts a fetch; the root is protected from GC until the caller's `end`. */
  begin (root: CID, opts: FetchOptions): FetchStart {
    const key = root.toString()
    const started = Date.now()
    const cpu0 = process.cpuUsage()
    const signal = opts.signal != null ? AbortSignal.any([opts.signal, this.ctx.stopped]) : this.ctx.stopped
    const deps = this.providers.fetcherDeps()
    const source = new ProviderSource(deps, id => this.providers.isBanned(id))
    this.retention.protect(key, +1)
    return { key, started, cpu0, signal, deps, source }
  }

  end (f: FetchStart): void {
    f.source.close()
    this.retention.protect(f.key, -1)
  }

  private async doFetch (root: CID, opts: FetchOptions): Promise<FetchResult> {
    const f = this.begin(root, opts)
    const { key, started, cpu0, deps, source } = f
    const { store, log } = this.ctx
    try {
      const { manifest, haveManifest, blockOpts, startSource } = await this.loadManifest(root, opts, f)
      const m = manifest
      await this.retention.upsertRoot(key, m, false, 'fetched', opts)
      const missing = await store.missing(m)
      const alreadyHad = m.blocks.length - missing.length
      let haveBytes = m.size - missing.reduce((s, i) => s + m.blocks[i].size, 0)
      let fetchedBytes = 0
      let haveBlocks = alreadyHad
      if (alreadyHad > 0 && haveManifest) log.info({ root: key, alreadyHad, missing: missing.length }, 'resuming a shard fetch')
      const progress = (): void => opts.onProgress?.({
        root: key, totalBlocks: m.blocks.length, haveBlocks, totalBytes: m.size, haveBytes, fetchedBytes, providers: source.stats.size
      })
      progress()
      const transferStart = Date.now()
      if (missing.length > 0) {
        startSource()
        await fetchBlocks(deps, source, missing.map(i => m.blocks[i].cid), {
          ...blockOpts,
          onBlock: (_i, size) => { haveBlocks++; haveBytes += size; fetchedBytes += size; progress() }
        })
      }
      const rec = await store.getRoot(key)
      if (rec != null && !rec.complete) await store.putRoot({ ...rec, complete: true })
      // announce new content only: reading a local shard again must not spam the DHT
      if (opts.provide !== false && (missing.length > 0 || rec?.complete !== true)) this.providers.provideInBackground(root)
      const result = fetchResult(key, m, { alreadyHad, fetched: missing.length, fetchedBytes, started, transferStart, cpu0, source })
      log.info({ ...result, providers: result.providers.map(p => ({ ...p, peerId: p.peerId.slice(-8) })) }, 'shard fetched')
      return result
    } finally {
      this.end(f)
    }
  }

  // The manifest: local, or fetched (from one provider) into the store. The
  // provider source starts lazily: a local manifest with every block here needs no lookup.
  async loadManifest (root: CID, opts: FetchOptions, { signal, deps, source }: FetchStart): Promise<LoadedManifest> {
    const key = root.toString()
    const { store } = this.ctx
    let started = false
    const startSource = (): void => {
      if (started) return
      started = true
      if (opts.providers != null && opts.providers.length > 0) source.addExplicit(opts.providers)
      else {
        if (opts.preferred != null) source.addExplicit(opts.preferred)
        source.discover(root, signal)
      }
    }
    const blockOpts: BlockFetchOptions = {
      signal,
      maxProviders: opts.maxProviders,
      pipeline: opts.pipeline,
      findTimeoutMs: opts.findTimeoutMs,
      requestTimeoutMs: opts.requestTimeoutMs
    }
    let manifest = await store.manifest(root)
    const haveManifest = manifest != null
    if (manifest == null) {
      startSource()
      await fetchBlocks(deps, source, [root], { ...blockOpts, maxProviders: 1 })
      const bytes = await store.get(root)
      try {
        manifest = decodeManifest(bytes!)
      } catch (err) {
        await store.deleteBlocks([key])
        throw new Error(`${key} is not a shard manifest: ${(err as Error).message}`)
      }
    }
    if (opts.maxBytes !== undefined && manifest.size > opts.maxBytes) throw new ShardTooLargeError(key, manifest.size, opts.maxBytes)
    return { manifest, haveManifest, blockOpts, startSource }
  }

  /**
   * Some blocks of a shard, by index in its manifest (chunks of an erasure-coded
   * checkpoint: a verifier's samples, or any k of them to rebuild it). Returns
   * the blocks it got within the options' timeouts; missing ones are absent.
   */
  async fetchBlocksOf (root: CID | string, indices: readonly number[], opts: FetchOptions = {}): Promise<Map<number, Uint8Array>> {
    const cid = typeof root === 'string' ? parseShardCid(root) : root
    const f = this.begin(cid, opts)
    const { key, signal, deps, source } = f
    const out = new Map<number, Uint8Array>()
    try {
      const { manifest, blockOpts, startSource } = await this.loadManifest(cid, opts, f)
      const want = [...new Set(indices)].filter(i => Number.isInteger(i) && i >= 0 && i < manifest.blocks.length)
      // kept in memory, not written to the store: a sample is checked and dropped
      const some = async (idx: number[], src: ProviderSource, o: BlockFetchOptions): Promise<void> => {
        await fetchBlocks(deps, src, idx.map(i => manifest.blocks[i].cid), { ...o, sink: async (j, _cid, chunks) => { out.set(idx[j], concatChunks(chunks)) } })
          .catch((err: Error) => { this.ctx.log.debug({ root: key, err: err.message }, 'not every requested block was fetched') })
      }
      if (want.length > 0) {
        startSource()
        await some(want, source, blockOpts)
      }
      // a provider that lacks one block is dropped with the blocks queued behind it: ask for each
      // remaining block on its own (a short wait each), so that exactly the blocks nobody has are missing
      let rest = want.filter(i => !out.has(i))
      if (rest.length > 0) {
        const single = { ...blockOpts, findTimeoutMs: Math.min(blockOpts.findTimeoutMs ?? 30_000, 2_000) }
        while (rest.length > 0 && !signal.aborted) {
          await Promise.all(rest.splice(0, 8).map(async i => {
            const src = new ProviderSource(deps, id => this.providers.isBanned(id))
            try {
              if (opts.providers != null && opts.providers.length > 0) src.addExplicit(opts.providers)
              else src.discover(cid, signal)
              await some([i], src, single)
            } finally { src.close() }
          }))
        }
        rest = []
      }
      return out
    } finally {
      this.end(f)
    }
  }
}

function cpuMs (u: NodeJS.CpuUsage): number { return (u.user + u.system) / 1000 }

/** What a fetch reports (fetch and fetchToFile alike). */
export function fetchResult (
  key: string, m: Manifest,
  f: { alreadyHad: number, fetched: number, fetchedBytes: number, started: number, transferStart: number, cpu0: NodeJS.CpuUsage, source: ProviderSource }
): FetchResult {
  const durationMs = Date.now() - f.started
  return {
    cid: key,
    name: m.name,
    kind: m.kind,
    size: m.size,
    blocks: m.blocks.length,
    alreadyHad: f.alreadyHad,
    fetchedBlocks: f.fetched,
    fetchedBytes: f.fetchedBytes,
    durationMs,
    mibPerSecond: Math.round(f.fetchedBytes / 1048576 / Math.max(durationMs, 1) * 1000 * 10) / 10,
    firstProviderMs: f.source.firstFoundAt != null ? f.source.firstFoundAt - f.started : undefined,
    transferMs: Date.now() - f.transferStart,
    cpuMs: Math.round(cpuMs(process.cpuUsage(f.cpu0))),
    providers: [...f.source.stats.values()]
  }
}
