import { open, rename, rm, stat } from 'node:fs/promises'
import { resolve } from 'node:path'
import { createHash } from 'node:crypto'
import { peerIdFromString } from '@libp2p/peer-id'
import type { CID } from 'multiformats/cid'
import type { Logger } from 'pino'
import {
  DAG_CBOR_CODEC, MAX_BLOCK_BYTES, blockMatches, buildManifest, chunk, cidOf, decodeManifest, maxContentBytes, parseShardCid,
  type Manifest, type ManifestBlock, type ShardMeta
} from '../../protocols/shards/index.js'
import type { Host } from '../p2p/host.js'
import { NoProviderError, ProviderSource, concatChunks, fetchBlocks, type BlockFetchOptions, type FetcherDeps, type ProviderStat } from './fetcher.js'
import { InOrderHash, openPartFile, readAt, writeAt, writeChunksAt } from './file-sink.js'
import { ShardServer, type ShardFault } from './server.js'
import { collect, type GcResult } from './collector.js'
import { ProviderBans } from './bans.js'
import { StreamPool } from './stream-pool.js'
import { BlockStore, rootKept, type BlockRef, type RetentionHold, type RootRecord } from './store.js'

// The shard service of one peer: add content (chunk, store, announce), fetch
// it from the swarm (verify, store, resume), keep it as long as a pin or a
// retention hold says, then garbage-collect it.

export { NoProviderError }
export type { BlockRef, GcResult, RetentionHold, RootRecord, ProviderStat }

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

export interface AddOptions {
  pin?: boolean
  /** retention hold (e.g. until the task's challenge window closes); default: now + defaultRetentionMs */
  retain?: RetentionHold
  /** who holds the retention (task id...); default "default" */
  reason?: string
  /** announce in the DHT (default true; the announcement runs in the background) */
  provide?: boolean
}

export interface AddFileOptions extends AddOptions {
  /**
   * Store a reference (path, offset, size per block) instead of a copy of the
   * bytes: for files that stay where they are while the shard is served (a
   * solver's checkpoints in its run directory). Blocks are read from the file
   * and checked against their CID whenever they are read; if the file changes
   * or vanishes they count as missing. Default false (copy).
   */
  byReference?: boolean
  /** by reference only: blocks of this size (an erasure-coded checkpoint's chunks.bin: one chunk per block); default 1 MiB */
  blockSize?: number
}

export interface AddResult { cid: string, name: string, kind: string, size: number, blocks: number, byReference?: boolean }

export interface FetchProgress {
  root: string
  totalBlocks: number
  haveBlocks: number
  totalBytes: number
  haveBytes: number
  fetchedBytes: number
  providers: number
}

export interface FetchOptions extends AddOptions {
  signal?: AbortSignal
  onProgress?: (p: FetchProgress) => void
  /** fetch only from these peer ids (no DHT lookup) */
  providers?: string[]
  maxProviders?: number
  pipeline?: number
  findTimeoutMs?: number
  requestTimeoutMs?: number
}

export interface FetchToFileOptions extends FetchOptions {
  /**
   * Copy the blocks into the store, then write the file from them (the
   * shard then does not depend on the file). Default false: blocks go
   * straight into the file and the shard is held by reference to it.
   */
  copy?: boolean
  /**
   * Compute the content's sha256 while writing (the result's `sha256`).
   * Default true. False saves ~0.9 ms of CPU per MB for callers that check
   * the content themselves — every block is still checked against its CID.
   */
  contentHash?: boolean
}

export interface FetchResult {
  cid: string
  name: string
  kind: string
  size: number
  blocks: number
  /** blocks already stored before this fetch (resume) */
  alreadyHad: number
  fetchedBlocks: number
  fetchedBytes: number
  durationMs: number
  /** fetched bytes / duration, MiB/s */
  mibPerSecond: number
  /** time until the first provider was known (DHT lookup), ms */
  firstProviderMs?: number
  /** time spent moving data blocks (after the manifest), ms */
  transferMs: number
  /** CPU time of this process (all threads) during the fetch, ms; other work of the peer included */
  cpuMs: number
  providers: ProviderStat[]
}

export interface GcOptions { currentBlock?: number, now?: number }

// fetchToFile writers per output path, for the whole process: the part file
// is named by pid, so two services (peers) in one process must not share it at once
const writingPaths = new Map<string, Promise<unknown>>()

const PROVIDER_TAG = 'proofswarm-shard-provider'
const BAD_TAG = 'proofswarm-shard-misbehaved'

