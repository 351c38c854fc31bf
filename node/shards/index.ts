import type { Peer } from '../peer.js'
import { installShardRoutes } from './routes.js'
import { parseFault } from './server.js'
import { ShardService, type ShardServiceInit } from './service.js'

export { ShardService, NoProviderError, MAX_FETCH_BYTES, ShardTooLargeError } from './service.js'
export { parseFault, type ShardFault } from './server.js'
export type { ShardServiceInit, AddOptions, AddFileOptions, AddResult, BlockRef, FetchOptions, FetchToFileOptions, FetchProgress, FetchResult, GcResult, RetentionHold, RootRecord } from './service.js'

// Actors reach a peer's shard service through this registry (no property on
// the lead-owned Peer class): getShardService(peer).

const services = new WeakMap<Peer, ShardService>()

export function getShardService (peer: Peer): ShardService {
  const s = services.get(peer)
  if (s == null) throw new Error('the shard service is not installed on this peer (add installShards to its services)')
  return s
}

export function findShardService (peer: Peer): ShardService | undefined {
  return services.get(peer)
}

/** Peer service installer (node/services.ts): block store, protocol handler, control routes, GC timer. */
export async function installShards (peer: Peer): Promise<void> {
  await shardsService({
    fault: parseFault(process.env.PROOFSWARM_FAULT_SHARDS),
    defaultRetentionMs: envInt('PROOFSWARM_SHARDS_RETENTION_MS'),
    gcIntervalMs: envInt('PROOFSWARM_SHARDS_GC_INTERVAL_MS')
  })(peer)
}

/** An installer with explicit settings (in-process tests, embedders). */
export function shardsService (init: Omit<ShardServiceInit, 'host' | 'dataDir' | 'log'> = {}): (peer: Peer) => Promise<void> {
  return async peer => await attach(peer, init)
}

async function attach (peer: Peer, init: Omit<ShardServiceInit, 'host' | 'dataDir' | 'log'>): Promise<void> {
  const svc = await ShardService.start({ ...init, host: peer.host, dataDir: peer.opts.dataDir, log: peer.log.child({ area: 'shards' }) })
  services.set(peer, svc)
  installShardRoutes(peer.control, svc)
  peer.onStop(async () => { await svc.stop() })
}

function envInt (name: string): number | undefined {
  const v = process.env[name]
  if (v == null || v === '') return undefined
  const n = Number(v)
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer (ms), got "${v}"`)
  return n
}
