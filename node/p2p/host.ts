import { bootstrap } from '@libp2p/bootstrap'
import { gossipsub, type GossipSub, type GossipsubOpts } from '@libp2p/gossipsub'
import { identify } from '@libp2p/identify'
import { kadDHT, passthroughMapper, removePrivateAddressesMapper, type KadDHT } from '@libp2p/kad-dht'
import { noise } from '@libp2p/noise'
import { ping } from '@libp2p/ping'
import { prometheusMetrics } from '@libp2p/prometheus-metrics'
import { tcp } from '@libp2p/tcp'
import { yamux } from '@libp2p/yamux'
import { createLibp2p, type Libp2p } from 'libp2p'
import type { Identify } from '@libp2p/identify'
import type { Ping } from '@libp2p/ping'
import type { PeerId, PrivateKey } from '@libp2p/interface'
import type { Registry } from 'prom-client'
import { DHT_PROTOCOL, GOSSIP_MAX_INBOUND_DATA_LENGTH } from './limits.js'
import type { GossipMetricsRegister } from './gossip-metrics.js'
import { batchYamuxWindowUpdates, fastNoiseFrameLengths } from './frames.js'
import { cacheEd25519Keys } from './ed25519-verify.js'
import { libp2pLogger } from './libp2p-logger.js'
import { boundDhtStore, type DhtStoreLimits } from './dht-store.js'

// a type alias (not an interface) so it satisfies libp2p's ServiceMap index signature
export type HostServices = {
  identify: Identify
  ping: Ping
  dht: KadDHT
  pubsub: GossipSub
}

export type Host = Libp2p<HostServices>

export interface HostInit {
  privateKey: PrivateKey
  listen: string[]
  bootstrap: string[]
  /**
   * Keep loopback/private addresses in DHT records and allow many same-host
   * connections. True for devnets and LANs; false on the public internet.
   */
  privateNetwork: boolean
  /** full names of the topics to score (invalid messages on them cost the sender) */
  scoredTopics?: string[]
  /**
   * Peer ids of the bootstrap peers we were told to use: their gossipsub peer
   * exchange (PX) is accepted (see BOOTSTRAP_APP_SCORE)
   */
  bootstrapPeerIds?: string[]
  /** prom-client registry for libp2p's own metrics */
  metricsRegistry?: Registry
  /** gossipsub's metrics (on /metrics), built on the same registry */
  gossipMetrics?: GossipMetricsRegister
  /**
   * Run libp2p's connection monitor, pinging each connection this often
   * (default: no monitor; see createHost)
   */
  pingIntervalMs?: number
  /** how long it waits for a ping's answer (default: libp2p's adaptive timeout, ≥ 5 s) */
  pingTimeoutMs?: number
  /** what others may put into the DHT store (default: dht-store.ts's bounds) */
  dhtStoreLimits?: DhtStoreLimits
  /** added to a peer's gossipsub application score (P5): the gossip router's flood penalties, negative */
  appScore?: (peerId: string) => number
}

// Scoring on protocol topics: one invalid message (P4) costs INVALID_MESSAGE_WEIGHT × 1², below
// gossipsub's graylist threshold (-80) whatever the sender earned, so its RPCs are ignored until
// the penalty decays (×0.99 per decay interval of 1 s: minutes). Delivery-rate
// penalties (P3) are off: protocol topics are quiet most of the time.
/**
 * What one invalid message costs its sender: more than the most its score
 * holds otherwise and the graylist threshold (-80) together. It holds up to
 * +75: a bootstrap peer's application score (+20) and, on each of the five
 * scored topics, time in the mesh (+1) and first deliveries (+10) (the topic
 * score cap, 10, applies only to a positive sum). At -100 a bootstrap peer's
 * first invalid message left it at -80 or above, not graylisted, and a peer
 * that had relayed well on every topic at -45.
 */
export const INVALID_MESSAGE_WEIGHT = -200

const topicScore = {
  topicWeight: 1,
  timeInMeshWeight: 0.01,
  timeInMeshQuantum: 1000,
  timeInMeshCap: 100,
  firstMessageDeliveriesWeight: 1,
  firstMessageDeliveriesDecay: 0.5,
  firstMessageDeliveriesCap: 10,
  meshMessageDeliveriesWeight: 0,
  meshMessageDeliveriesDecay: 0.5,
  meshMessageDeliveriesCap: 100,
  meshMessageDeliveriesThreshold: 1,
  meshMessageDeliveriesWindow: 10,
  meshMessageDeliveriesActivation: 5000,
  meshFailurePenaltyWeight: 0,
  meshFailurePenaltyDecay: 0.5,
  invalidMessageDeliveriesWeight: INVALID_MESSAGE_WEIGHT,
  invalidMessageDeliveriesDecay: 0.99
}

