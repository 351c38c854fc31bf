import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { Level } from 'level'
import { CID } from 'multiformats/cid'
import type { Logger } from 'pino'
import { blockMatches, decodeManifest, type Manifest } from '../../protocols/shards/index.js'
import { parseRefs, readRef, statFile, type FileId, type FileStat } from './ref-files.js'
import type { BlockRef, RootRecord } from './root-records.js'

// Shards live in their own LevelDB, data-dir/shards: sublevel "blocks" (key:
// CID string, value: bytes) and "roots" (one record per root: what it is,
// whether all its blocks are here, and what keeps it alive — a pin, or
// retention holds until a chain block / a time), and "refs" (key: CID string,
// value: JSON list of BlockRef) for blocks added by reference: the bytes stay
// in the caller's file (a solver's checkpoints in its run directory) and are
// read — and checked against their CID — each time the block is read.
//
// Why not a sublevel of the peer's DB: with LevelDB's default 4 MiB write
// buffer, 1 MiB values fill a memtable every 4 blocks, level-0 files pile up
// and LevelDB throttles writes: measured 46–149 MiB/s for 50 MiB of puts,
// below the ≥100 MiB/s fetch goal. A 32 MiB buffer measured 147–314 MiB/s.
// Its own instance also keeps bulk compactions away from the peer's small
// records. Compression is off: checkpoint floats do not compress.

export const SHARD_DB_OPTIONS = { writeBufferSize: 32 * 1024 * 1024, maxFileSize: 16 * 1024 * 1024, compression: false } as const

export async function openShardDb (dataDir: string): Promise<Level<string, Uint8Array>> {
  await mkdir(dataDir, { recursive: true })
  const db = new Level<string, Uint8Array>(join(dataDir, 'shards'), { valueEncoding: 'view', ...SHARD_DB_OPTIONS })
  try {
    await db.open()
  } catch (err) {
    const cause = (err as { cause?: { message?: string } }).cause?.message ?? (err as Error).message
    throw new Error(`cannot open the shard store in ${join(dataDir, 'shards')}: ${cause}`)
  }
  return db
}

const enc = new TextEncoder()
const dec = new TextDecoder()

export class BlockStore {
  readonly blocks: Level<string, Uint8Array>
  readonly roots: Level<string, Uint8Array>
  readonly refs: Level<string, Uint8Array>
  /** roots already warned about a broken reference (one warning per root) */
  private readonly warned = new Set<string>()
  /** ref lists are read-modify-written: one writer at a time (reads refresh stats outside the service's lock) */
  private refLock: Promise<unknown> = Promise.resolve()
  /**
   * Ref lists by key, as in LevelDB (a served block's refs were a LevelDB
   * read per block). Every write of refs goes through this class and updates
   * it; `refGen` keeps a read that raced with a write from caching old data.
   */
  private readonly refCache = new Map<string, BlockRef[]>()
  private refGen = 0
  /** referenced ranges whose bytes matched their CID, with the file's identity then (see readRef) */
  private readonly verified = new Map<string, FileId>()
  /** blocks found corrupt on read and dropped (count), for status and metrics */
  corruptDropped = 0

  constructor (readonly db: Level<string, Uint8Array>, private readonly log?: Logger) {
    this.blocks = db.sublevel<string, Uint8Array>('blocks', { valueEncoding: 'view' }) as unknown as Level<string, Uint8Array>
    this.roots = db.sublevel<string, Uint8Array>('roots', { valueEncoding: 'view' }) as unknown as Level<string, Uint8Array>
    this.refs = db.sublevel<string, Uint8Array>('refs', { valueEncoding: 'view' }) as unknown as Level<string, Uint8Array>
  }

  static async open (dataDir: string, log?: Logger): Promise<BlockStore> {
    return new BlockStore(await openShardDb(dataDir), log)
  }

  async close (): Promise<void> { await this.db.close() }

  /**
   * A stored block, or one added by reference read from its file. A
   * referenced range that no longer hashes to its CID (file changed,
   * truncated, deleted, unreadable) counts as absent: wrong bytes are never
   * returned.
   */
  async get (cid: CID | string): Promise<Uint8Array | undefined> {
    return await this.load(cid, 0)
  }

