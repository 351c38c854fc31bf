import type { Logger } from '../log.js'
import type { Host } from './host.js'

// libp2p 3 does not dial peers by itself once the bootstrap list is done, so
// a peer that learnt of others through the DHT or identify stays connected to
// the bootstrap peer and a handful of others, and its gossip mesh stays thin.
// The keeper dials known but unconnected peers until `target` connections
// are open (Lodestar's peer manager does the same for its mesh).

export interface PeerKeeperOptions {
  target: number
  intervalMs: number
  /** at most this many dials per round */
  dialsPerRound: number
}

export function startPeerKeeper (host: Host, log: Logger, opts: PeerKeeperOptions): () => void {
  let running = false
  let lastLookup = 0
  const tick = async (): Promise<void> => {
    if (running) return
    running = true
    try {
      const connected = new Set(host.getPeers().map(p => p.toString()))
      if (connected.size >= opts.target) return
      const self = host.peerId.toString()
      // a DHT lookup of our own id walks the swarm and fills the peer store
      // (bounded: at most one every 10 s, 5 s each; not awaited, so known
      // peers are dialled at once); the routing-table refresh at join can
      // miss peers when the machine is busy
      if (connected.size > 0 && Date.now() - lastLookup > 10_000) {
        lastLookup = Date.now()
        void (async () => {
          for await (const _ of host.services.dht.getClosestPeers(host.peerId.toMultihash().bytes, { signal: AbortSignal.timeout(5000) })) { /* peers land in the peer store */ }
        })().catch(() => { /* timeout or no peers: try again later */ })
      }
      const candidates = (await host.peerStore.all())
        .filter(p => p.addresses.length > 0 && !connected.has(p.id.toString()) && p.id.toString() !== self)
        .slice(0, Math.min(opts.dialsPerRound, opts.target - connected.size))
      await Promise.allSettled(candidates.map(async p => {
        await host.dial(p.id, { signal: AbortSignal.timeout(5000) })
      }))
    } catch (err) {
      log.debug({ err }, 'peer keeper round failed')
    } finally {
      running = false
    }
  }
  const timer = setInterval(() => { void tick() }, opts.intervalMs)
  timer.unref()
  // one round soon after start, when identify/DHT have filled the peer store
  const first = setTimeout(() => { void tick() }, Math.min(500, opts.intervalMs))
  first.unref()
  return () => { clearInterval(timer); clearTimeout(first) }
}
