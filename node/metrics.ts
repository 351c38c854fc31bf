import { Counter, Gauge, Registry } from 'prom-client'

// The node's own metrics, in the same registry as libp2p's (prometheus-metrics).
export interface NodeMetrics {
  registry: Registry
  gossipMessages: Counter<'topic' | 'result'>
  connectedPeers: Gauge
  uptimeSeconds: Gauge
}

export function createNodeMetrics (): NodeMetrics {
  const registry = new Registry()
  return {
    registry,
    gossipMessages: new Counter({ name: 'proofswarm_gossip_messages_total', help: 'Gossip messages validated, by topic and result', labelNames: ['topic', 'result'], registers: [registry] }),
    connectedPeers: new Gauge({ name: 'proofswarm_connected_peers', help: 'Peers with an open connection', registers: [registry] }),
    uptimeSeconds: new Gauge({ name: 'proofswarm_uptime_seconds', help: 'Seconds since the peer started', registers: [registry] })
  }
}
