import type { ShardKind } from '../../protocols/shards/index.js'

// What the shard store keeps about each root and each block added by
// reference, and the retention rule that decides which roots GC keeps.

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
  /**
   * Set when the root was added by reference: its blocks are read from this
   * file, not stored here. Deleting or changing the file makes them
   * unservable (they then count as missing).
   */
  byReference?: { path: string }
  /**
   * Every add/fetch of this root asked for no DHT provider record (provide:
   * false: checkpoints, fetched from the solver by peer id): not announced
   * again after a restart either.
   */
  unannounced?: true
}

/** A block added by reference: a byte range of a file outside the store. */
export interface BlockRef {
  /** the root it was added with: GC keeps the ref while that root is kept; warnings name it */
  root: string
  /** absolute path */
  path: string
  offset: number
  size: number
  /** the file's size and mtime when added (or last verified): unchanged → has() trusts the ref without reading it */
  fileSize: number
  mtimeMs: number
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