interface LoadedManifest { manifest: Manifest, haveManifest: boolean, blockOpts: BlockFetchOptions, startSource: () => void }

export class ShardService {
  readonly server: ShardServer
  private readonly host: Host
  private readonly log: Logger
  private readonly defaultRetentionMs: number
  private readonly banMs: number
  private readonly bans: ProviderBans
  /** when each provider's reward tag was last refreshed */
  private readonly rewardedAt = new Map<string, number>()
  private readonly fetching = new Map<string, Promise<FetchResult>>()
  /** idle shard streams to providers, reused by the next fetch */
  private readonly streams = new StreamPool()
  private readonly protectedRoots = new Map<string, number>()
  private lock: Promise<unknown> = Promise.resolve()
  private gcTimer?: NodeJS.Timeout
  private strayswept = false
  private stopped = new AbortController()
  /** chain height source for block-number holds (set by the chain client); unknown → such holds stay */
  chainHeight: () => number | undefined = () => undefined

  private constructor (private readonly init: ShardServiceInit, readonly store: BlockStore) {
    this.host = init.host
    this.log = init.log
    this.server = new ShardServer(init.host, this.store, init.log, init.fault)
    this.defaultRetentionMs = init.defaultRetentionMs ?? 24 * 3600_000
    this.banMs = init.banMs ?? 3600_000
    this.bans = new ProviderBans(this.banMs)
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
    void this.reprovideAll().catch(() => {})
  }

  async stop (): Promise<void> {
    this.stopped.abort()
    clearInterval(this.gcTimer)
    await this.server.stop()
    await Promise.allSettled([...this.fetching.values()])
    this.streams.close()
    await this.lock.catch(() => {})
    await this.store.close()
  }

  // ---- adding ------------------------------------------------------------

  /** Chunks bytes into ≤ 1 MiB blocks, stores them and their manifest, announces the root. */
  async addBytes (bytes: Uint8Array, meta: ShardMeta = {}, opts: AddOptions = {}): Promise<AddResult> {
    if (bytes.length > maxContentBytes()) throw new Error(`content over ${maxContentBytes()} bytes`)
    return await this.exclusive(async () => {
      const blocks: ManifestBlock[] = []
      let batch: Array<{ cid: CID, bytes: Uint8Array }> = []
      for (const c of chunk(bytes)) {
        blocks.push({ cid: c.cid, size: c.bytes.length })
        batch.push(c)
        if (batch.length >= 8) { await this.store.putMany(batch); batch = [] }
      }
      await this.store.putMany(batch)
      return await this.finishAdd(blocks, meta, opts)
    })
  }

  /**
   * Like addBytes, reading the file in 1 MiB chunks (never the whole file in
   * memory). With `byReference` the blocks are hashed but not copied: the
   * store records where they are in the file (see AddFileOptions).
   */
  async addFile (path: string, meta: ShardMeta = {}, opts: AddFileOptions = {}): Promise<AddResult> {
    let st
    try { st = await stat(path) } catch { throw new Error(`cannot read ${path}: no such file`) }
    if (!st.isFile()) throw new Error(`${path} is not a regular file`)
    if (st.size > maxContentBytes()) throw new Error(`${path} is over ${maxContentBytes()} bytes`)
    if (opts.byReference === true) return await this.addFileByReference(resolve(path), meta, opts)
    return await this.exclusive(async () => {
      const blocks: ManifestBlock[] = []
      const fh = await open(path, 'r')
      try {
        while (true) {
          const buf = new Uint8Array(MAX_BLOCK_BYTES)
          let n = 0
          while (n < buf.length) {
            const r = await fh.read(buf, n, buf.length - n)
            if (r.bytesRead === 0) break
            n += r.bytesRead
          }
          if (n === 0) break
          const b = buf.subarray(0, n)
          const cid = cidOf(b)
          await this.store.put(cid, b)
          blocks.push({ cid, size: n })
          if (n < buf.length) break
        }
      } finally { await fh.close() }
      return await this.finishAdd(blocks, { ...meta, name: meta.name ?? path.split('/').pop() }, opts)
    })
  }

