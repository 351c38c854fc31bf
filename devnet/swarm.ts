import type { ChainClient } from '../node/chain/client.js'
import { ControlClient } from '../node/control/client.js'
import type { PeerStatus } from '../node/peer.js'
import type { PeerRef } from './scenario.js'

// The devnet's swarm is formed when every peer sees enough others and every
// peer's account is registered on chain with its stake.

export async function waitForSwarm (peers: PeerRef[], observer: ChainClient, logDir: string, say: (msg: string) => void): Promise<void> {
  const count = peers.length
  const deadline = Date.now() + 60_000
  for (;;) {
    // a peer too busy to answer in time (a loaded machine) counts as not connected yet, not as a failure
    const statuses = await Promise.all(peers.map(async p => await (await ControlClient.fromDataDir(p.dataDir)).get<PeerStatus>('/v1/status').catch(() => undefined)))
    const registered = await Promise.all(peers.map(async p => await observer.node(p.accountId)))
    const min = Math.min(...statuses.map(s => s?.connectedPeers.length ?? 0))
    if (min >= Math.min(count, 4) && registered.every(r => r != null)) { say(`swarm formed (every peer sees ≥ ${min} others) and all ${count} peers registered on chain with their stake`); break }
    if (Date.now() > deadline) throw new Error(`the swarm did not form within 60 s (min connections ${min}, registered ${registered.filter(r => r != null).length}/${count}); see ${logDir}`)
    await new Promise(resolve => setTimeout(resolve, 500))
  }
}
