import type { Peer } from './peer.js'
import { installShards } from './shards/index.js'
import { rolesService } from './roles/service.js'
import { unavailablePorts } from './roles/ports.js'

// Services attached to every running peer after its host is up: each gets the
// peer (host, db, gossip router, control API, logger) and registers its own
// routes, protocols and stop hooks (peer.onStop). Add new ones here.
export type PeerService = (peer: Peer) => Promise<void>

export const defaultServices: PeerService[] = [
  installShards,
  rolesService(async (peer) => unavailablePorts(peer))
]
