import type { Manifest } from '../../protocols/shards/index.js'
import type { BlockStore } from './store.js'
import type { BlockRef, RootRecord } from './root-records.js'

// Garbage collection of the shard store, by key: the blocks a dropped root
// frees are known from its manifest (CIDs and sizes), so they are deleted
// without reading them. Reading each freed block to count its bytes held
// ~1 MiB per block in the JS heap and malloc arenas: RSS 143 → 638 MiB for
// a 400 MiB shard, and it stayed there.

export interface GcResult {
  removedRoots: string[]
  /**
   * Blocks deleted: those the removed roots' manifests list and no kept root
   * uses (all of them, present or not: a partial shard's absent blocks are
   * counted too; a root held by reference counts only its manifest), plus
   * strays found by a sweep.
   */
  removedBlocks: number
  /** bytes of those blocks, as their manifests list them (strays count 0) */
  freedBytes: number
  keptRoots: number
  /** block references dropped (roots added by reference; the files themselves are never deleted) */
  removedRefs: number
}

export interface CollectOptions {
  /**
   * Also sweep stray blocks (stored, but in no root's manifest: left by a
   * crash between an add's block writes and its root record). The sweep
   * iterates every stored key, touching LevelDB's tables around each entry,
   * so the service runs it once per start, not at every GC.
   */
  sweepStrays: boolean
}

const BATCH = 256

/**
 * Deletes the roots `drop` selects, the blocks no remaining root uses, and
 * every reference whose root is gone (never the referenced file). The caller
 * serializes it with adds (the service's lock).
 */
export async function collect (store: BlockStore, drop: (r: RootRecord) => boolean, opts: CollectOptions): Promise<GcResult> {
  const live = new Set<string>()
  const liveRoots = new Set<string>()
  const removed: RootRecord[] = []
  const freedSize = new Map<string, number>()
  const copied = new Set<string>()
  for (const r of await store.listRoots()) {
    const m = await manifestOf(store, r.cid)
    if (!drop(r)) {
      live.add(r.cid)
      liveRoots.add(r.cid)
      for (const b of m?.blocks ?? []) live.add(b.cid.toString())
    } else {
      removed.push(r)
      freedSize.set(r.cid, 0) // the manifest block (always stored): its size is not worth a read
      copied.add(r.cid)
      for (const b of m?.blocks ?? []) {
        const k = b.cid.toString()
        freedSize.set(k, b.size)
        // a root held by reference keeps its blocks in its file: deleted all
        // the same (a stray copy goes too) but not counted as freed here
        if (r.byReference == null) copied.add(k)
      }
    }
  }
  let removedBlocks = 0
  let freedBytes = 0
  let batch: string[] = []
  const flush = async (): Promise<void> => {
    if (batch.length === 0) return
    await store.deleteBlocks(batch)
    batch = []
  }
  // Deleted blindly by key (deleting an absent key is a no-op): a point
  // lookup per block, or even a key-only iteration, touched LevelDB's
  // mmapped tables around every 1 MiB entry (the kernel maps 64 KiB around
  // each fault): +47 MiB of RSS for a 400 MiB shard.
  for (const [k, size] of freedSize) {
    if (live.has(k)) continue
    if (copied.has(k)) { freedBytes += size; removedBlocks++ }
    batch.push(k)
    if (batch.length >= BATCH) await flush()
  }
  await flush()
  if (opts.sweepStrays) {
    for await (const k of store.blockKeys()) {
      if (live.has(k) || freedSize.has(k)) continue
      removedBlocks++
      batch.push(k)
      if (batch.length >= BATCH) await flush()
    }
    await flush()
  }
  let removedRefs = 0
  const refEdits: Array<[string, BlockRef[]]> = []
  for await (const [k, refs] of store.refEntries()) {
    const keep = refs.filter(r => liveRoots.has(r.root) && live.has(k))
    if (keep.length === refs.length) continue
    removedRefs += refs.length - keep.length
    refEdits.push([k, keep])
  }
  await store.setRefs(refEdits)
  for (const r of removed) await store.deleteRoot(r.cid)
  return { removedRoots: removed.map(r => r.cid), removedBlocks, freedBytes, keptRoots: liveRoots.size, removedRefs }
}

async function manifestOf (store: BlockStore, root: string): Promise<Manifest | undefined> {
  return await store.manifest(root).catch(() => undefined)
}
