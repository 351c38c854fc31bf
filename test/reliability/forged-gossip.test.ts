import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Peer } from '../../node/peer.js'
import { topicName } from '../../node/p2p/topics.js'
import { tempDir, waitFor } from '../helpers/procs.js'
import { startShardPeer } from '../helpers/shard-peer.js'

// A peer sends gossip with forged signatures (someone else's `from`, bytes
// that are no signature). gossipsub refuses it before any validator of ours,
// so it was counted nowhere: `status --json` showed nothing, /metrics had no
// gossipsub series at all, and the sender, graylisted, stayed connected. Now
// gossipsub's metrics are exported, `status` counts the refusals by reason,
// and a graylisted sender is disconnected (it may dial back: its gossip stays
// ignored while its score is low).

let dir: { path: string, cleanup: () => Promise<void> }
let honest: Peer, forger: Peer, victim: Peer

beforeAll(async () => {
  dir = await tempDir('ps-forged-gossip-')
  honest = await startShardPeer(join(dir.path, 'honest'), [])
  const addr = honest.host.getMultiaddrs()[0].toString()
  forger = await startShardPeer(join(dir.path, 'forger'), [addr])
  victim = await startShardPeer(join(dir.path, 'victim'), [addr])
})

afterAll(async () => {
  await Promise.all([honest, forger, victim].filter(Boolean).map(async p => await p.stop()))
  await dir?.cleanup()
})

describe('forged gossip', () => {
  it('is counted in status --json and on /metrics, and its graylisted sender is disconnected', async () => {
    const topic = topicName('devnet-test', 'announce')
    const fpubsub = forger.host.services.pubsub as unknown as {
      sendRpc: (id: string, rpc: unknown) => boolean
      getSubscribers: (t: string) => Array<{ toString: () => string }>
    }
    // the forger knows the honest peer is on the topic (an open gossip stream to it)
    await waitFor(async () => fpubsub.getSubscribers(topic).some(p => p.toString() === honest.peerId) ? true : undefined, 20_000, 'subscription known')
    let hungUp = false
    honest.host.addEventListener('peer:disconnect', e => { if (e.detail.toString() === forger.peerId) hungUp = true })
    const victimId = victim.host.peerId.toMultihash().bytes
    let sent = 0
    for (let i = 0; i < 5; i++) {
      const ok = fpubsub.sendRpc(honest.peerId, {
        subscriptions: [],
        messages: [{ from: victimId, data: new TextEncoder().encode(JSON.stringify({ hello: i })), seqno: randomBytes(8), topic, signature: randomBytes(64) }]
      })
      if (ok) sent++
    }
    expect(sent).toBeGreaterThan(0)

    // counted by reason in status
    const st = await waitFor(async () => { const s = honest.status(); return (s.gossip.invalid.invalid_signature ?? 0) > 0 ? s : undefined }, 10_000, 'forged messages counted in status')
    expect(st.gossip.invalid.invalid_signature).toBeGreaterThanOrEqual(1)
    // gossipsub series on /metrics
    const metrics = await honest.metrics.registry.metrics()
    expect(metrics).toMatch(/gossipsub_msg_received_invalid_total\{error="invalid_signature"\} [1-9]/)
    expect(metrics).toMatch(/gossipsub_mesh_peer_count/)
    // the forger, graylisted, is hung up on (the victim stays connected)
    await waitFor(async () => hungUp ? true : undefined, 20_000, 'forger disconnected')
    expect(honest.status().gossip.disconnected[forger.peerId].score).toBeLessThan(-80)
    expect(honest.host.getPeers().some(p => p.toString() === victim.peerId)).toBe(true)
  }, 60_000)
})