  /**
   * Like get, into a new buffer with `headroom` free bytes before the block
   * (the server puts its response header there: a referenced block is read
   * straight into its response frame, no 1 MiB copy).
   */
  async getFramed (cid: CID | string, headroom: number): Promise<Uint8Array | undefined> {
    return await this.load(cid, headroom)
  }

  private async load (cid: CID | string, headroom: number): Promise<Uint8Array | undefined> {
    const key = cid.toString()
    const c0 = typeof cid === 'string' ? CID.parse(cid) : cid
    let v: Uint8Array | undefined = await this.blocks.get(key)
    // a block that no longer hashes to its CID (disk corruption, tampering) is never
    // returned nor served: it is dropped, so the shard reads as incomplete and is fetched again
    if (v != null && !blockMatches(c0, v)) {
      await this.blocks.del(key)
      this.corruptDropped++
      this.log?.warn({ cid: key }, 'stored block does not match its CID: dropped (it will be fetched again)')
      v = undefined
    }
    if (v != null) {
      if (headroom === 0) return v
      const out = new Uint8Array(headroom + v.length)
      out.set(v, headroom)
      return out
    }
    const refs = await this.getRefs(key)
    if (refs.length === 0) return undefined
    const c = typeof cid === 'string' ? CID.parse(cid) : cid
    for (const ref of refs) {
      const r = await readRef(ref, c, this.verified, headroom)
      if (r.bytes != null) return r.bytes
      this.warnBroken(ref, key, r.reason)
    }
    return undefined
  }

  async has (cid: CID | string): Promise<boolean> {
    const key = cid.toString()
    if (await this.blocks.has(key)) return await this.load(cid, 0) != null
    return await this.refPresent(key, await this.getRefs(key))
  }

  async put (cid: CID | string, bytes: Uint8Array): Promise<void> {
    await this.blocks.put(cid.toString(), bytes)
  }

  async putMany (entries: Array<{ cid: CID | string, bytes: Uint8Array }>): Promise<void> {
    if (entries.length === 0) return
    await this.blocks.batch(entries.map(e => ({ type: 'put' as const, key: e.cid.toString(), value: e.bytes })))
  }

  async manifest (root: CID | string): Promise<Manifest | undefined> {
    const bytes = await this.get(root)
    return bytes == null ? undefined : decodeManifest(bytes)
  }

  async getRoot (root: CID | string): Promise<RootRecord | undefined> {
    const v = await this.roots.get(root.toString())
    return v == null ? undefined : JSON.parse(dec.decode(v)) as RootRecord
  }

  async putRoot (r: RootRecord): Promise<void> {
    await this.roots.put(r.cid, enc.encode(JSON.stringify(r)))
  }

  async deleteRoot (root: string): Promise<void> {
    await this.roots.del(root)
  }

  async listRoots (): Promise<RootRecord[]> {
    const out: RootRecord[] = []
    for await (const v of this.roots.values()) out.push(JSON.parse(dec.decode(v)) as RootRecord)
    return out
  }

  async* blockKeys (): AsyncGenerator<string> {
    for await (const k of this.blocks.keys()) yield k
  }

  async deleteBlocks (keys: string[]): Promise<void> {
    if (keys.length === 0) return
    await this.blocks.batch(keys.map(key => ({ type: 'del' as const, key })))
  }

  /** Indices of the root's blocks not stored yet (nor available by a valid reference). */
  async missing (m: Manifest): Promise<number[]> {
    const keys = m.blocks.map(b => b.cid.toString())
    const out: number[] = []
    // hasMany batches the lookups and copies no values
    const CHUNK = 1024
    for (let i = 0; i < keys.length; i += CHUNK) {
      const vals = await this.blocks.hasMany(keys.slice(i, i + CHUNK))
      const absent: number[] = []
      vals.forEach((v, j) => { if (!v) absent.push(i + j) })
      if (absent.length === 0) continue
      const refVals = await this.refs.getMany(absent.map(k => keys[k]))
      const stats = new Map<string, Promise<FileStat | undefined>>()
      for (let j = 0; j < absent.length; j++) {
        const rv = refVals[j]
        if (rv == null || !(await this.refPresent(keys[absent[j]], parseRefs(rv), stats))) out.push(absent[j])
      }
    }
    return out
  }

  // ---- references --------------------------------------------------------

