import { peerIdFromString } from '@libp2p/peer-id'
import type { CID } from 'multiformats/cid'
import type { Logger } from 'pino'
import type { Host } from '../p2p/host.js'
import { ProviderPool } from './provider-pool.js'
import type { BlockStore } from './store.js'
import type { StreamPool } from './stream-pool.js'

// Where a fetch's providers come from (explicit peer ids and/or DHT lookups)
// and what each one delivered, shared by the manifest and data phases.

export interface ProviderStat {
  peerId: string
  blocks: number
  bytes: number
  /** blocks it sent that did not match their CID */
  corrupt: number
  /** blocks it answered NOT_FOUND for */
  notFound: number
  /** times its connection failed and it was tried again after a backoff */
  retries: number
  error?: string
}

export interface FetcherDeps {
  host: Host
  store: BlockStore
  log: Logger
  /**
   * Records that `peerId` served bytes not matching `cid`: bans it for that
   * block, and for everything once it did so too often ('peer').
   */
  penalise: (peerId: string, reason: string, cid: string) => 'block' | 'peer'
  /** was `peerId` banned for `cid` (a bad copy of it before)? */
  blockBanned?: (peerId: string, cid: string) => boolean
  /** succesful provider: keep its connection */
  reward: (peerId: string) => void
  /** idle streams reused across fetches (none: a stream per fetch, closed after it) */
  streams?: StreamPool
}

export class NoProviderError extends Error {
  override name = 'NoProviderError'
}

/** Where providers come from for one fetch: kept across the manifest and data phases. */
export class ProviderSource {
  readonly pool: ProviderPool
  readonly stats = new Map<string, ProviderStat>()
  private readonly stop = new AbortController()
  private readonly self: string
  /** when the first provider became known (ms since epoch) */
  firstFoundAt?: number
  /** providers are looked up in the DHT; without it the pool only ever holds the explicit ones */
  discovering = false

  constructor (private readonly deps: FetcherDeps, exclude: (peerId: string) => boolean) {
    const self = deps.host.peerId.toString()
    this.pool = new ProviderPool(id => id !== self && exclude(id))
    this.self = self
  }

  /** Explicit providers: no DHT lookup. */
  addExplicit (peerIds: string[]): void {
    for (const id of peerIds) {
      try { peerIdFromString(id) } catch { throw new Error(`invalid provider peer id "${id}"`) }
      if (id !== this.self) this.pool.add({ peerId: id, addrs: [] })
      this.firstFoundAt ??= Date.now()
    }
  }

  /** Looks providers up in the DHT now, and again whenever the pool starves, until closed. */
  discover (root: CID, signal?: AbortSignal): void {
    this.discovering = true
    const stop = signal != null ? AbortSignal.any([signal, this.stop.signal]) : this.stop.signal
    void (async () => {
      let gapMs = 1000
      while (!stop.aborted) {
        const started = Date.now()
        const known = this.pool.discovered
        try {
          for await (const p of this.deps.host.contentRouting.findProviders(root, { signal: AbortSignal.any([stop, AbortSignal.timeout(10_000)]) })) {
            if (p.multiaddrs.length > 0) await this.deps.host.peerStore.merge(p.id, { multiaddrs: p.multiaddrs }).catch(() => {})
            if (p.id.toString() !== this.self && this.pool.add({ peerId: p.id.toString(), addrs: p.multiaddrs })) this.firstFoundAt ??= Date.now()
            else continue
            this.deps.log.debug({ root: root.toString(), provider: p.id.toString() }, 'found a shard provider')
          }
        } catch (err) {
          if (!stop.aborted) this.deps.log.debug({ err: (err as Error).message }, 'provider lookup ended')
        }
        // query again only when workers wait for providers: after 1 s, backing
        // off to 30 s while lookups find nobody new (a long fetch from few providers)
        gapMs = this.pool.discovered > known ? 1000 : Math.min(gapMs * 2, 30_000)
        await this.pool.whenStarving(stop)
        const gap = gapMs - (Date.now() - started)
        if (gap > 0) await sleep(gap, stop)
      }
    })()
  }

  close (): void { this.stop.abort(); this.pool.close() }

  stat (peerId: string): ProviderStat {
    let s = this.stats.get(peerId)
    if (s == null) { s = { peerId, blocks: 0, bytes: 0, corrupt: 0, notFound: 0, retries: 0 }; this.stats.set(peerId, s) }
    return s
  }
}

async function sleep (ms: number, signal: AbortSignal): Promise<void> {
  await new Promise<void>(resolve => {
    const t = setTimeout(done, ms)
    function done (): void { clearTimeout(t); signal.removeEventListener('abort', done); resolve() }
    signal.addEventListener('abort', done, { once: true })
  })
}
