import { bootstrap } from '@libp2p/bootstrap'
import { gossipsub, type GossipSub } from '@libp2p/gossipsub'
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
import type { PrivateKey } from '@libp2p/interface'
import type { Registry } from 'prom-client'
import { DHT_PROTOCOL, GOSSIP_MAX_INBOUND_DATA_LENGTH } from './limits.js'

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
  /** prom-client registry for libp2p's own metrics */
  metricsRegistry?: Registry
}

export async function createHost (init: HostInit): Promise<Host> {
  return await createLibp2p<HostServices>({
    privateKey: init.privateKey,
    addresses: { listen: init.listen },
    transports: [tcp()],
    connectionEncrypters: [noise()],
    streamMuxers: [yamux()],
    peerDiscovery: init.bootstrap.length > 0
      ? [bootstrap({ list: init.bootstrap, timeout: 100 })]
      : [],
    connectionManager: init.privateNetwork
      ? {
          // A devnet dials many peers from one IP; the default (5 inbound
          // connections/s per IP) would refuse them.
          inboundConnectionThreshold: 1000,
          allow: ['/ip4/127.0.0.0/ipcidr/8'],
          maxConnections: 300
        }
      : { maxConnections: 300 },
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
        allowPublishToZeroTopicPeers: true,
        emitSelf: false,
        maxInboundDataLength: GOSSIP_MAX_INBOUND_DATA_LENGTH,
        // bootstrap peers are well connected: peer exchange helps joiners find a mesh
        doPX: true,
        scoreParams: {
          // a peer that sends invalid messages is graylisted quickly
          IPColocationFactorWeight: init.privateNetwork ? 0 : -35
        }
      })
    }
  })
}