  async getRefs (cid: CID | string): Promise<BlockRef[]> {
    const key = cid.toString()
    const cached = this.refCache.get(key)
    if (cached != null) return [...cached]
    const gen = this.refGen
    const v = await this.refs.get(key)
    const list = v == null ? [] : parseRefs(v)
    if (gen === this.refGen) {
      if (this.refCache.size >= 16_384) this.refCache.clear()
      this.refCache.set(key, [...list])
    }
    return list
  }

  private refsWritten (keys: Iterable<string>): void {
    this.refGen++
    for (const k of keys) this.refCache.delete(k)
  }

  /** Records where blocks of `root` live (a block may have refs from several roots/files). */
  async addRefs (entries: Array<{ cid: CID | string, ref: BlockRef }>): Promise<void> {
    if (entries.length === 0) return
    await this.refsExclusive(async () => await this.mergeRefs(entries, true))
  }

  private async mergeRefs (entries: Array<{ cid: CID | string, ref: BlockRef }>, append: boolean): Promise<void> {
    const byKey = new Map<string, BlockRef[]>()
    for (const e of entries) {
      const key = e.cid.toString()
      let list = byKey.get(key)
      if (list == null) { list = await this.getRefs(key); byKey.set(key, list) }
      const i = list.findIndex(r => r.root === e.ref.root && r.path === e.ref.path && r.offset === e.ref.offset)
      if (i >= 0) list[i] = e.ref
      else if (append) list.push(e.ref)
    }
    try {
      await this.refs.batch([...byKey].map(([key, list]) => ({ type: 'put' as const, key, value: enc.encode(JSON.stringify(list)) })))
    } finally { this.refsWritten(byKey.keys()) }
  }

  async* refEntries (): AsyncGenerator<[string, BlockRef[]]> {
    for await (const [k, v] of this.refs.iterator()) yield [k, parseRefs(v)]
  }

  /** Replaces the refs of each key (an empty list deletes the key). */
  async setRefs (entries: Array<[string, BlockRef[]]>): Promise<void> {
    if (entries.length === 0) return
    await this.refsExclusive(async () => {
      try {
        await this.refs.batch(entries.map(([key, list]) => list.length === 0
          ? { type: 'del' as const, key }
          : { type: 'put' as const, key, value: enc.encode(JSON.stringify(list)) }))
      } finally { this.refsWritten(entries.map(([key]) => key)) }
    })
  }

  private async refsExclusive<T> (f: () => Promise<T>): Promise<T> {
    const run = this.refLock.catch(() => {}).then(f)
    this.refLock = run
    return await run
  }

  /**
   * Is one of the refs usable? Cheap when the file's size and mtime are as
   * recorded (a stat); otherwise the range is read and hashed, and a ref that
   * still matches gets the new stat recorded. The bytes are checked again
   * whenever they are read (get), so a stale "yes" here never serves wrong bytes.
   */
  private async refPresent (key: string, refs: BlockRef[], stats = new Map<string, Promise<FileStat | undefined>>()): Promise<boolean> {
    if (refs.length === 0) return false
    for (const ref of refs) {
      let st = stats.get(ref.path)
      if (st == null) { st = statFile(ref.path); stats.set(ref.path, st) }
      const s = await st
      if (s != null && s.size === ref.fileSize && s.mtimeMs === ref.mtimeMs) return true
    }
    const cid = CID.parse(key)
    for (const ref of refs) {
      const r = await readRef(ref, cid, this.verified)
      if (r.bytes == null) { this.warnBroken(ref, key, r.reason); continue }
      const s = await statFile(ref.path)
      // update only: a ref GC dropped meanwhile must not come back
      if (s != null) await this.refsExclusive(
        async () => await this.mergeRefs([{ cid: key, ref: { ...ref, fileSize: s.size, mtimeMs: s.mtimeMs } }], false)
      ).catch(() => {})
      return true
    }
    return false
  }

  private warnBroken (ref: BlockRef, block: string, reason: string): void {
    if (this.warned.has(ref.root)) return
    this.warned.add(ref.root)
    this.log?.warn({ root: ref.root, path: ref.path, block, reason },
      'a shard added by reference no longer matches its file (changed, truncated or deleted): its blocks count as missing and are not served')
  }
}
