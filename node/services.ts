import type { Peer } from './peer.js'
import { installRoles, type RolesInit } from './roles/install.js'
import { installShards } from './shards/index.js'

// Services attached to every running peer after its host is up: each gets the
// peer (host, db, gossip router, control API, logger) and registers its own
// routes, protocols and stop hooks (peer.onStop). Order matters: the role
// actors use the shard exchange.
export type PeerService = (peer: Peer) => Promise<void>

export function defaultServices (init: RolesInit = {}): PeerService[] {
  return [
    installShards,
    installRoles(init)
  ]
}
