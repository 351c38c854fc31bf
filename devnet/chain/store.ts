import { Level } from 'level'

// LevelDB layout of the dev chain (utf8 keys and values, hex payloads):
//   c!<storage key>            current value
//   h!<storage key>!<n:10>      value as of block n ('' = deleted), for state at any past block
//   b!<block hash>             block JSON { header, extrinsics }
//   n!<n:10>                   block hash by number
//   p!<tx hash>                pending (pool) extrinsic
//   m!head / m!finalized / m!genesis / m!chain   chain metadata
//   m!randomness-key           the seed of the key whose VRF is each block's randomness (never served)

export interface StoredHeader {
  parentHash: string
  number: string
  stateRoot: string
  extrinsicsRoot: string
  digest: { logs: string[] }
}

export interface StoredBlock {
  hash: string
  header: StoredHeader
  extrinsics: string[]
}

export const pad = (n: number): string => n.toString().padStart(10, '0')

export type StoreOp = { type: 'put', key: string, value: string } | { type: 'del', key: string }

export class ChainStore {
  readonly db: Level<string, string>
  private writes: Promise<void> = Promise.resolve()
  private failed: Error | undefined

  /** a fault for tests: every batch waits this long before it is written (a slow disk) */
  private readonly slowDiskMs: number

  constructor (dir: string) {
    const slow = Number(process.env.PROOFSWARM_CHAIN_SLOW_DISK_MS ?? 0)
    this.slowDiskMs = Number.isFinite(slow) && slow > 0 ? slow : 0
    this.db = new Level<string, string>(dir, { keyEncoding: 'utf8', valueEncoding: 'utf8' })
  }

  async open (): Promise<void> { await this.db.open() }

  /**
   * Writes are queued in order; readers of history await the queue first.
   * Resolves true once this batch is on disk, false when it (or an earlier
   * one) failed: what depends on it must not be announced then.
   */
  enqueue (ops: StoreOp[]): Promise<boolean> {
    const slowDiskMs = this.slowDiskMs
    this.writes = this.writes.then(async () => {
      if (this.failed !== undefined) return
      if (slowDiskMs > 0) await new Promise(resolve => setTimeout(resolve, slowDiskMs))
      if (ops.length > 0) await this.db.batch(ops)
    }).catch((e: Error) => { this.failed = e })
    return this.writes.then(() => this.failed === undefined)
  }

  async flush (): Promise<void> {
    await this.writes
    if (this.failed !== undefined) throw this.failed
  }

  async get (key: string): Promise<string | undefined> {
    return await this.db.get(key) ?? undefined
  }

  async loadPrefix (prefix: string): Promise<Array<[string, string]>> {
    const out: Array<[string, string]> = []
    for await (const [k, v] of this.db.iterator({ gte: prefix, lt: prefix + '\xff' })) out.push([k.slice(prefix.length), v])
    return out
  }

  /** Value of a storage key as of block n (undefined if absent then). */
  async valueAt (key: string, n: number): Promise<string | undefined> {
    await this.flush()
    for await (const [, v] of this.db.iterator({ gte: `h!${key}!`, lte: `h!${key}!${pad(n)}`, reverse: true, limit: 1 })) {
      return v === '' ? undefined : v
    }
    return undefined
  }

  /** Keys with a prefix that existed at block n, sorted. */
  async keysAt (prefix: string, n: number): Promise<string[]> {
    await this.flush()
    const latest = new Map<string, { n: number, v: string }>()
    for await (const [k, v] of this.db.iterator({ gte: `h!${prefix}`, lt: `h!${prefix}\xff` })) {
      const sep = k.lastIndexOf('!')
      const key = k.slice(2, sep)
      const at = Number(k.slice(sep + 1))
      if (at > n) continue
      const prev = latest.get(key)
      if (prev === undefined || prev.n < at) latest.set(key, { n: at, v })
    }
    return [...latest.entries()].filter(([, x]) => x.v !== '').map(([k]) => k).sort()
  }

  async close (): Promise<void> {
    await this.writes
    await this.db.close()
  }
}
