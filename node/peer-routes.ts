import { HttpError, intParam, type ControlServer } from './control/server.js'
import type { NodeMetrics } from './metrics.js'
import { findProvidersTraced } from './p2p/dht-lookup.js'
import type { GossipRouter } from './p2p/gossip.js'
import type { Host } from './p2p/host.js'
import { MAX_GOSSIP_MESSAGE_BYTES } from './p2p/limits.js'
import { topicName } from './p2p/topics.js'

// The peer's own control API endpoints (node/peer.ts): its status and
// metrics, publishing and reading gossip, and DHT provide/lookup. The roles'
// endpoints are node/roles/api/'s.

/** What the endpoints use of the peer. */
export interface RoutedPeer {
  readonly control: ControlServer
  readonly metrics: NodeMetrics
  readonly gossip: GossipRouter
  readonly host: Host
  readonly network: string
  status: () => unknown
}

export function installPeerRoutes (peer: RoutedPeer): void {
  const c = peer.control
  c.get('/v1/status', () => peer.status())
  c.text('/metrics', async () => await peer.metrics.registry.metrics())
  c.post('/v1/gossip/publish', async ({ body }) => {
    const b = body as { topic?: string, data?: string }
    if (typeof b.topic !== 'string' || typeof b.data !== 'string') throw new HttpError(400, 'body must be {"topic": string, "data": string (utf-8)}')
    const data = new TextEncoder().encode(b.data)
    if (data.length > MAX_GOSSIP_MESSAGE_BYTES) throw new HttpError(413, `message over ${MAX_GOSSIP_MESSAGE_BYTES} bytes`)
    try {
      return await peer.gossip.publish(b.topic, data)
    } catch (err) {
      throw new HttpError(400, (err as Error).message)
    }
  })
  if (process.env.PROOFSWARM_DEBUG_ROUTES === '1') {
    // fault injection for tests: publish raw bytes, bypassing our own validation
    c.post('/v1/debug/gossip-raw', async ({ body }) => {
      const b = body as { topic?: string, hex?: string }
      if (typeof b.topic !== 'string' || typeof b.hex !== 'string') throw new HttpError(400, 'body must be {"topic", "hex"}')
      const r = await peer.host.services.pubsub.publish(topicName(peer.network, b.topic), Buffer.from(b.hex, 'hex'))
      return { recipients: r.recipients.length }
    })
  }
  c.get('/v1/gossip/messages', ({ url }) => peer.gossip.received({
    topic: url.searchParams.get('topic') ?? undefined,
    since: url.searchParams.has('since') ? intParam(url, 'since', 0, Number.MAX_SAFE_INTEGER, 0) : undefined
  }))
  c.post('/v1/dht/provide', async ({ body }) => {
    const cid = await parseCidBody(body)
    await peer.host.contentRouting.provide(cid, { signal: AbortSignal.timeout(20_000) })
    return { provided: cid.toString() }
  })
  c.get('/v1/dht/providers', async ({ url }) => {
    const cid = await parseCidBody({ cid: url.searchParams.get('cid') })
    const timeoutMs = intParam(url, 'timeoutMs', 1, 60_000, 10_000)
    // max=1: stop at the first provider (a fetcher needs one), instead of walking the DHT for up to 20
    const max = intParam(url, 'max', 1, 20, 20)
    const { providers, ...lookup } = await findProvidersTraced(peer.host, cid, { timeoutMs, max })
    return { cid: cid.toString(), providers, lookup }
  })
}

async function parseCidBody (body: unknown): Promise<import('multiformats/cid').CID> {
  const { CID } = await import('multiformats/cid')
  const s = (body as { cid?: unknown })?.cid
  if (typeof s !== 'string') throw new HttpError(400, 'a "cid" is required')
  try { return CID.parse(s) } catch { throw new HttpError(400, `invalid CID "${s}"`) }
}
