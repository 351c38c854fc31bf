import type { CID } from 'multiformats/cid'
import type { Logger } from 'pino'
import type { ShardMeta } from '../../protocols/shards/index.js'
import type { Host } from '../p2p/host.js'
import { ShardAdder } from './add.js'
import type { GcResult } from './collector.js'
import { ShardFetch } from './fetch.js'
import { ShardFileFetch } from './fetch-to-file.js'
import { NoProviderError, type ProviderStat } from './provider-source.js'
import { hasShard, readShard, writeShardFile } from './local.js'
import { ShardProviders } from './providers.js'
import { ShardRetention } from './retention.js'
import { ShardServer, type ShardFault } from './server.js'
import { BlockStore } from './store.js'
import type { BlockRef, RetentionHold, RootRecord } from './root-records.js'
import type { AddFileOptions, AddOptions, AddResult, FetchOptions, FetchResult, FetchToFileOptions, FileFetchResult, GcOptions } from './types.js'
import { withHeapGrowth } from '../heap-growth.js'

// The shard service of one peer: add content (chunk, store, announce), fetch
// it from the swarm (verify, store, resume), keep it as long as a pin or a
// retention hold says, then garbage-collect it. A façade over its parts:
// add.ts, fetch.ts and fetch-to-file.ts, retention.ts, providers.ts.

export { NoProviderError }
export { MAX_FETCH_BYTES, ShardTooLargeError } from './fetch.js'
export type { BlockRef, GcResult, RetentionHold, RootRecord, ProviderStat }
export type { AddFileOptions, AddOptions, AddResult, FetchOptions, FetchProgress, FetchResult, FetchToFileOptions, GcOptions } from './types.js'

export interface ShardServiceInit {
  host: Host
  /** the peer's data dir: blocks go to its own LevelDB, data-dir/shards */
  dataDir: string
  log: Logger
  fault?: ShardFault
  /** hold given to added/fetched roots when the caller names none (default 24 h) */
  defaultRetentionMs?: number
  /** automatic GC period; 0 disables (default 10 min) */
  gcIntervalMs?: number
  /** how long a provider that sent a bad block is ignored for it (for everything after MAX_BAD_BLOCKS) (default 1 h) */
  banMs?: number
}

export class ShardService {
  readonly server: ShardServer
  readonly providers: ShardProviders
  readonly retention: ShardRetention
  readonly adder: ShardAdder
  readonly fetcher: ShardFetch
  private readonly fileFetch: ShardFileFetch
  private readonly log: Logger
  private gcTimer?: NodeJS.Timeout
  private readonly stopped = new AbortController()
  /** chain height source for block-number holds (set by the chain client); unknown → such holds stay */
  chainHeight: () => number | undefined = () => undefined

  private constructor (private readonly init: ShardServiceInit, readonly store: BlockStore) {
    this.log = init.log
    this.server = new ShardServer(init.host, store, init.log, init.fault)
    const ctx = { host: init.host, store, log: init.log, stopped: this.stopped.signal }
    this.providers = new ShardProviders(ctx, init.banMs ?? 3600_000)
    this.retention = new ShardRetention(ctx, this.providers, init.defaultRetentionMs ?? 24 * 3600_000)
    this.adder = new ShardAdder(ctx, this.retention, this.providers)
    this.fetcher = new ShardFetch(ctx, this.retention, this.providers)
    this.fileFetch = new ShardFileFetch(ctx, this.fetcher, this.retention, this.providers)
  }

  /** Opens the shard store, registers the protocol handler, starts the GC timer and re-announces stored shards. */
  static async start (init: ShardServiceInit): Promise<ShardService> {
    const svc = new ShardService(init, await BlockStore.open(init.dataDir, init.log))
    try {
      await svc.run()
    } catch (err) {
      await svc.store.close().catch(() => {})
      throw err
    }
    return svc
  }

