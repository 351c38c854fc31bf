import type { PeerId, PeerUpdate } from '@libp2p/interface'
import type { Logger } from '../log.js'
import { connectedPeers, type Host } from './host.js'
import { streamBusy, viewStream } from './stream-progress.js'

// Every open connection costs its peer CPU while idle (pings, yamux
// keep-alives, identify pushes, gossipsub control traffic, a score to keep),
// and at 100 peers on one machine the peers held 45–79 connections each and
// idled at ~1.5 of 2 cores (docs/benchmarks.md, "Swarm scale"). A peer needs
// far fewer: its gossip meshes (D_hi = 8 per topic, chosen among connected
// peers) and a few more for gossip and for the DHT, whose lookups dial the
// peers they ask. libp2p's own pruner cannot bring the count down: it never
// closes a connection with a stream open other than identify's, and every
// proofswarm peer keeps a gossipsub stream on each connection. So the trimmer
// closes the least useful connections down to a target, Lodestar's way:
// never a mesh peer, a peer with a transfer making progress or a DHT query of
// ours open (stream-progress.ts: an open stream that moves nothing does not
// count, or holding one would exempt a peer for ever), a peer tagged
// keep-alive, or a connection younger than a grace period (a newcomer must
// get the chance to join a mesh); of the rest, peers with a negative gossip
// score first, then by the value of their peer-store tags (the DHT's closest
// peers 50, a good shard provider 20: libp2p's own ranking), then the lowest score.

/** Streams that stay open on an idle connection; any other stream is work in progress. */
export const IDLE_PROTOCOLS: ReadonlySet<string> = new Set([
  '/meshsub/1.2.0', '/meshsub/1.1.0', '/meshsub/1.0.0', '/floodsub/1.0.0', '/ipfs/id/1.0.0', '/ipfs/id/push/1.0.0', '/ipfs/ping/1.0.0'
])

/** kad-dht tags the peers closest to us in XOR distance with 'kad-close' (value 50), and also tags them keep-alive, so that libp2p redials them whenever they disconnect */
export const KAD_KEEP_ALIVE_TAG = 'keep-alive-kad-dht'

export interface TrimCandidate {
  id: string
  /** ms since its oldest open connection opened */
  ageMs: number
  inMesh: boolean
  /** a stream other than gossipsub/identify/ping is making progress (a shard transfer, a DHT query of ours, ...) */
  busy: boolean
  keepAlive: boolean
  /** the sum of its peer-store tag values */
  value: number
  score: number
}

export interface TrimPolicy {
  /** connected peers to trim down to */
  target: number
  /** connections younger than this are never closed */
  graceMs: number
}

/** Which peers to hang up on so that at most `target` stay connected (as far as protected peers allow). */
export function peersToTrim (peers: TrimCandidate[], policy: TrimPolicy): string[] {
  const excess = peers.length - policy.target
  if (excess <= 0) return []
  return peers
    .filter(p => !p.inMesh && !p.busy && !p.keepAlive && p.ageMs >= policy.graceMs)
    .sort((a, b) => Number(b.score < 0) - Number(a.score < 0) || a.value - b.value || a.score - b.score || a.ageMs - b.ageMs)
    .slice(0, excess)
    .map(p => p.id)
}

export interface ConnectionTrimmerOptions extends TrimPolicy {
  intervalMs: number
}

export const TRIM_TARGET = 24
export const TRIM_GRACE_MS = 30_000
export const TRIM_INTERVAL_MS = 10_000

export interface ConnectionTrimmer {
  stop: () => void
  /** peers hung up on so far */
  trimmed: () => number
  /** one round now (tests) */
  trim: () => Promise<string[]>
}

export function startConnectionTrimmer (host: Host, log: Logger, opts: ConnectionTrimmerOptions): ConnectionTrimmer {
  const pubsub = host.services.pubsub as unknown as { getScore: (id: string) => number, getMeshPeers: (t: string) => string[], getTopics: () => string[] }
  let total = 0
  let running = false

  // kad-dht keeps its 20 closest peers connected: at 100 peers that alone was
  // 20–40 connections per peer, and it would redial every one the trimmer
  // closes (and the closed peer would redial us). Its closeness tag stays and
  // ranks those peers above others; a DHT lookup dials them when it needs them.
  const onUpdate = (evt: CustomEvent<PeerUpdate>): void => {
    const peer = evt.detail.peer
    if (!peer.tags.has(KAD_KEEP_ALIVE_TAG)) return
    void host.peerStore.merge(peer.id, { tags: { [KAD_KEEP_ALIVE_TAG]: undefined } }).catch(() => {})
  }
  host.addEventListener('peer:update', onUpdate)

  const trim = async (): Promise<string[]> => {
    if (running) return []
    running = true
    try {
      const peers = connectedPeers(host)
      if (peers.size <= opts.target) return []
      const mesh = new Set(pubsub.getTopics().flatMap(t => pubsub.getMeshPeers(t)))
      const now = Date.now()
      const candidates: TrimCandidate[] = []
      for (const [id, p] of peers) {
        const conns = host.getConnections(p)
        let tags: Map<string, { value: number }> = new Map()
        try { tags = (await host.peerStore.get(p)).tags } catch { /* not in the store: no tags */ }
        candidates.push({
          id,
          ageMs: now - Math.min(...conns.map(c => c.timeline.open)),
          inMesh: mesh.has(id),
          busy: conns.some(c => c.streams.some(s => !IDLE_PROTOCOLS.has(s.protocol ?? '') && streamBusy(viewStream(s, now), now))),
          keepAlive: [...tags.keys()].some(k => k.startsWith('keep-alive')),
          value: [...tags.values()].reduce((sum, t) => sum + t.value, 0),
          score: pubsub.getScore(id)
        })
      }
      const chosen = peersToTrim(candidates, opts)
      total += chosen.length
      if (chosen.length > 0) log.debug({ connected: peers.size, closing: chosen.length }, 'trimming connections')
      await Promise.allSettled(chosen.map(async id => { await host.hangUp(peers.get(id) as PeerId) }))
      return chosen
    } finally {
      running = false
    }
  }
  const timer = setInterval(() => { void trim().catch(err => log.debug({ err }, 'connection trim failed')) }, opts.intervalMs)
  timer.unref()
  return {
    stop: () => {
      clearInterval(timer)
      host.removeEventListener('peer:update', onUpdate)
    },
    trimmed: () => total,
    trim
  }
}
