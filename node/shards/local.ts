import { open, rename, rm } from 'node:fs/promises'
import { createHash } from 'node:crypto'
import type { CID } from 'multiformats/cid'
import type { Manifest } from '../../protocols/shards/index.js'
import type { BlockStore } from './store.js'

// Reading shards that are stored here in full: no network.

/** True when the shard's manifest and all its blocks are stored here. */
export async function hasShard (store: BlockStore, root: CID | string): Promise<boolean> {
  const m = await store.manifest(root.toString()).catch(() => undefined)
  return m != null && (await store.missing(m)).length === 0
}

/** The content of a complete local shard. */
export async function readShard (store: BlockStore, root: CID | string): Promise<Uint8Array> {
  const m = await requireComplete(store, root)
  const out = new Uint8Array(m.size)
  let off = 0
  for (const b of m.blocks) {
    const bytes = await store.get(b.cid)
    if (bytes == null) throw new Error(`block ${b.cid.toString()} of ${root.toString()} is missing`)
    out.set(bytes, off)
    off += bytes.length
  }
  return out
}

/** Writes a complete local shard to a file; returns the content's sha256 (hex). */
export async function writeShardFile (store: BlockStore, root: CID | string, path: string): Promise<string> {
  const m = await requireComplete(store, root)
  const tmp = `${path}.part-${process.pid}`
  const fh = await open(tmp, 'w')
  const h = createHash('sha256')
  try {
    for (const b of m.blocks) {
      const bytes = await store.get(b.cid)
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

async function requireComplete (store: BlockStore, root: CID | string): Promise<Manifest> {
  const key = root.toString()
  const m = await store.manifest(key)
  if (m == null) throw new Error(`shard ${key} is not stored here`)
  if ((await store.missing(m)).length > 0) throw new Error(`shard ${key} is incomplete here; fetch it first`)
  return m
}
