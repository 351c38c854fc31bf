import type { CID } from 'multiformats/cid'
import type { Manifest } from '../../protocols/shards/index.js'
import { collect, type GcResult } from './collector.js'
import type { ShardProviders } from './providers.js'
import { rootKept, type RetentionHold, type RootRecord } from './root-records.js'
import type { AddOptions, GcOptions, ShardContext } from './types.js'

// How long shards stay: root records with their pins and retention holds,
// garbage collection of what nothing keeps, and the lock that serializes
// adds, GC and root edits so GC never sees half-added content.

export class ShardRetention {
  private lock: Promise<unknown> = Promise.resolve()
  /** roots being fetched: GC leaves them, `remove` refuses them */
  private readonly protectedRoots = new Map<string, number>()
  private strayswept = false

  constructor (private readonly ctx: ShardContext, private readonly providers: ShardProviders, private readonly defaultRetentionMs: number) {}

  /** Resolves once the last queued exclusive job is done (failed or not). */
  async idle (): Promise<void> { await this.lock.catch(() => {}) }

  async exclusive<T> (f: () => Promise<T>): Promise<T> {
    const run = this.lock.catch(() => {}).then(f)
    this.lock = run
    return await run
  }

  /** +1 when a fetch of `root` starts, -1 when it ends. */
  protect (root: string, d: number): void {
    const n = (this.protectedRoots.get(root) ?? 0) + d
    if (n <= 0) this.protectedRoots.delete(root)
    else this.protectedRoots.set(root, n)
  }

  /** `byReference`: set (added by reference), null (added by copy: clear it), undefined (fetched: keep as it was). */
  async upsertRoot (cid: string, m: Manifest, complete: boolean, source: RootRecord['source'], opts: AddOptions, byReference?: { path: string } | null): Promise<RootRecord> {
    const { store } = this.ctx
    const prev = await store.getRoot(cid)
    const holds = { ...(prev?.holds ?? {}) }
    const reason = opts.reason ?? 'default'
    if (opts.retain != null) holds[reason] = validHold(opts.retain)
    else if (prev == null) holds.default = { untilTime: Date.now() + this.defaultRetentionMs }
    const rec: RootRecord = {
      cid,
      name: m.name,
      kind: m.kind,
      size: m.size,
      blocks: m.blocks.length,
      complete: complete || (prev?.complete ?? false),
      pinned: (prev?.pinned ?? false) || opts.pin === true,
      holds,
      addedAt: prev?.addedAt ?? Date.now(),
      source: prev?.source ?? source
    }
    // a root already complete here by copy keeps its copies: adding it by reference changes nothing
    const copied = prev != null && prev.complete && prev.byReference == null
    const ref = byReference === undefined ? prev?.byReference : byReference === null || copied ? undefined : byReference
    if (ref != null) rec.byReference = ref
    // announced once any add/fetch wanted it; unannounced while all said provide: false
    if (opts.provide === false && (prev == null || prev.unannounced === true)) rec.unannounced = true
    await store.putRoot(rec)
    return rec
  }

  async pin (root: CID | string): Promise<RootRecord> { return await this.updateRoot(root, r => { r.pinned = true }) }
  async unpin (root: CID | string): Promise<RootRecord> { return await this.updateRoot(root, r => { r.pinned = false }) }

  /** Keeps `root` at least until the hold expires (e.g. the end of a task's challenge window). */
  async retain (root: CID | string, hold: RetentionHold, reason = 'default'): Promise<RootRecord> {
    const h = validHold(hold)
    return await this.updateRoot(root, r => { r.holds[reason] = h })
  }

  /** Drops one retention hold (the root is collected once no pin or hold keeps it). */
  async release (root: CID | string, reason = 'default'): Promise<RootRecord> {
    return await this.updateRoot(root, r => { delete r.holds[reason] })
  }

  async list (): Promise<RootRecord[]> {
    return (await this.ctx.store.listRoots()).sort((a, b) => a.addedAt - b.addedAt)
  }

  private async updateRoot (root: CID | string, f: (r: RootRecord) => void): Promise<RootRecord> {
    const key = root.toString()
    const { store } = this.ctx
    return await this.exclusive(async () => {
      const r = await store.getRoot(key)
      if (r == null) throw new Error(`shard ${key} is not stored here`)
      f(r)
      await store.putRoot(r)
      return r
    })
  }

  /**
   * Deletes roots no pin or active hold keeps (block holds need `currentBlock`;
   * without it they stay), then every block no kept root references.
   */
  async gc (opts: GcOptions = {}): Promise<GcResult> {
    return await this.exclusive(async () => {
      const now = opts.now ?? Date.now()
      // strays only come from a crash mid-add: swept by the first GC after a start
      const sweep = !this.strayswept
      const r = await this.collect(r => !rootKept(r, now, opts.currentBlock) && !this.protectedRoots.has(r.cid), sweep)
      this.strayswept = true
      return r
    })
  }

  /**
   * Removes one shard now, whatever pins or holds it has (`shards rm`), and
   * the blocks and references no other root uses. A file it was added from by
   * reference is left alone.
   */
  async remove (root: CID | string): Promise<GcResult> {
    const key = root.toString()
    return await this.exclusive(async () => {
      if (await this.ctx.store.getRoot(key) == null) throw new Error(`shard ${key} is not stored here`)
      if (this.protectedRoots.has(key)) throw new Error(`shard ${key} is being fetched; remove it afterwards`)
      return await this.collect(r => r.cid === key, false)
    })
  }

  private async collect (drop: (r: RootRecord) => boolean, sweepStrays: boolean): Promise<GcResult> {
    const r = await collect(this.ctx.store, drop, { sweepStrays })
    for (const k of r.removedRoots) await this.providers.forget(k)
    return r
  }
}

function validHold (h: RetentionHold): RetentionHold {
  const out: RetentionHold = {}
  if (h.untilBlock != null) {
    if (!Number.isSafeInteger(h.untilBlock) || h.untilBlock < 0) throw new Error(`untilBlock must be a non-negative integer, got ${String(h.untilBlock)}`)
    out.untilBlock = h.untilBlock
  }
  if (h.untilTime != null) {
    if (!Number.isFinite(h.untilTime) || h.untilTime < 0) throw new Error(`untilTime must be a time in ms since the epoch, got ${String(h.untilTime)}`)
    out.untilTime = h.untilTime
  }
  if (out.untilBlock == null && out.untilTime == null) throw new Error('a retention hold needs untilBlock and/or untilTime')
  return out
}
