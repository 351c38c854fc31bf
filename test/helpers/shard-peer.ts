import { Peer } from '../../node/peer.js'
import { shardsService } from '../../node/shards/index.js'
import type { ShardFault } from '../../node/shards/server.js'

/** An in-process peer on 127.0.0.1 with the shard service (no GC timer), for the shards integration tests. */
export async function startShardPeer (dataDir: string, bootstrap: string[], fault?: Partial<ShardFault>): Promise<Peer> {
  return await Peer.start({
    kind: bootstrap.length === 0 ? 'bootstrap' : 'peer',
    dataDir,
    network: 'devnet-test',
    listen: ['/ip4/127.0.0.1/tcp/0'],
    bootstrap,
    logLevel: 'error',
    services: [shardsService({ gcIntervalMs: 0, fault: { corrupt: false, delayMs: 0, ...fault } })]
  })
}
