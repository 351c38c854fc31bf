import type { Level } from 'level'
import type { CID } from 'multiformats/cid'
import { decodeManifest, type Manifest, type ShardKind } from '../../protocols/shards/index.js'
import { sublevel, type PeerDb } from '../storage/db.js'

// Blocks live in the peer's LevelDB under sublevel "shard-blocks" (key: CID
// string, value: bytes); one record per root under "shard-roots" says what
// the root is, whether all its blocks are here, and what keeps it alive
// (a pin, or retention holds until a chain block / a time).

/** Keeps a root until the chain reaches `untilBlock` and/or the clock reaches `untilTime` (ms). */
export interface RetentionHold { untilBlock?: number, untilTime?: number }

export interface RootRecord {
  cid: string
  name: string
  kind: ShardKind
  size: number
  blocks: number
  complete: boolean
  pinned: boolean
  /** reason (task id, "default", ...) → hold; the root stays while any hold is active */
  holds: Record<string, RetentionHold>
  addedAt: number
  source: 'added' | 'fetched'
}

const enc = new TextEncoder()
const dec = new TextDecoder()

export class BlockStore {
  readonly blocks: Level<string, Uint8Array>
  readonly roots: Level<string, Uint8Array>

  constructor (db: PeerDb) {
    this.blocks = sublevel(db, 'shard-blocks')
    this.roots = sublevel(db, 'shard-roots')
  }

  async get (cid: CID | string): Promise<Uint8Array | undefined> {
    return await this.blocks.get(cid.toString()) ?? undefined
  }

  async has (cid: CID | string): Promise<boolean> {
    return await this.blocks.has(cid.toString())
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

  async * blockKeys (): AsyncGenerator<string> {
    for await (const k of this.blocks.keys()) yield k
  }

  async deleteBlocks (keys: string[]): Promise<void> {
    if (keys.length === 0) return
    await this.blocks.batch(keys.map(key => ({ type: 'del' as const, key })))
  }

  /** Indices of the root's blocks not stored yet. */
  async missing (m: Manifest): Promise<number[]> {
    const keys = m.blocks.map(b => b.cid.toString())
    const out: number[] = []
    // hasMany batches the lookups and copies no values
    const CHUNK = 1024
    for (let i = 0; i < keys.length; i += CHUNK) {
      const vals = await this.blocks.hasMany(keys.slice(i, i + CHUNK))
      vals.forEach((v, j) => { if (!v) out.push(i + j) })
    }
    return out
  }
}

/** Is the hold still in force? A block deadline with an unknown chain height stays in force. */
export function holdActive (h: RetentionHold, now: number, currentBlock: number | undefined): boolean {
  if (h.untilTime != null && now < h.untilTime) return true
  if (h.untilBlock != null && (currentBlock == null || currentBlock < h.untilBlock)) return true
  return false
}

export function rootKept (r: RootRecord, now: number, currentBlock: number | undefined): boolean {
  return r.pinned || Object.values(r.holds).some(h => holdActive(h, now, currentBlock))
}
