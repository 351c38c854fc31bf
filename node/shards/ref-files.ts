import { open, stat } from 'node:fs/promises'
import type { CID } from 'multiformats/cid'
import { blockMatches } from '../../protocols/shards/index.js'
import type { BlockRef } from './root-records.js'

// Reading blocks added by reference: a byte range of a file outside the
// store, checked against its CID (and a cache of ranges already checked).

const dec = new TextDecoder()

export interface FileStat { size: number, mtimeMs: number }

export async function statFile (path: string): Promise<FileStat | undefined> {
  try {
    const s = await stat(path)
    return s.isFile() ? { size: s.size, mtimeMs: s.mtimeMs } : undefined
  } catch { return undefined }
}

/** What identifies a file's state: any write, truncation or utimes sets ctime to the current time; a replaced file has another inode. */
export interface FileId { dev: bigint, ino: bigint, size: bigint, mtimeNs: bigint, ctimeNs: bigint }

function fileId (s: { dev: bigint, ino: bigint, size: bigint, mtimeNs: bigint, ctimeNs: bigint }): FileId {
  return { dev: s.dev, ino: s.ino, size: s.size, mtimeNs: s.mtimeNs, ctimeNs: s.ctimeNs }
}

function sameFile (a: FileId, b: FileId): boolean {
  return a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs
}

/** A file whose ctime is this much older than a check cannot change later without its ctime changing (coarse fs clocks tick in ms). */
const SETTLED_NS = 2_000_000_000n
const VERIFIED_MAX = 16_384

/**
 * Reads a referenced range and checks it against its CID. The sha256 is
 * skipped when this range was verified before and the open file's identity
 * (device, inode, size, mtime, ctime) is, before and after the read, what it
 * was at that check — and the file had settled then (ctime over 2 s older
 * than the check): any later write, truncation or utimes would have set
 * ctime to a later time, and a file renamed over it has another inode, so
 * the bytes read are the bytes verified. (A system clock stepped back by
 * over 2 s, or writes to the raw disk, are not covered.)
 */
export async function readRef (ref: BlockRef, cid: CID, verified: Map<string, FileId>, headroom = 0): Promise<{ bytes?: Uint8Array, reason: string }> {
  let fh
  try {
    fh = await open(ref.path, 'r')
    const checkedAt = BigInt(Date.now()) * 1_000_000n
    const before = fileId(await fh.stat({ bigint: true }))
    const out = new Uint8Array(headroom + ref.size)
    const buf = out.subarray(headroom)
    let n = 0
    while (n < buf.length) {
      const r = await fh.read(buf, n, buf.length - n, ref.offset + n)
      if (r.bytesRead === 0) break
      n += r.bytesRead
    }
    if (n < buf.length) return { reason: `file too short: ${n} of ${ref.size} bytes at offset ${ref.offset}` }
    const after = fileId(await fh.stat({ bigint: true }))
    const key = `${ref.path}\0${ref.offset}\0${ref.size}\0${cid.toString()}`
    const known = verified.get(key)
    const unchanged = sameFile(before, after)
    if (known != null && unchanged && sameFile(known, before)) return { bytes: out, reason: '' }
    if (!blockMatches(cid, buf)) { verified.delete(key); return { reason: 'bytes do not match the block CID (file changed)' } }
    if (unchanged && before.ctimeNs < checkedAt - SETTLED_NS) {
      if (verified.size >= VERIFIED_MAX) verified.clear()
      verified.set(key, before)
    }
    return { bytes: out, reason: '' }
  } catch (err) {
    return { reason: (err as NodeJS.ErrnoException).code ?? (err as Error).message }
  } finally {
    await fh?.close().catch(() => {})
  }
}

export function parseRefs (v: Uint8Array): BlockRef[] {
  try {
    const list = JSON.parse(dec.decode(v)) as unknown
    return Array.isArray(list) ? list as BlockRef[] : []
  } catch { return [] }
}