/**
 * Gossipsub heartbeat. Each heartbeat also sends IHAVE gossip (the ids of the
 * last GOSSIP_HISTORY heartbeats' messages) to GOSSIP_D_LAZY peers outside the
 * mesh on every topic with recent messages: one RPC, its own noise frame,
 * write syscalls and yamux window update each. While a topic carries
 * messages, the 700 ms heartbeat (as Lodestar) with 6 gossip peers sent ~8.6
 * IHAVE a second, about as many frames as 2 messages a second through a mesh
 * of 6 (docs/benchmarks.md, "Swarm scale: gossip settings"). gossipsub's 1 s
 * costs a joining peer whose GRAFT-on-subscribe came too early up to 0.3 s more.
 */
export const HEARTBEAT_MS = 1000
/**
 * Peers outside the mesh sent IHAVE gossip per topic and heartbeat: at least
 * GOSSIP_D_LAZY, or GOSSIP_FACTOR of the non-mesh peers if more (gossipsub's
 * defaults: 6, 0.25). A message a peer's mesh withheld still reaches it when
 * any of its ~16 other connected peers gossips the id to it: with 3 of ~16
 * over 4 heartbeats, each such peer does with probability ~0.57 (0.85 with 6).
 */
export const GOSSIP_D_LAZY = 3
export const GOSSIP_FACTOR = 0.1
/** heartbeats whose message ids are gossiped (the message cache keeps GOSSIP_CACHE) */
export const GOSSIP_HISTORY = 4
export const GOSSIP_CACHE = 7
/**
 * Mesh degree: D = 6 and D_lo = 4 (gossipsub's), D_hi = 8 instead of 12. A
 * peer receives a copy of every message from each mesh peer and sends one to
 * each; meshes grow to D_hi from inbound GRAFTs (at 40 peers: mean 7.5–7.8
 * mesh peers a topic, up to 12; 6.5–6.7 with D_hi = 8). Above D_hi a
 * heartbeat prunes back to D, keeping the best-scored.
 */
export const GOSSIP_D_HI = 8

/**
 * Dial and upgrade (noise, yamux) timeouts. On a private network (a devnet,
 * a LAN, one machine) a peer that answers late is loaded, not gone: a
 * handshake that times out is redialled and costs both ends the handshake
 * again, and on a CPU-starved machine that turned into a storm of redials
 * (docs/benchmarks.md, "Swarm scale"). libp2p's defaults (10 s) stay for
 * the public internet, where a slow dial is more often a dead address.
 */
export function dialTimeoutMs (privateNetwork: boolean): number { return privateNetwork ? 30_000 : 10_000 }

/** connections over which inbound ones are refused (the trimmer keeps a peer near TRIM_TARGET) */
export const MAX_CONNECTIONS = 128
/** TCP sockets the listener accepts (above the connection manager's maxConnections, which prunes) */
export const MAX_SOCKETS = 512
/** streams open at once on one connection, all protocols (yamux's default is 1,000) */
export const MAX_STREAMS_PER_CONNECTION = 256

/**
 * Duplicate filter key, read before any signature check: the signer and its
 * sequence number, which is what the message id (StrictSign) is made of, so
 * it never merges messages the id keeps apart. gossipsub caches it only after
 * a copy passed signature validation, so a forged copy cannot shadow the real one.
 */
export function fastMsgIdFn (msg: { from?: Uint8Array, seqno?: Uint8Array }): string {
  if (msg.from == null || msg.seqno == null) return '' // invalid under StrictSign: rejected, never cached
  return Buffer.from(msg.from).toString('hex') + ':' + Buffer.from(msg.seqno).toString('hex')
}

/**
 * The connected peers by id string. libp2p's getPeers() rebuilds every PeerId
 * from its string (a base58 decode and a key parse each): called every second
 * by the keeper and the graylist check, that was ~8 % of an idle peer's CPU.
 */
export function connectedPeers (host: Pick<Host, 'getConnections'>): Map<string, PeerId> {
  const peers = new Map<string, PeerId>()
  for (const c of host.getConnections()) peers.set(c.remotePeer.toString(), c.remotePeer)
  return peers
}

/** over gossipsub's acceptPXThreshold (10), far under what an invalid message costs (INVALID_MESSAGE_WEIGHT) */
export const BOOTSTRAP_APP_SCORE = 20

