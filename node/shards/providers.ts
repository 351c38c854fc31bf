import { peerIdFromString } from '@libp2p/peer-id'
import type { CID } from 'multiformats/cid'
import { parseShardCid } from '../../protocols/shards/index.js'
import type { FetcherDeps } from './provider-source.js'
import { ProviderBans } from './bans.js'
import { hasShard } from './local.js'
import { StreamPool } from './stream-pool.js'
import type { ShardContext } from './types.js'

// This peer as a shard provider (DHT announcements) and its view of other
// providers: bans for bad blocks, reward tags for good ones, reused streams.

const PROVIDER_TAG = 'proofswarm-shard-provider'
const BAD_TAG = 'proofswarm-shard-misbehaved'

export class ShardProviders {
  private readonly bans: ProviderBans
  /** when each provider's reward tag was last refreshed */
  private readonly rewardedAt = new Map<string, number>()
  /** idle shard streams to providers, reused by the next fetch */
  private readonly streams = new StreamPool()

  constructor (private readonly ctx: ShardContext, private readonly banMs: number) {
    this.bans = new ProviderBans(banMs)
  }

  close (): void { this.streams.close() }

  // ---- announcing --------------------------------------------------------

  /** Announces this peer as a provider of `root` in the DHT (awaits the announcement). */
  async provide (root: CID | string, timeoutMs = 30_000): Promise<void> {
    const cid = typeof root === 'string' ? parseShardCid(root) : root
    await this.ctx.host.contentRouting.provide(cid, { signal: AbortSignal.any([AbortSignal.timeout(timeoutMs), this.ctx.stopped]) })
  }

  provideInBackground (root: CID): void {
    void this.provide(root).then(
      () => this.ctx.log.debug({ root: root.toString() }, 'announced shard provider record'),
      (err: unknown) => { if (!this.ctx.stopped.aborted) this.ctx.log.warn({ root: root.toString(), err: (err as Error).message }, 'could not announce a shard provider record') }
    )
  }

  /** Stops re-announcing a root that is gone. */
  async forget (root: string): Promise<void> {
    await this.ctx.host.contentRouting.cancelReprovide(parseShardCid(root)).catch(() => {})
  }

  async reprovideAll (): Promise<void> {
    const { host, store, stopped } = this.ctx
    // wait (bounded) for the bootstrap dial: provide() needs DHT peers
    for (let i = 0; i < 60 && host.getPeers().length === 0 && !stopped.aborted; i++) await sleep(500)
    for (const r of await store.listRoots()) {
      if (stopped.aborted) return
      // a root added by reference whose file is gone or changed is not announced
      // roots added/fetched with provide: false (checkpoints) stay unannounced: hundreds of
      // provider records at once kept every peer busy (and a solver's verifiers were
      // answering its DHT queries while fetching its checkpoints)
      if (r.unannounced === true) continue
      if (r.complete && (r.byReference == null || await hasShard(store, r.cid))) await this.provide(r.cid).catch(() => {})
    }
  }

  // ---- providers' reputation ----------------------------------------------

  /** Banned for everything (it sent MAX_BAD_BLOCKS bad blocks within the ban time)? */
  isBanned (peerId: string): boolean { return this.bans.isBanned(peerId) }

  /** Banned for this block (it sent a bad copy of it)? */
  isBlockBanned (peerId: string, cid: string): boolean { return this.bans.blockBanned(peerId, cid) }

  fetcherDeps (): FetcherDeps {
    const { host, store, log } = this.ctx
    return {
      host,
      store,
      log,
      streams: this.streams,
      penalise: (peerId, reason, cid) => {
        const verdict = this.bans.badBlock(peerId, cid)
        log.warn({ provider: peerId, reason, block: cid, banned: verdict === 'peer' ? 'for every block' : 'for this block', banMs: this.banMs }, 'penalised a shard provider')
        if (verdict === 'peer') {
          void host.peerStore.merge(peerIdFromString(peerId), {
            tags: { [PROVIDER_TAG]: undefined, [BAD_TAG]: { value: 1, ttl: this.banMs } }
          }).catch(() => {})
        }
        return verdict
      },
      blockBanned: (peerId, cid) => this.bans.blockBanned(peerId, cid),
      reward: peerId => {
        // a peer-store write per fetched shard was ~5% of a verifier's fetch CPU;
        // the tag lasts 10 minutes, so refreshing it once a minute is enough
        const now = Date.now()
        if ((this.rewardedAt.get(peerId) ?? 0) > now - 60_000) return
        this.rewardedAt.set(peerId, now)
        if (this.rewardedAt.size > 1024) this.rewardedAt.clear()
        void host.peerStore.merge(peerIdFromString(peerId), {
          tags: { [PROVIDER_TAG]: { value: 20, ttl: 600_000 } }
        }).catch(() => {})
      }
    }
  }
}

async function sleep (ms: number): Promise<void> {
  await new Promise(resolve => setTimeout(resolve, ms))
}
