import { rename, rm, stat } from 'node:fs/promises'
import { resolve } from 'node:path'
import type { CID } from 'multiformats/cid'
import { DAG_CBOR_CODEC, blockMatches, parseShardCid } from '../../protocols/shards/index.js'
import { fetchBlocks } from './fetcher.js'
import { fetchResult, type ShardFetch } from './fetch.js'
import { InOrderHash, openPartFile, readAt, writeAt, writeChunksAt } from './file-sink.js'
import { hasShard, writeShardFile } from './local.js'
import type { ShardProviders } from './providers.js'
import type { ShardRetention } from './retention.js'
import type { FetchToFileOptions, FileFetchResult, ShardContext } from './types.js'

// Fetching a shard straight into a file: blocks land at their offsets in a
// part file (resumable), and the shard is then held by reference to the file.

// fetchToFile writers per output path, for the whole process: the part file
// is named by pid, so two services (peers) in one process must not share it at once
const writingPaths = new Map<string, Promise<unknown>>()

export class ShardFileFetch {
  constructor (
    private readonly ctx: ShardContext, private readonly fetcher: ShardFetch,
    private readonly retention: ShardRetention, private readonly providers: ShardProviders
  ) {}

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
  async fetchToFile (root: CID | string, path: string, opts: FetchToFileOptions = {}): Promise<FileFetchResult> {
    const cid = typeof root === 'string' ? parseShardCid(root) : root
    if (cid.code !== DAG_CBOR_CODEC) throw new Error(`${cid.toString()} is a raw block, not a shard root (manifest)`)
    const out = resolve(path)
    const key = cid.toString()
    // one writer per output path in this process (they would share the part file)
    return await perPath(out, async () => {
      for (let i = 0; i < 3; i++) {
        // another fetch of this root running: wait, then write from local blocks
        const running = this.fetcher.running.get(key)
        if (running != null) await running.catch(() => {})
        if (opts.copy === true || await hasShard(this.ctx.store, cid)) {
          const r = await this.fetcher.fetch(cid, opts)
          const sha256 = await writeShardFile(this.ctx.store, cid, out)
          return { ...r, out: path, sha256 }
        }
        if (this.fetcher.running.has(key)) continue // one started meanwhile
        const p = this.doFetchToFile(cid, out, opts)
        const plain = p.then(({ out: _o, sha256: _s, ...r }) => r)
        plain.catch(() => {}) // the caller sees the error through p
        this.fetcher.running.set(key, plain)
        try {
          return { ...await p, out: path }
        } finally { this.fetcher.running.delete(key) }
      }
      throw new Error(`${key}: other fetches of this shard keep failing`)
    })
  }

  private async doFetchToFile (root: CID, out: string, opts: FetchToFileOptions): Promise<FileFetchResult> {
    const f = this.fetcher.begin(root, opts)
    const { key, started, cpu0, deps, source } = f
    const { store, log } = this.ctx
    let part: Awaited<ReturnType<typeof openPartFile>> | undefined
    let closed = false
    let keepPart = false // an interrupted fetch keeps the verified blocks it wrote, for the next call
    try {
      const { manifest: m, blockOpts, startSource } = await this.fetcher.loadManifest(root, opts, f)
      await this.retention.upsertRoot(key, m, false, 'fetched', opts)
      const offsets: number[] = []
      let off = 0
      for (const b of m.blocks) { offsets.push(off); off += b.size }
      const hash = opts.contentHash === false ? undefined : new InOrderHash(m.blocks.map(b => b.size))
      part = await openPartFile(out)
      const fh = part.fh
      // Which blocks are already here: in a part file left by an earlier call
      // (each checked against its CID), or in the store (copied, or by
      // reference to another file: written into this one). The rest is fetched.
      const localMissing = new Set(await store.missing(m))
      const missing: number[] = []
      let alreadyHad = 0
      for (let i = 0; i < m.blocks.length; i++) {
        const b = m.blocks[i]
        if (part.resumed) {
          const bytes = await readAt(fh, offsets[i], b.size)
          if (bytes.length === b.size && blockMatches(b.cid, bytes)) { hash?.add(i, bytes); alreadyHad++; continue }
        }
        const bytes = localMissing.has(i) ? undefined : await store.get(b.cid)
        if (bytes != null) { await writeAt(fh, offsets[i], bytes); hash?.add(i, bytes); alreadyHad++; continue }
        missing.push(i)
      }
      await fh.truncate(m.size) // a part file from a larger content: cut
      if (alreadyHad > 0 && part.resumed) log.info({ root: key, out, alreadyHad, missing: missing.length }, 'resuming a shard fetch into a file')
      let haveBytes = m.size - missing.reduce((s, i) => s + m.blocks[i].size, 0)
      let fetchedBytes = 0
      let haveBlocks = alreadyHad
      const progress = (): void => opts.onProgress?.({
        root: key, totalBlocks: m.blocks.length, haveBlocks, totalBytes: m.size, haveBytes, fetchedBytes, providers: source.stats.size
      })
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
      await store.addRefs(m.blocks.map((b, i) => ({
        cid: b.cid,
        ref: { root: key, path: out, offset: offsets[i], size: b.size, fileSize: st.size, mtimeMs: st.mtimeMs }
      })))
      await this.retention.exclusive(async () => await this.retention.upsertRoot(key, m, true, 'fetched', opts, { path: out }))
      if (opts.provide !== false) this.providers.provideInBackground(root)
      const result = {
        ...fetchResult(key, m, { alreadyHad, fetched: missing.length, fetchedBytes, started, transferStart, cpu0, source }),
        out,
        sha256
      }
      log.info({ ...result, providers: result.providers.map(p => ({ ...p, peerId: p.peerId.slice(-8) })) }, 'shard fetched into a file')
      return result
    } catch (err) {
      if (part != null) {
        if (!closed) await part.fh.close().catch(() => {})
        if (!keepPart) await rm(part.tmp, { force: true }).catch(() => {})
      }
      throw err
    } finally {
      this.fetcher.end(f)
    }
  }
}

async function perPath<T> (path: string, f: () => Promise<T>): Promise<T> {
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
