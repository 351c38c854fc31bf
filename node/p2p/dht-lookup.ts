import type { CID } from 'multiformats/cid'
import type { Host } from './host.js'

/** A provider lookup and what it cost: for operators judging how well the DHT is connected. */
export interface ProviderLookup {
  providers: Array<{ peerId: string, addrs: string[] }>
  /** wall time of the whole lookup */
  ms: number
  /** time until the first provider was known (absent: none found) */
  firstProviderMs?: number
  /** peers the lookup sent a query to */
  queried: number
  /**
   * Referral depth of the peer that named the first provider: 0 = this peer
   * holds the record, 1 = a peer from its own routing table, 2 = a peer named
   * by one of those, ... (absent: none found)
   */
  hops?: number
}

/**
 * Finds up to `max` providers of a CID through the DHT. Hops are counted from
 * the lookup's own events: each peer a response names as closer is one
 * referral deeper than the peer that named it.
 */
export async function findProvidersTraced (host: Host, cid: CID, opts: { timeoutMs: number, max: number }): Promise<ProviderLookup> {
  const t0 = performance.now()
  const self = host.peerId.toString()
  const depth = new Map<string, number>()
  const found = new Map<string, string[]>()
  const res: ProviderLookup = { providers: [], ms: 0, queried: 0 }
  try {
    for await (const e of host.services.dht.findProviders(cid, { signal: AbortSignal.timeout(opts.timeoutMs) })) {
      if (e.name === 'SEND_QUERY') {
        res.queried++
        if (!depth.has(e.to.toString())) depth.set(e.to.toString(), 1)
      } else if (e.name === 'PEER_RESPONSE') {
        const d = depth.get(e.from.toString()) ?? 1
        for (const c of e.closer) if (!depth.has(c.id.toString())) depth.set(c.id.toString(), d + 1)
      } else if (e.name === 'PROVIDER') {
        const from = e.from.toString()
        for (const p of e.providers) {
          const id = p.id.toString()
          found.set(id, [...new Set([...(found.get(id) ?? []), ...p.multiaddrs.map(a => a.toString())])])
        }
        if (res.firstProviderMs == null && e.providers.length > 0) {
          res.firstProviderMs = Math.round(performance.now() - t0)
          res.hops = from === self ? 0 : depth.get(from) ?? 1
        }
        if (found.size >= opts.max) break
      }
    }
  } catch (err) {
    // a timeout ends the search with what it found; any other failure with nothing found is an error
    if (found.size === 0 && (err as Error).name !== 'AbortError' && (err as Error).name !== 'TimeoutError') throw err
  }
  res.providers = [...found].slice(0, opts.max).map(([peerId, addrs]) => ({ peerId, addrs }))
  res.ms = Math.round(performance.now() - t0)
  return res
}