  // One read of the file, sha256 per block (as a copy-add does), one reused
  // buffer, no block writes: only the refs and the manifest go to LevelDB.
  private async addFileByReference (path: string, meta: ShardMeta, opts: AddFileOptions): Promise<AddResult> {
    const blockSize = opts.blockSize ?? MAX_BLOCK_BYTES
    if (!Number.isInteger(blockSize) || blockSize < 1 || blockSize > MAX_BLOCK_BYTES) throw new Error(`block size must be in [1, ${MAX_BLOCK_BYTES}]`)
    return await this.exclusive(async () => {
      const blocks: ManifestBlock[] = []
      const ranges: Array<{ cid: CID, offset: number, size: number }> = []
      const fh = await open(path, 'r')
      let before, after
      try {
        before = await fh.stat()
        const buf = new Uint8Array(blockSize)
        let offset = 0
        while (true) {
          let n = 0
          while (n < buf.length) {
            const r = await fh.read(buf, n, buf.length - n, offset + n)
            if (r.bytesRead === 0) break
            n += r.bytesRead
          }
          if (n === 0) break
          const cid = cidOf(buf.subarray(0, n))
          blocks.push({ cid, size: n })
          ranges.push({ cid, offset, size: n })
          offset += n
          if (n < buf.length) break
        }
        after = await fh.stat()
      } finally { await fh.close() }
      // a file still being written would give a root whose blocks no longer match
      if (after.size !== before.size || after.mtimeMs !== before.mtimeMs) throw new Error(`${path} changed while it was being added; add it once it is complete`)
      const named = { ...meta, name: meta.name ?? path.split('/').pop() }
      const root = buildManifest(blocks, named, blockSize).cid.toString()
      await this.store.addRefs(ranges.map(r => ({
        cid: r.cid,
        ref: { root, path, offset: r.offset, size: r.size, fileSize: after.size, mtimeMs: after.mtimeMs }
      })))
      return await this.finishAdd(blocks, named, opts, { path }, blockSize)
    })
  }

  private async finishAdd (blocks: ManifestBlock[], meta: ShardMeta, opts: AddOptions, byReference?: { path: string }, blockSize?: number): Promise<AddResult> {
    const { manifest, bytes, cid } = buildManifest(blocks, meta, blockSize)
    await this.store.put(cid, bytes)
    const rec = await this.upsertRoot(cid.toString(), manifest, true, 'added', opts, byReference ?? null)
    if (opts.provide !== false) this.provideInBackground(cid)
    this.log.info({ cid: rec.cid, size: manifest.size, blocks: blocks.length, kind: manifest.kind, byReference: byReference?.path }, 'shard added')
    return { cid: rec.cid, name: manifest.name, kind: manifest.kind, size: manifest.size, blocks: blocks.length, ...(rec.byReference != null ? { byReference: true } : {}) }
  }

  /** `byReference`: set (added by reference), null (added by copy: clear it), undefined (fetched: keep as it was). */
  private async upsertRoot (cid: string, m: Manifest, complete: boolean, source: RootRecord['source'], opts: AddOptions, byReference?: { path: string } | null): Promise<RootRecord> {
    const prev = await this.store.getRoot(cid)
    const holds = { ...(prev?.holds ?? {}) }
    const reason = opts.reason ?? 'default'
    if (opts.retain != null) holds[reason] = validHold(opts.retain)
    else if (prev == null) holds.default = { untilTime: Date.now() + this.defaultRetentionMs }
    const rec: RootRecord = {
      cid,
      name: m.name,
      kind: m.kind,
      size: m.size,
      blocks: m.blocks.length,
      complete: complete || (prev?.complete ?? false),
      pinned: (prev?.pinned ?? false) || opts.pin === true,
      holds,
      addedAt: prev?.addedAt ?? Date.now(),
      source: prev?.source ?? source
    }
    // a root already complete here by copy keeps its copies: adding it by reference changes nothing
    const copied = prev != null && prev.complete && prev.byReference == null
    const ref = byReference === undefined ? prev?.byReference : byReference === null || copied ? undefined : byReference
    if (ref != null) rec.byReference = ref
    // announced once any add/fetch wanted it; unannounced while all said provide: false
    if (opts.provide === false && (prev == null || prev.unannounced === true)) rec.unannounced = true
    await this.store.putRoot(rec)
    return rec
  }

  // ---- fetching ----------------------------------------------------------

  /**
   * Fetches a shard into the local store (blocks already here are not
   * fetched again, so a fetch interrupted by a restart resumes), then
   * announces this peer as a provider too.
   */
  async fetch (root: CID | string, opts: FetchOptions = {}): Promise<FetchResult> {
    const cid = typeof root === 'string' ? parseShardCid(root) : root
    if (cid.code !== DAG_CBOR_CODEC) throw new Error(`${cid.toString()} is a raw block, not a shard root (manifest)`)
    const key = cid.toString()
    const running = this.fetching.get(key)
    if (running != null) return await running
    const p = this.doFetch(cid, opts).finally(() => this.fetching.delete(key))
    this.fetching.set(key, p)
    return await p
  }

