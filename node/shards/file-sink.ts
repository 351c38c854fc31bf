import { createHash, type Hash } from 'node:crypto'
import { open, readdir, rename, rm, type FileHandle } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'

// Helpers for fetchToFile writing blocks straight into the output file:
// the temp file (`<path>.part-<pid>`, adopted from a dead process to resume),
// positional reads/writes, and the content sha256 computed in order while
// blocks arrive out of order.

/**
 * Opens `<path>.part-<pid>` for writing. A part file left by this process
 * (an aborted fetch) or by a process that no longer runs (a killed peer) is
 * reused so its blocks need not be fetched again — the caller checks each
 * block against its CID before trusting it. Part files of live processes are
 * left alone (another peer may be writing them).
 */
export async function openPartFile (path: string): Promise<{ tmp: string, fh: FileHandle, resumed: boolean }> {
  const tmp = `${path}.part-${process.pid}`
  const prefix = `${basename(path)}.part-`
  let resumed = false
  let names: string[] = []
  try { names = await readdir(dirname(path)) } catch { /* no directory yet: open() reports it */ }
  if (names.includes(basename(tmp))) resumed = true
  for (const n of names) {
    if (!n.startsWith(prefix)) continue
    const pid = Number(n.slice(prefix.length))
    if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid || alive(pid)) continue
    if (!resumed) {
      // rename is atomic: two processes adopting the same file cannot both get it
      try { await rename(join(dirname(path), n), tmp); resumed = true; continue } catch { /* taken by another process */ }
    }
    await rm(join(dirname(path), n), { force: true }).catch(() => {})
  }
  // read and write: blocks may be read back for the content hash
  const fh = await open(tmp, resumed ? 'r+' : 'w+')
  return { tmp, fh, resumed }
}

function alive (pid: number): boolean {
  try { process.kill(pid, 0); return true } catch (err) { return (err as NodeJS.ErrnoException).code === 'EPERM' }
}

/** Reads exactly `size` bytes at `offset` (fewer if the file is shorter). */
export async function readAt (fh: FileHandle, offset: number, size: number, buf = new Uint8Array(size)): Promise<Uint8Array> {
  let n = 0
  while (n < size) {
    const r = await fh.read(buf, n, size - n, offset + n)
    if (r.bytesRead === 0) break
    n += r.bytesRead
  }
  return buf.subarray(0, n)
}

export async function writeAt (fh: FileHandle, offset: number, bytes: Uint8Array): Promise<void> {
  let n = 0
  while (n < bytes.length) {
    const r = await fh.write(bytes, n, bytes.length - n, offset + n)
    n += r.bytesWritten
  }
}

/** Writes a block given as chunks at `offset` (one writev; no copy into one buffer). */
export async function writeChunksAt (fh: FileHandle, offset: number, chunks: Uint8Array[]): Promise<void> {
  if (chunks.length === 1) return await writeAt(fh, offset, chunks[0])
  const total = chunks.reduce((n, c) => n + c.length, 0)
  const r = await fh.writev(chunks, offset)
  if (r.bytesWritten === total) return
  // a short writev (rare): write the rest piece by piece
  let skip = r.bytesWritten
  let pos = offset + skip
  for (const c of chunks) {
    if (skip >= c.length) { skip -= c.length; continue }
    await writeAt(fh, pos, c.subarray(skip))
    pos += c.length - skip
    skip = 0
  }
}

/**
 * sha256 of the whole content while blocks arrive in any order: a block is
 * hashed when every block before it has been; out-of-order blocks wait in
 * memory up to `maxPending` bytes, beyond that they are read back from the
 * file when their turn comes (finish). For a fetch from one provider — the
 * usual case — blocks come in order and nothing is read back.
 */
export class InOrderHash {
  private readonly h: Hash = createHash('sha256')
  private next = 0
  private readonly pending = new Map<number, Uint8Array | Uint8Array[]>()
  private pendingBytes = 0

  constructor (private readonly sizes: number[], private readonly maxPending = 16 * 1024 * 1024) {}

  /** `bytes`: the block, or the chunks it arrived in. */
  add (index: number, bytes: Uint8Array | Uint8Array[]): void {
    if (index < this.next || this.pending.has(index)) return
    if (index !== this.next) {
      const n = sizeOf(bytes)
      if (this.pendingBytes + n <= this.maxPending) { this.pending.set(index, bytes); this.pendingBytes += n }
      return
    }
    this.update(bytes)
    this.next++
    for (let b = this.pending.get(this.next); b != null; b = this.pending.get(this.next)) {
      this.pending.delete(this.next)
      this.pendingBytes -= sizeOf(b)
      this.update(b)
      this.next++
    }
  }

  private update (bytes: Uint8Array | Uint8Array[]): void {
    if (bytes instanceof Uint8Array) this.h.update(bytes)
    else for (const c of bytes) this.h.update(c)
  }

  /** Hashes the blocks not hashed yet, reading them from `fh` (all written by now). */
  async finish (fh: FileHandle, offsets: number[]): Promise<string> {
    while (this.next < this.sizes.length) {
      const i = this.next
      const b = this.pending.get(i) ?? await readAt(fh, offsets[i], this.sizes[i])
      if (sizeOf(b) !== this.sizes[i]) throw new Error(`block ${i} of the output file is short (${sizeOf(b)} of ${this.sizes[i]} bytes)`)
      this.add(i, b)
    }
    return this.h.digest('hex')
  }
}

function sizeOf (b: Uint8Array | Uint8Array[]): number {
  return b instanceof Uint8Array ? b.length : b.reduce((n, c) => n + c.length, 0)
}