export async function createHost (init: HostInit): Promise<Host> {
  const bootstrapIds = new Set(init.bootstrapPeerIds ?? [])
  // fewer frames and write syscalls per message (node/p2p/frames.ts)
  await batchYamuxWindowUpdates()
  // gossip signature checks without a key import each (node/p2p/ed25519-verify.ts)
  await cacheEd25519Keys()
  const host = await createLibp2p<HostServices>({
    privateKey: init.privateKey,
    logger: libp2pLogger(),
    addresses: { listen: init.listen },
    // Hard caps under the connection manager's: sockets the listener accepts
    // at all (idle ones included; the manager prunes to maxConnections), and
    // streams one connection (one peer) may have open at once over every
    // protocol (each protocol also has its own maxInboundStreams).
    transports: [tcp({ maxConnections: MAX_SOCKETS })],
    connectionEncrypters: [components => fastNoiseFrameLengths(noise()(components))],
    streamMuxers: [yamux({ maxInboundStreams: MAX_STREAMS_PER_CONNECTION, maxOutboundStreams: MAX_STREAMS_PER_CONNECTION })],
    peerDiscovery: init.bootstrap.length > 0
      ? [bootstrap({ list: init.bootstrap, timeout: 100 })]
      : [],
    // Connections are trimmed to TRIM_TARGET by node/p2p/conn-trim.ts (libp2p's
    // pruner cannot close a connection that carries gossipsub); this is the
    // hard cap above it, where inbound connections are refused: room for
    // newcomers and for the DHT's dials between trims.
    connectionManager: init.privateNetwork
      ? {
          // A devnet dials many peers from one IP; the defaults (5 inbound
          // connections/s per IP, 10 upgrading at once) would refuse them.
          // No allow list: allowed addresses are exempt from maxConnections.
          inboundConnectionThreshold: 1000,
          maxIncomingPendingConnections: 64,
          maxConnections: MAX_CONNECTIONS,
          dialTimeout: dialTimeoutMs(true),
          addressDialTimeout: dialTimeoutMs(true),
          inboundUpgradeTimeout: dialTimeoutMs(true),
          outboundStreamProtocolNegotiationTimeout: dialTimeoutMs(true),
          inboundStreamProtocolNegotiationTimeout: dialTimeoutMs(true)
        }
      : { maxConnections: MAX_CONNECTIONS },
    // libp2p's connection monitor pings every connection over a new stream
    // (multistream negotiation, a peer-store write at each end, ~10 frames)
    // to measure its RTT, which nothing here reads. It is off: at 100 peers
    // its pings were most of an idle peer's streams (docs/benchmarks.md,
    // "Swarm scale: idle and per-message CPU"). A dead link is still found:
    // yamux sends its own keep-alive ping frame on every connection every
    // 30 s, and a write to a dead socket fails and closes the connection (the
    // monitor, set never to close a connection on a late ping, found dead
    // links no other way). pingIntervalMs turns it back on; a ping answered
    // late then does not close the connection either: a loaded peer answers
    // late, and closing its connections made it and the peers that redialled
    // it spend their CPU on handshakes instead.
    connectionMonitor: init.pingIntervalMs == null
      ? { enabled: false }
      : {
          pingInterval: init.pingIntervalMs,
          abortConnectionOnPingFailure: false,
          ...(init.pingTimeoutMs != null ? { pingTimeout: { minTimeout: init.pingTimeoutMs, maxTimeout: init.pingTimeoutMs } } : {})
        },
    metrics: init.metricsRegistry != null
      ? prometheusMetrics({ registry: init.metricsRegistry, collectDefaultMetrics: false, preserveExistingMetrics: true })
      : undefined,
    services: {
      identify: identify(),
      ping: ping(),
      dht: kadDHT({
        protocol: DHT_PROTOCOL,
        clientMode: false,
        peerInfoMapper: init.privateNetwork ? passthroughMapper : removePrivateAddressesMapper,
        allowQueryWithZeroPeers: true
      }),
      pubsub: gossipsub({
        ...(init.gossipMetrics != null
          ? {
              metricsRegister: init.gossipMetrics as unknown as NonNullable<GossipsubOpts['metricsRegister']>,
              metricsTopicStrToLabel: new Map((init.scoredTopics ?? []).map(t => [t, t]))
            }
          : {}),
        allowPublishToZeroTopicPeers: true,
        emitSelf: false,
        maxInboundDataLength: GOSSIP_MAX_INBOUND_DATA_LENGTH,
        // bootstrap peers are well connected: peer exchange helps joiners find a mesh
        doPX: true,
        // the message cache keeps 7 s (7 heartbeats) and gossips the last 4 s
        heartbeatInterval: HEARTBEAT_MS,
        Dhi: GOSSIP_D_HI,
        Dlazy: GOSSIP_D_LAZY,
        gossipFactor: GOSSIP_FACTOR,
        // Without it, every copy of a message (a peer gets one from the
        // publisher and one from each mesh neighbour that forwards it) has its
        // Ed25519 signature checked before the seen-cache lookup: in a 20-peer
        // swarm that was ~20 % of a peer's CPU while gossiping, and on a
        // shared machine CPU queueing is most of the delivery latency.
        fastMsgIdFn,
        mcacheLength: GOSSIP_CACHE,
        mcacheGossip: GOSSIP_HISTORY,
        scoreParams: {
          // the gossipsub spec's way to trust bootstrappers: an application
          // score that lifts them over acceptPXThreshold (10), so the peers a
          // full bootstrap peer names when it PRUNEs a newcomer are dialled at
          // once (a joining peer finds a mesh without waiting for the DHT)
          appSpecificScore: (id: string) => (bootstrapIds.has(id) ? BOOTSTRAP_APP_SCORE : 0) + (init.appScore?.(id) ?? 0),
          appSpecificWeight: 1,
          IPColocationFactorWeight: init.privateNetwork ? 0 : -35,
          topics: Object.fromEntries((init.scoredTopics ?? []).map(t => [t, topicScore]))
        }
      })
    }
  })
  // kad-dht keeps every provider and value record it is sent: bounded (dht-store.ts)
  boundDhtStore(host, init.dhtStoreLimits)
  return host
}
