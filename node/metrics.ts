import { Counter, Gauge, Registry } from 'prom-client'
import { strayRejections } from './process-policy.js'

// The node's own metrics, in the same registry as libp2p's (prometheus-metrics).
export interface NodeMetrics {
  registry: Registry
  gossipMessages: Counter<'topic' | 'result'>
  connectedPeers: Gauge
  uptimeSeconds: Gauge
  unhandledRejections: Counter
}

export function createNodeMetrics (): NodeMetrics {
  const registry = new Registry()
  // process-wide (node/process-policy.ts): read at each scrape
  let counted = 0
  return {
    registry,
    gossipMessages: new Counter({ name: 'proofswarm_gossip_messages_total', help: 'Gossip messages validated, by topic and result', labelNames: ['topic', 'result'], registers: [registry] }),
    connectedPeers: new Gauge({ name: 'proofswarm_connected_peers', help: 'Peers with an open connection', registers: [registry] }),
    uptimeSeconds: new Gauge({ name: 'proofswarm_uptime_seconds', help: 'Seconds since the peer started', registers: [registry] }),
    unhandledRejections: new Counter({
      name: 'proofswarm_unhandled_rejections_total',
      help: 'Promise rejections nothing handled in this process (logged; the process keeps running)',
      registers: [registry],
      collect () {
        const n = strayRejections().count
        if (n > counted) { this.inc(n - counted); counted = n }
      }
    })
  }
}
