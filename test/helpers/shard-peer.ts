import { createHash } from 'node:crypto'
import { join } from 'node:path'
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

/**
 * In-process shard peers under one folder: a bootstrap (dir/boot) and peers
 * joined to it (dir/<name>); stop() stops them all.
 */
export class ShardSwarm {
  readonly peers: Peer[] = []
  private constructor (private readonly dir: string, private readonly bootAddr: string) {}

  static async start (dir: string): Promise<ShardSwarm> {
    const boot = await startShardPeer(join(dir, 'boot'), [])
    const swarm = new ShardSwarm(dir, boot.host.getMultiaddrs()[0].toString())
    swarm.peers.push(boot)
    return swarm
  }

  async join (name: string, fault?: Partial<ShardFault>): Promise<Peer> {
    const p = await startShardPeer(join(this.dir, name), [this.bootAddr], fault)
    this.peers.push(p)
    return p
  }

  async stop (): Promise<void> {
    await Promise.all(this.peers.map(async p => await p.stop()))
  }
}

export const sha256Hex = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex')
