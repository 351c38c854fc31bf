// What other peers put into this peer's DHT store. kad-dht keeps every
// provider record it is sent (ADD_PROVIDER: it checks only that the sender
// names itself) for 48 hours, and every value record its validators pass
// (PUT_VALUE: a `/pk/` record needs only a key pair of its own), in libp2p's
// in-memory datastore, with no bound: one peer naming itself the provider of
// random CIDs, or putting the keys of fresh key pairs, as fast as its stream
// carries them grew an honest peer's memory for as long as it kept at it. Both
// are now bounded (provider records per provider and in all); past a bound a
// new record is dropped (not an error: the sender learns nothing from it).
// This peer's own provider records are never counted or dropped; proofswarm
// puts no value records of its own.

/** provider records one other peer may hold here (a busy node provides a few roots per task it works on) */
export const MAX_PROVIDER_RECORDS_PER_PEER = 10_000
/** provider records all other peers may hold here (~0.3 KB each with their index below) */
export const MAX_PROVIDER_RECORDS = 200_000
/** value records (`/pk/` keys) others may put here */
export const MAX_VALUE_RECORDS = 10_000

interface KeyLike { toString: () => string }
/** the part of libp2p's datastore kad-dht's provider and record stores write through */
interface StoreLike {
  put: (key: KeyLike, value: Uint8Array, options?: unknown) => Promise<unknown> | unknown
  delete: (key: KeyLike, options?: unknown) => Promise<void> | void
}

export interface DhtStoreLimits { providersPerPeer: number, providers: number, values: number }

export interface DhtStoreGuard {
  /** provider records of other peers held now */
  providers: () => number
  /** value records held now */
  values: () => number
  /** records dropped for a bound since start */
  dropped: () => number
}

/** `/dht/provider/<cid>/<peer id>` (kad-dht utils.ts toProviderKey), `/dht/record/<key>` */
function parse (key: KeyLike): { provider: { cid: string, peer: string } } | { value: string } | undefined {
  const k = key.toString()
  const parts = k.split('/')
  if (parts.length === 5 && parts[1] === 'dht' && parts[2] === 'provider') return { provider: { cid: parts[3], peer: parts[4] } }
  if (parts.length >= 4 && parts[1] === 'dht' && parts[2] === 'record') return { value: k }
  return undefined
}

/** Bounds what others put into `host`'s DHT store (its libp2p components' datastore). */
export function boundDhtStore (
  host: { peerId: { toString: () => string } },
  limits: DhtStoreLimits = { providersPerPeer: MAX_PROVIDER_RECORDS_PER_PEER, providers: MAX_PROVIDER_RECORDS, values: MAX_VALUE_RECORDS }
): DhtStoreGuard {
  const ds = (host as unknown as { components: { datastore: StoreLike } }).components.datastore
  const self = host.peerId.toString()
  const byPeer = new Map<string, Set<string>>()
  const values = new Set<string>()
  let providers = 0
  let dropped = 0
  /** false: over a bound, not stored */
  const admit = (key: KeyLike): boolean => {
    const p = parse(key)
    if (p === undefined) return true
    if ('value' in p) {
      if (values.has(p.value)) return true
      if (values.size >= limits.values) return false
      values.add(p.value)
      return true
    }
    const { cid, peer } = p.provider
    if (peer === self) return true
    let cids = byPeer.get(peer)
    if (cids?.has(cid) === true) return true
    if ((cids?.size ?? 0) >= limits.providersPerPeer || providers >= limits.providers) return false
    if (cids === undefined) { cids = new Set(); byPeer.set(peer, cids) }
    cids.add(cid)
    providers++
    return true
  }
  const put = ds.put.bind(ds)
  const del = ds.delete.bind(ds)
  ds.put = async (key, value, options) => {
    if (!admit(key)) { dropped++; return key }
    return await put(key, value, options)
  }
  ds.delete = async (key, options) => {
    const p = parse(key)
    if (p !== undefined && 'value' in p) values.delete(p.value)
    else if (p !== undefined) {
      const cids = byPeer.get(p.provider.peer)
      if (cids?.delete(p.provider.cid) === true) {
        providers--
        if (cids.size === 0) byPeer.delete(p.provider.peer)
      }
    }
    await del(key, options)
  }
  return { providers: () => providers, values: () => values.size, dropped: () => dropped }
}