  /** What fetch and fetchToFile start with: timing, the abort signal, the providers; the root is protected from GC until the caller's `protect(key, -1)`. */
  private beginFetch (root: CID, opts: FetchOptions): { key: string, started: number, cpu0: NodeJS.CpuUsage, signal: AbortSignal, deps: FetcherDeps, source: ProviderSource } {
    const key = root.toString()
    const started = Date.now()
    const cpu0 = process.cpuUsage()
    const signal = opts.signal != null ? AbortSignal.any([opts.signal, this.stopped.signal]) : this.stopped.signal
    const deps = this.fetcherDeps()
    const source = new ProviderSource(deps, id => this.isBanned(id))
    this.protect(key, +1)
    return { key, started, cpu0, signal, deps, source }
  }

  private async doFetch (root: CID, opts: FetchOptions): Promise<FetchResult> {
    const { key, started, cpu0, signal, deps, source } = this.beginFetch(root, opts)
    try {
      const { manifest, haveManifest, blockOpts, startSource } = await this.loadManifest(root, opts, signal, deps, source)
      const m = manifest
      await this.upsertRoot(key, m, false, 'fetched', opts)
      const missing = await this.store.missing(m)
      const alreadyHad = m.blocks.length - missing.length
      let haveBytes = m.size - missing.reduce((s, i) => s + m.blocks[i].size, 0)
      let fetchedBytes = 0
      let haveBlocks = alreadyHad
      if (alreadyHad > 0 && haveManifest) this.log.info({ root: key, alreadyHad, missing: missing.length }, 'resuming a shard fetch')
      const progress = (): void => opts.onProgress?.({ root: key, totalBlocks: m.blocks.length, haveBlocks, totalBytes: m.size, haveBytes, fetchedBytes, providers: source.stats.size })
      progress()
      const transferStart = Date.now()
      if (missing.length > 0) {
        startSource()
        await fetchBlocks(deps, source, missing.map(i => m.blocks[i].cid), {
          ...blockOpts,
          onBlock: (_i, size) => { haveBlocks++; haveBytes += size; fetchedBytes += size; progress() }
        })
      }
      const rec = await this.store.getRoot(key)
      if (rec != null && !rec.complete) await this.store.putRoot({ ...rec, complete: true })
      // announce new content only: reading a local shard again must not spam the DHT
      if (opts.provide !== false && (missing.length > 0 || rec?.complete !== true)) this.provideInBackground(root)
      const result = fetchResult(key, m, { alreadyHad, fetched: missing.length, fetchedBytes, started, transferStart, cpu0, source })
      this.log.info({ ...result, providers: result.providers.map(p => ({ ...p, peerId: p.peerId.slice(-8) })) }, 'shard fetched')
      return result
    } finally {
      source.close()
      this.protect(key, -1)
    }
  }

  // The manifest: local, or fetched (from one provider) into the store. The
  // provider source starts lazily: a local manifest with every block here needs no lookup.
  private async loadManifest (root: CID, opts: FetchOptions, signal: AbortSignal, deps: FetcherDeps, source: ProviderSource): Promise<LoadedManifest> {
    const key = root.toString()
    let started = false
    const startSource = (): void => {
      if (started) return
      started = true
      if (opts.providers != null && opts.providers.length > 0) source.addExplicit(opts.providers)
      else source.discover(root, signal)
    }
    const blockOpts: BlockFetchOptions = {
      signal,
      maxProviders: opts.maxProviders,
      pipeline: opts.pipeline,
      findTimeoutMs: opts.findTimeoutMs,
      requestTimeoutMs: opts.requestTimeoutMs
    }
    let manifest = await this.store.manifest(root)
    const haveManifest = manifest != null
    if (manifest == null) {
      startSource()
      await fetchBlocks(deps, source, [root], { ...blockOpts, maxProviders: 1 })
      const bytes = await this.store.get(root)
      try {
        manifest = decodeManifest(bytes!)
      } catch (err) {
        await this.store.deleteBlocks([key])
        throw new Error(`${key} is not a shard manifest: ${(err as Error).message}`)
      }
    }
    return { manifest, haveManifest, blockOpts, startSource }
  }

