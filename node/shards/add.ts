import { open, stat } from 'node:fs/promises'
import { resolve } from 'node:path'
import type { CID } from 'multiformats/cid'
import { MAX_BLOCK_BYTES, buildManifest, chunk, cidOf, maxContentBytes, type ManifestBlock, type ShardMeta } from '../../protocols/shards/index.js'
import type { ShardProviders } from './providers.js'
import type { ShardRetention } from './retention.js'
import type { AddFileOptions, AddOptions, AddResult, ShardContext } from './types.js'

// Adding content: chunk it into blocks, store them (or references to the
// file they are in) and their manifest, record the root, announce it.

export class ShardAdder {
  constructor (private readonly ctx: ShardContext, private readonly retention: ShardRetention, private readonly providers: ShardProviders) {}

  /** Chunks bytes into ≤ 1 MiB blocks, stores them and their manifest, announces the root. */
  async addBytes (bytes: Uint8Array, meta: ShardMeta = {}, opts: AddOptions = {}): Promise<AddResult> {
    if (bytes.length > maxContentBytes()) throw new Error(`content over ${maxContentBytes()} bytes`)
    const { store } = this.ctx
    return await this.retention.exclusive(async () => {
      const blocks: ManifestBlock[] = []
      let batch: Array<{ cid: CID, bytes: Uint8Array }> = []
      for (const c of chunk(bytes)) {
        blocks.push({ cid: c.cid, size: c.bytes.length })
        batch.push(c)
        if (batch.length >= 8) { await store.putMany(batch); batch = [] }
      }
      await store.putMany(batch)
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
    const { store } = this.ctx
    return await this.retention.exclusive(async () => {
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
          await store.put(cid, b)
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
    return await this.retention.exclusive(async () => {
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
      await this.ctx.store.addRefs(ranges.map(r => ({
        cid: r.cid,
        ref: { root, path, offset: r.offset, size: r.size, fileSize: after.size, mtimeMs: after.mtimeMs }
      })))
      return await this.finishAdd(blocks, named, opts, { path }, blockSize)
    })
  }

  private async finishAdd (blocks: ManifestBlock[], meta: ShardMeta, opts: AddOptions, byReference?: { path: string }, blockSize?: number): Promise<AddResult> {
    const { manifest, bytes, cid } = buildManifest(blocks, meta, blockSize)
    await this.ctx.store.put(cid, bytes)
    const rec = await this.retention.upsertRoot(cid.toString(), manifest, true, 'added', opts, byReference ?? null)
    if (opts.provide !== false) this.providers.provideInBackground(cid)
    this.ctx.log.info({ cid: rec.cid, size: manifest.size, blocks: blocks.length, kind: manifest.kind, byReference: byReference?.path }, 'shard added')
    return {
      cid: rec.cid, name: manifest.name, kind: manifest.kind, size: manifest.size, blocks: blocks.length,
      ...(rec.byReference != null ? { byReference: true } : {})
    }
  }
}