  private async run (): Promise<void> {
    await this.server.start()
    const every = this.init.gcIntervalMs ?? 600_000
    if (every > 0) {
      this.gcTimer = setInterval(() => {
        void this.gc({ currentBlock: this.chainHeight() }).then(r => {
          if (r.removedRoots.length > 0) this.log.info(r, 'shard GC')
        }).catch(err => this.log.warn({ err: (err as Error).message }, 'shard GC failed'))
      }, every)
      this.gcTimer.unref()
    }
    // provider records live in the DHT peers' memory: announce again after a restart
    void this.providers.reprovideAll().catch(() => {})
  }

  async stop (): Promise<void> {
    this.stopped.abort()
    clearInterval(this.gcTimer)
    await this.server.stop()
    await Promise.allSettled([...this.fetcher.running.values()])
    this.providers.close()
    await this.retention.idle()
    await this.store.close()
  }

  // ---- adding (add.ts) ---------------------------------------------------
  async addBytes (bytes: Uint8Array, meta?: ShardMeta, opts?: AddOptions): Promise<AddResult> {
    return await withHeapGrowth(async () => await this.adder.addBytes(bytes, meta, opts))
  }

  async addFile (path: string, meta?: ShardMeta, opts?: AddFileOptions): Promise<AddResult> {
    return await withHeapGrowth(async () => await this.adder.addFile(path, meta, opts))
  }

  // ---- fetching (fetch.ts, fetch-to-file.ts) -----------------------------
  // (adding and fetching hold V8's raised heap growth: checkpoints are MBs through noise and yamux, node/heap-growth.ts)
  async fetch (root: CID | string, opts?: FetchOptions): Promise<FetchResult> { return await withHeapGrowth(async () => await this.fetcher.fetch(root, opts)) }
  async fetchBytes (root: CID | string, opts?: FetchOptions): Promise<Uint8Array> {
    return await withHeapGrowth(async () => await this.fetcher.fetchBytes(root, opts))
  }

  async fetchBlocksOf (
    root: CID | string, indices: readonly number[], opts?: FetchOptions
  ): Promise<Map<number, Uint8Array>> { return await withHeapGrowth(async () => await this.fetcher.fetchBlocksOf(root, indices, opts)) }

  async fetchToFile (
    root: CID | string, path: string, opts?: FetchToFileOptions
  ): Promise<FileFetchResult> { return await withHeapGrowth(async () => await this.fileFetch.fetchToFile(root, path, opts)) }

  // ---- local content (local.ts) ------------------------------------------
  /** The content of a complete local shard. */
  async read (root: CID | string): Promise<Uint8Array> { return await readShard(this.store, root) }
  /** Writes a complete local shard to a file; returns the content's sha256 (hex). */
  async writeFile (root: CID | string, path: string): Promise<string> { return await writeShardFile(this.store, root, path) }
  /** True when the shard's manifest and all its blocks are stored here. */
  async has (root: CID | string): Promise<boolean> { return await hasShard(this.store, root) }

  // ---- retention and GC (retention.ts) -----------------------------------
  async pin (root: CID | string): Promise<RootRecord> { return await this.retention.pin(root) }
  async unpin (root: CID | string): Promise<RootRecord> { return await this.retention.unpin(root) }
  async retain (root: CID | string, hold: RetentionHold, reason?: string): Promise<RootRecord> { return await this.retention.retain(root, hold, reason) }
  async release (root: CID | string, reason?: string): Promise<RootRecord> { return await this.retention.release(root, reason) }
  async list (): Promise<RootRecord[]> { return await this.retention.list() }
  async gc (opts?: GcOptions): Promise<GcResult> { return await this.retention.gc(opts) }
  async remove (root: CID | string): Promise<GcResult> { return await this.retention.remove(root) }

  // ---- providers (providers.ts) ------------------------------------------
  async provide (root: CID | string, timeoutMs?: number): Promise<void> { await this.providers.provide(root, timeoutMs) }
  isBanned (peerId: string): boolean { return this.providers.isBanned(peerId) }
  isBlockBanned (peerId: string, cid: string): boolean { return this.providers.isBlockBanned(peerId, cid) }
}