  /**
   * Some blocks of a shard, by index in its manifest (chunks of an erasure-coded
   * checkpoint: a verifier's samples, or any k of them to rebuild it). Returns
   * the blocks it got within the options' timeouts; missing ones are absent.
   */
  async fetchBlocksOf (root: CID | string, indices: readonly number[], opts: FetchOptions = {}): Promise<Map<number, Uint8Array>> {
    const cid = typeof root === 'string' ? parseShardCid(root) : root
    const { key, signal, deps, source } = this.beginFetch(cid, opts)
    const out = new Map<number, Uint8Array>()
    try {
      const { manifest, blockOpts, startSource } = await this.loadManifest(cid, opts, signal, deps, source)
      const want = [...new Set(indices)].filter(i => Number.isInteger(i) && i >= 0 && i < manifest.blocks.length)
      // kept in memory, not written to the store: a sample is checked and dropped
      const some = async (idx: number[], src: ProviderSource, o: BlockFetchOptions): Promise<void> => {
        await fetchBlocks(deps, src, idx.map(i => manifest.blocks[i].cid), { ...o, sink: async (j, _cid, chunks) => { out.set(idx[j], concatChunks(chunks)) } })
          .catch((err: Error) => { this.log.debug({ root: key, err: err.message }, 'not every requested block was fetched') })
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
            const src = new ProviderSource(deps, id => this.isBanned(id))
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
      source.close()
      this.protect(key, -1)
    }
  }

  /** Fetches a shard (if needed) and returns its content. */
  async fetchBytes (root: CID | string, opts: FetchOptions = {}): Promise<Uint8Array> {
    await this.fetch(root, opts)
    return await this.read(root)
  }

  /**
   * Fetches a shard and writes its content to `path` (atomically, via
   * `<path>.part-<pid>`). Blocks are checked against their CIDs as they
   * arrive and written at their offsets in the file, not copied into the
   * store; the shard is then held by reference to the file (served to others
   * from it, like addFile byReference). An interrupted call leaves the part
   * file; the next call (this process, or a later one once this one is gone)
   * keeps its blocks that still match their CIDs and fetches only the rest.
   * A shard already complete here (copies, or references to another file) is
   * written from local blocks. `copy: true`: the old way (blocks into the
   * store, then the file written from them).
   */
  async fetchToFile (root: CID | string, path: string, opts: FetchToFileOptions = {}): Promise<FetchResult & { out: string, sha256?: string }> {
    const cid = typeof root === 'string' ? parseShardCid(root) : root
    if (cid.code !== DAG_CBOR_CODEC) throw new Error(`${cid.toString()} is a raw block, not a shard root (manifest)`)
    const out = resolve(path)
    const key = cid.toString()
    // one writer per output path in this process (they would share the part file)
    return await this.perPath(out, async () => {
      for (let i = 0; i < 3; i++) {
        // another fetch of this root running: wait, then write from local blocks
        const running = this.fetching.get(key)
        if (running != null) await running.catch(() => {})
        if (opts.copy === true || await this.has(cid)) {
          const r = await this.fetch(cid, opts)
          const sha256 = await this.writeFile(cid, out)
          return { ...r, out: path, sha256 }
        }
        if (this.fetching.has(key)) continue // one started meanwhile
        const p = this.doFetchToFile(cid, out, opts)
        const plain = p.then(({ out: _o, sha256: _s, ...r }) => r)
        plain.catch(() => {}) // the caller sees the error through p
        this.fetching.set(key, plain)
        try {
          return { ...await p, out: path }
        } finally { this.fetching.delete(key) }
      }
      throw new Error(`${key}: other fetches of this shard keep failing`)
    })
  }

  private async doFetchToFile (root: CID, out: string, opts: FetchToFileOptions): Promise<FetchResult & { out: string, sha256?: string }> {
    const { key, started, cpu0, signal, deps, source } = this.beginFetch(root, opts)
    let part: Awaited<ReturnType<typeof openPartFile>> | undefined
    let closed = false
    let keepPart = false // an interrupted fetch keeps the verified blocks it wrote, for the next call
    try {
      const { manifest: m, blockOpts, startSource } = await this.loadManifest(root, opts, signal, deps, source)
      await this.upsertRoot(key, m, false, 'fetched', opts)
      const offsets: number[] = []
      let off = 0
      for (const b of m.blocks) { offsets.push(off); off += b.size }
      const hash = opts.contentHash === false ? undefined : new InOrderHash(m.blocks.map(b => b.size))
      part = await openPartFile(out)
      const fh = part.fh
      // Which blocks are already here: in a part file left by an earlier call
      // (each checked against its CID), or in the store (copied, or by
      // reference to another file: written into this one). The rest is fetched.
      const localMissing = new Set(await this.store.missing(m))
      const missing: number[] = []
      let alreadyHad = 0
      for (let i = 0; i < m.blocks.length; i++) {
        const b = m.blocks[i]
        if (part.resumed) {
          const bytes = await readAt(fh, offsets[i], b.size)
          if (bytes.length === b.size && blockMatches(b.cid, bytes)) { hash?.add(i, bytes); alreadyHad++; continue }
        }
        const bytes = localMissing.has(i) ? undefined : await this.store.get(b.cid)
        if (bytes != null) { await writeAt(fh, offsets[i], bytes); hash?.add(i, bytes); alreadyHad++; continue }
        missing.push(i)
      }
      await fh.truncate(m.size) // a part file from a larger content: cut
      if (alreadyHad > 0 && part.resumed) this.log.info({ root: key, out, alreadyHad, missing: missing.length }, 'resuming a shard fetch into a file')
      let haveBytes = m.size - missing.reduce((s, i) => s + m.blocks[i].size, 0)
      let fetchedBytes = 0
      let haveBlocks = alreadyHad
      const progress = (): void => opts.onProgress?.({ root: key, totalBlocks: m.blocks.length, haveBlocks, totalBytes: m.size, haveBytes, fetchedBytes, providers: source.stats.size })
      progress()
      const transferStart = Date.now()
      if (missing.length > 0) {
        startSource()
        // a failed fetch keeps the part file when it holds verified blocks (the next call resumes from it)
        keepPart = alreadyHad > 0
        let closing = false
        const writes = new Set<Promise<void>>()
        try {
          await fetchBlocks(deps, source, missing.map(i => m.blocks[i].cid), {
            ...blockOpts,
            sink: async (j, _cid, chunks) => {
              // after a failure, workers still draining must not write into a file being closed
              if (closing) throw new Error('fetch ended')
              const i = missing[j]
              const w = writeChunksAt(fh, offsets[i], chunks)
              writes.add(w)
              try { await w } finally { writes.delete(w) }
              keepPart = true
              hash?.add(i, chunks)
            },
            onBlock: (_i, size) => { haveBlocks++; haveBytes += size; fetchedBytes += size; progress() }
          })
        } finally {
          // a failed fetch returns while blocks may still be being written: let them land before closing
          closing = true
          await Promise.allSettled([...writes])
        }
        keepPart = false
      }
      const sha256 = await hash?.finish(fh, offsets)
      closed = true
      await fh.close()
      await rename(part.tmp, out)
      const st = await stat(out)
      await this.store.addRefs(m.blocks.map((b, i) => ({
        cid: b.cid,
        ref: { root: key, path: out, offset: offsets[i], size: b.size, fileSize: st.size, mtimeMs: st.mtimeMs }
      })))
      await this.exclusive(async () => await this.upsertRoot(key, m, true, 'fetched', opts, { path: out }))
      if (opts.provide !== false) this.provideInBackground(root)
      const result = {
        ...fetchResult(key, m, { alreadyHad, fetched: missing.length, fetchedBytes, started, transferStart, cpu0, source }),
        out,
        sha256
      }
      this.log.info({ ...result, providers: result.providers.map(p => ({ ...p, peerId: p.peerId.slice(-8) })) }, 'shard fetched into a file')
      return result
    } catch (err) {
      if (part != null) {
        if (!closed) await part.fh.close().catch(() => {})
        if (!keepPart) await rm(part.tmp, { force: true }).catch(() => {})
      }
      throw err
    } finally {
      source.close()
      this.protect(key, -1)
    }
  }

  private async perPath<T> (path: string, f: () => Promise<T>): Promise<T> {
    const prev = writingPaths.get(path) ?? Promise.resolve()
    const run = prev.catch(() => {}).then(f)
    const tail = run.catch(() => {})
    writingPaths.set(path, tail)
    try {
      return await run
    } finally {
      if (writingPaths.get(path) === tail) writingPaths.delete(path)
    }
  }

  /** The content of a complete local shard. */
  async read (root: CID | string): Promise<Uint8Array> {
    const m = await this.requireComplete(root)
    const out = new Uint8Array(m.size)
    let off = 0
    for (const b of m.blocks) {
      const bytes = await this.store.get(b.cid)
      if (bytes == null) throw new Error(`block ${b.cid.toString()} of ${root.toString()} is missing`)
      out.set(bytes, off)
      off += bytes.length
    }
    return out
  }

  /** Writes a complete local shard to a file; returns the content's sha256 (hex). */
  async writeFile (root: CID | string, path: string): Promise<string> {
    const m = await this.requireComplete(root)
    const tmp = `${path}.part-${process.pid}`
    const fh = await open(tmp, 'w')
    const h = createHash('sha256')
    try {
      for (const b of m.blocks) {
        const bytes = await this.store.get(b.cid)
        if (bytes == null) throw new Error(`block ${b.cid.toString()} of ${root.toString()} is missing`)
        h.update(bytes)
        await fh.write(bytes)
      }
      await fh.close()
      await rename(tmp, path)
    } catch (err) {
      await fh.close().catch(() => {})
      await rm(tmp, { force: true })
      throw err
    }
    return h.digest('hex')
  }

  private async requireComplete (root: CID | string): Promise<Manifest> {
    const key = root.toString()
    const m = await this.store.manifest(key)
    if (m == null) throw new Error(`shard ${key} is not stored here`)
    if ((await this.store.missing(m)).length > 0) throw new Error(`shard ${key} is incomplete here; fetch it first`)
    return m
  }

  /** True when the shard's manifest and all its blocks are stored here. */
  async has (root: CID | string): Promise<boolean> {
    const m = await this.store.manifest(root.toString()).catch(() => undefined)
    return m != null && (await this.store.missing(m)).length === 0
  }

  // ---- announcing --------------------------------------------------------

  /** Announces this peer as a provider of `root` in the DHT (awaits the announcement). */
  async provide (root: CID | string, timeoutMs = 30_000): Promise<void> {
    const cid = typeof root === 'string' ? parseShardCid(root) : root
    await this.host.contentRouting.provide(cid, { signal: AbortSignal.any([AbortSignal.timeout(timeoutMs), this.stopped.signal]) })
  }

  private provideInBackground (root: CID): void {
    void this.provide(root).then(
      () => this.log.debug({ root: root.toString() }, 'announced shard provider record'),
      (err: unknown) => { if (!this.stopped.signal.aborted) this.log.warn({ root: root.toString(), err: (err as Error).message }, 'could not announce a shard provider record') }
    )
  }

  private async reprovideAll (): Promise<void> {
    // wait (bounded) for the bootstrap dial: provide() needs DHT peers
    for (let i = 0; i < 60 && this.host.getPeers().length === 0 && !this.stopped.signal.aborted; i++) await sleep(500)
    for (const r of await this.store.listRoots()) {
      if (this.stopped.signal.aborted) return
      // a root added by reference whose file is gone or changed is not announced
      // roots added/fetched with provide: false (checkpoints) stay unannounced: hundreds of
      // provider records at once kept every peer busy (and a solver's verifiers were
      // answering its DHT queries while fetching its checkpoints)
      if (r.unannounced === true) continue
      if (r.complete && (r.byReference == null || await this.has(r.cid))) await this.provide(r.cid).catch(() => {})
    }
  }

  // ---- retention ---------------------------------------------------------

  async pin (root: CID | string): Promise<RootRecord> { return await this.updateRoot(root, r => { r.pinned = true }) }
  async unpin (root: CID | string): Promise<RootRecord> { return await this.updateRoot(root, r => { r.pinned = false }) }

  /** Keeps `root` at least until the hold expires (e.g. the end of a task's challenge window). */
  async retain (root: CID | string, hold: RetentionHold, reason = 'default'): Promise<RootRecord> {
    const h = validHold(hold)
    return await this.updateRoot(root, r => { r.holds[reason] = h })
  }

  /** Drops one retention hold (the root is collected once no pin or hold keeps it). */
  async release (root: CID | string, reason = 'default'): Promise<RootRecord> {
    return await this.updateRoot(root, r => { delete r.holds[reason] })
  }

  async list (): Promise<RootRecord[]> {
    return (await this.store.listRoots()).sort((a, b) => a.addedAt - b.addedAt)
  }

  private async updateRoot (root: CID | string, f: (r: RootRecord) => void): Promise<RootRecord> {
    const key = root.toString()
    return await this.exclusive(async () => {
      const r = await this.store.getRoot(key)
      if (r == null) throw new Error(`shard ${key} is not stored here`)
      f(r)
      await this.store.putRoot(r)
      return r
    })
  }

  /**
   * Deletes roots no pin or active hold keeps (block holds need `currentBlock`;
   * without it they stay), then every block no kept root references.
   */
  async gc (opts: GcOptions = {}): Promise<GcResult> {
    return await this.exclusive(async () => {
      const now = opts.now ?? Date.now()
      // strays only come from a crash mid-add: swept by the first GC after a start
      const sweep = !this.strayswept
      const r = await this.collect(r => !rootKept(r, now, opts.currentBlock) && !this.protectedRoots.has(r.cid), sweep)
      this.strayswept = true
      return r
    })
  }

  /**
   * Removes one shard now, whatever pins or holds it has (`shards rm`), and
   * the blocks and references no other root uses. A file it was added from by
   * reference is left alone.
   */
  async remove (root: CID | string): Promise<GcResult> {
    const key = root.toString()
    return await this.exclusive(async () => {
      if (await this.store.getRoot(key) == null) throw new Error(`shard ${key} is not stored here`)
      if (this.protectedRoots.has(key)) throw new Error(`shard ${key} is being fetched; remove it afterwards`)
      return await this.collect(r => r.cid === key, false)
    })
  }

  private async collect (drop: (r: RootRecord) => boolean, sweepStrays: boolean): Promise<GcResult> {
    const r = await collect(this.store, drop, { sweepStrays })
    for (const k of r.removedRoots) await this.host.contentRouting.cancelReprovide(parseShardCid(k)).catch(() => {})
    return r
  }

  // ---- providers' reputation ----------------------------------------------

  /** Banned for everything (it sent MAX_BAD_BLOCKS bad blocks within the ban time)? */
  isBanned (peerId: string): boolean { return this.bans.isBanned(peerId) }

  /** Banned for this block (it sent a bad copy of it)? */
  isBlockBanned (peerId: string, cid: string): boolean { return this.bans.blockBanned(peerId, cid) }

  private fetcherDeps (): FetcherDeps {
    return {
      host: this.host,
      store: this.store,
      log: this.log,
      streams: this.streams,
      penalise: (peerId, reason, cid) => {
        const verdict = this.bans.badBlock(peerId, cid)
        this.log.warn({ provider: peerId, reason, block: cid, banned: verdict === 'peer' ? 'for every block' : 'for this block', banMs: this.banMs }, 'penalised a shard provider')
        if (verdict === 'peer') {
          void this.host.peerStore.merge(peerIdFromString(peerId), {
            tags: { [PROVIDER_TAG]: undefined, [BAD_TAG]: { value: 1, ttl: this.banMs } }
          }).catch(() => {})
        }
        return verdict
      },
      blockBanned: (peerId, cid) => this.bans.blockBanned(peerId, cid),
      reward: peerId => {
        // a peer-store write per fetched shard was ~5% of a verifier's fetch CPU;
        // the tag lasts 10 minutes, so refreshing it once a minute is enough
        const now = Date.now()
        if ((this.rewardedAt.get(peerId) ?? 0) > now - 60_000) return
        this.rewardedAt.set(peerId, now)
        if (this.rewardedAt.size > 1024) this.rewardedAt.clear()
        void this.host.peerStore.merge(peerIdFromString(peerId), {
          tags: { [PROVIDER_TAG]: { value: 20, ttl: 600_000 } }
        }).catch(() => {})
      }
    }
  }

  private protect (root: string, d: number): void {
    const n = (this.protectedRoots.get(root) ?? 0) + d
    if (n <= 0) this.protectedRoots.delete(root)
    else this.protectedRoots.set(root, n)
  }

  // adds, GC and root edits are serialized so GC never sees half-added content
  private async exclusive<T> (f: () => Promise<T>): Promise<T> {
    const run = this.lock.catch(() => {}).then(f)
    this.lock = run
    return await run
  }
}

function cpuMs (u: NodeJS.CpuUsage): number { return (u.user + u.system) / 1000 }

/** What a fetch reports (fetch and fetchToFile alike). */
function fetchResult (key: string, m: Manifest, f: { alreadyHad: number, fetched: number, fetchedBytes: number, started: number, transferStart: number, cpu0: NodeJS.CpuUsage, source: ProviderSource }): FetchResult {
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

function validHold (h: RetentionHold): RetentionHold {
  const out: RetentionHold = {}
  if (h.untilBlock != null) {
    if (!Number.isSafeInteger(h.untilBlock) || h.untilBlock < 0) throw new Error(`untilBlock must be a non-negative integer, got ${String(h.untilBlock)}`)
    out.untilBlock = h.untilBlock
  }
  if (h.untilTime != null) {
    if (!Number.isFinite(h.untilTime) || h.untilTime < 0) throw new Error(`untilTime must be a time in ms since the epoch, got ${String(h.untilTime)}`)
    out.untilTime = h.untilTime
  }
  if (out.untilBlock == null && out.untilTime == null) throw new Error('a retention hold needs untilBlock and/or untilTime')
  return out
}

async function sleep (ms: number): Promise<void> {
  await new Promise(resolve => setTimeout(resolve, ms))
}
