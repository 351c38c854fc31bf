import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { randomBytes } from 'node:crypto'
import { open, rm, stat, utimes, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { pino } from 'pino'
import { MAX_BLOCK_BYTES, buildManifest, chunk, type Chunk } from '../../../protocols/shards/index.js'
import { BlockStore } from '../../../node/shards/store.js'
import type { BlockRef } from '../../../node/shards/root-records.js'
import { tempDir } from '../../helpers/procs.js'

// BlockStore references (blocks added by reference) on a real LevelDB in a
// temp dir: reads fall back to the file, every read is checked against the
// CID, a changed / truncated / deleted file makes the block absent, and the
// warning is logged once per root.

let dir: { path: string, cleanup: () => Promise<void> }
let store: BlockStore
const warnings: Array<{ msg: string, root: string, block: string, reason: string }> = []

beforeAll(async () => {
  dir = await tempDir('proofswarm-refs-')
  const sink = new Writable({ write (line: Buffer, _e, cb) { const j = JSON.parse(line.toString()); if (j.level === 40) warnings.push(j); cb() } })
  store = await BlockStore.open(join(dir.path, 'peer'), pino({ level: 'warn' }, sink))
})

afterAll(async () => {
  await store?.close()
  await dir?.cleanup()
})

/** Writes `bytes` to a file and records refs for its blocks (as addFile byReference does). */
async function addByRef (name: string, bytes: Uint8Array): Promise<{ path: string, root: string, chunks: Chunk[] }> {
  const path = join(dir.path, name)
  await writeFile(path, bytes)
  const chunks = [...chunk(bytes)]
  const root = buildManifest(chunks.map(c => ({ cid: c.cid, size: c.bytes.length })), { name }).cid.toString()
  const st = await stat(path)
  let offset = 0
  const entries: Array<{ cid: string, ref: BlockRef }> = []
  for (const c of chunks) {
    entries.push({ cid: c.cid.toString(), ref: { root, path, offset, size: c.bytes.length, fileSize: st.size, mtimeMs: st.mtimeMs } })
    offset += c.bytes.length
  }
  await store.addRefs(entries)
  return { path, root, chunks }
}

describe('block store references', () => {
  it('serves referenced blocks from the file, verified, without storing a copy', async () => {
    const data = randomBytes(2 * MAX_BLOCK_BYTES + 4321)
    const { root, chunks } = await addByRef('a.bin', data)
    expect(chunks).toHaveLength(3)
    for (const c of chunks) {
      expect(Buffer.from((await store.get(c.cid))!).equals(Buffer.from(c.bytes))).toBe(true)
      expect(await store.get(c.cid.toString())).toBeDefined() // string keys too
      expect(await store.has(c.cid)).toBe(true)
      expect(await store.blocks.has(c.cid.toString())).toBe(false)
    }
    const m = { blocks: chunks.map(c => ({ cid: c.cid, size: c.bytes.length })) }
    expect(await store.missing(m as any)).toEqual([])
    expect(warnings.filter(w => w.root === root)).toHaveLength(0)
  })

  it('a changed byte makes only that block absent (never wrong bytes); one warning per root', async () => {
    const data = randomBytes(3 * MAX_BLOCK_BYTES)
    const { path, root, chunks } = await addByRef('b.bin', data)
    const fh = await open(path, 'r+')
    await fh.write(Buffer.from([data[MAX_BLOCK_BYTES + 10] ^ 0xff]), 0, 1, MAX_BLOCK_BYTES + 10)
    await fh.close()
    expect(await store.get(chunks[1].cid)).toBeUndefined()
    expect(await store.get(chunks[1].cid)).toBeUndefined()
    expect(Buffer.from((await store.get(chunks[0].cid))!).equals(Buffer.from(chunks[0].bytes))).toBe(true)
    expect(await store.has(chunks[1].cid)).toBe(false)
    const m = { blocks: chunks.map(c => ({ cid: c.cid, size: c.bytes.length })) }
    expect(await store.missing(m as any)).toEqual([1])
    const w = warnings.filter(x => x.root === root)
    expect(w).toHaveLength(1)
    expect(w[0].reason).toMatch(/do not match/)
    expect(w[0].block).toBe(chunks[1].cid.toString())
  })

  it('a truncated or deleted file: its blocks are absent, reads do not throw', async () => {
    const data = randomBytes(MAX_BLOCK_BYTES + 99)
    const { path, chunks } = await addByRef('c.bin', data)
    await writeFile(path, data.subarray(0, MAX_BLOCK_BYTES + 50))
    expect(await store.get(chunks[1].cid)).toBeUndefined()
    expect(await store.get(chunks[0].cid)).toBeDefined()
    await rm(path)
    for (const c of chunks) {
      expect(await store.get(c.cid)).toBeUndefined()
      expect(await store.has(c.cid)).toBe(false)
    }
  })

  it('a touched but unchanged file: re-verified once, then trusted by stat again', async () => {
    const data = randomBytes(1000)
    const { path, chunks } = await addByRef('d.bin', data)
    const later = new Date(Date.now() + 60_000)
    await utimes(path, later, later)
    expect(await store.has(chunks[0].cid)).toBe(true)
    const [ref] = await store.getRefs(chunks[0].cid)
    expect(ref.mtimeMs).toBe((await stat(path)).mtimeMs)
    expect(Math.abs(ref.mtimeMs - later.getTime())).toBeLessThan(1)
  })

  it('a block referenced from two files is served while either still matches', async () => {
    const data = randomBytes(5000)
    const a = await addByRef('e1.bin', data)
    await addByRef('e2.bin', data)
    expect(await store.getRefs(a.chunks[0].cid)).toHaveLength(2)
    await rm(a.path)
    expect(Buffer.from((await store.get(a.chunks[0].cid))!).equals(Buffer.from(data))).toBe(true)
  })

  it('a settled file verified once is served without re-hashing until it changes; an in-place change with its mtime restored is still caught', async () => {
    const data = randomBytes(MAX_BLOCK_BYTES + 500)
    const { path, chunks } = await addByRef('f.bin', data)
    // a whole-second mtime, so that it can be put back exactly after the change below
    const t = Math.floor(Date.now() / 1000) - 3600
    await utimes(path, t, t)
    const verified = (store as unknown as { verified: Map<string, unknown> }).verified
    const key = (i: number): string => `${path}\0${i * MAX_BLOCK_BYTES}\0${chunks[i].bytes.length}\0${chunks[i].cid.toString()}`
    // just written: hashed on every read, not remembered (a same-tick write would keep ctime)
    expect(await store.get(chunks[0].cid)).toBeDefined()
    expect(verified.has(key(0))).toBe(false)
    await new Promise(resolve => setTimeout(resolve, 2100))
    expect(Buffer.from((await store.get(chunks[0].cid))!).equals(Buffer.from(chunks[0].bytes))).toBe(true)
    expect(verified.has(key(0))).toBe(true)
    expect(Buffer.from((await store.get(chunks[0].cid))!).equals(Buffer.from(chunks[0].bytes))).toBe(true)
    // change a byte in place, same size, mtime put back: ctime moved, so the bytes are hashed and refused
    const before = await stat(path)
    const fh = await open(path, 'r+')
    await fh.write(Buffer.from([data[7] ^ 0xff]), 0, 1, 7)
    await fh.close()
    await utimes(path, t, t)
    expect((await stat(path)).mtimeMs).toBe(before.mtimeMs)
    expect((await stat(path)).size).toBe(before.size)
    expect(await store.get(chunks[0].cid)).toBeUndefined()
    expect(verified.has(key(0))).toBe(false)
    // the other block of the file still matches and is served
    expect(Buffer.from((await store.get(chunks[1].cid))!).equals(Buffer.from(chunks[1].bytes))).toBe(true)
  })

  it('getFramed: the block after free room, a fresh buffer, from a referenced file or a stored copy', async () => {
    const data = randomBytes(MAX_BLOCK_BYTES + 10)
    const { chunks } = await addByRef('h.bin', data)
    await store.put(chunks[1].cid, chunks[1].bytes) // the second block stored by copy as well
    for (const c of chunks) {
      const f = (await store.getFramed(c.cid, 5))!
      expect(f.length).toBe(5 + c.bytes.length)
      expect(Buffer.from(f.subarray(5)).equals(Buffer.from(c.bytes))).toBe(true)
      f.fill(0) // scribbling on it changes nothing stored
      expect(Buffer.from((await store.get(c.cid))!).equals(Buffer.from(c.bytes))).toBe(true)
    }
  })

  it('ref lists are cached and follow every write (add, replace, drop)', async () => {
    const data = randomBytes(3000)
    const a = await addByRef('g1.bin', data)
    expect(await store.getRefs(a.chunks[0].cid)).toHaveLength(1)
    await addByRef('g2.bin', data)
    expect(await store.getRefs(a.chunks[0].cid)).toHaveLength(2)
    await store.setRefs([[a.chunks[0].cid.toString(), []]])
    expect(await store.getRefs(a.chunks[0].cid)).toHaveLength(0)
    expect(await store.get(a.chunks[0].cid)).toBeUndefined()
  })
})
