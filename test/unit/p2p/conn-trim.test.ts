import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Host } from '../../../node/p2p/host.js'
import { loopbackHosts } from '../../helpers/loopback-hosts.js'
import { KAD_KEEP_ALIVE_TAG, peersToTrim, startConnectionTrimmer, type ConnectionTrimmer, type TrimCandidate } from '../../../node/p2p/conn-trim.js'
import { createLogger } from '../../../node/log.js'
import { noteProgress } from '../../../node/p2p/stream-progress.js'

const meshPeers = (h: Host, topic: string): string[] => (h.services.pubsub as unknown as { getMeshPeers: (t: string) => string[] }).getMeshPeers(topic)
const sleep = async (ms: number): Promise<void> => await new Promise(resolve => setTimeout(resolve, ms))

const peer = (id: string, over: Partial<TrimCandidate> = {}): TrimCandidate =>
  ({ id, ageMs: 60_000, inMesh: false, busy: false, keepAlive: false, value: 0, score: 0, ...over })

describe('peersToTrim', () => {
  it('closes nothing at or under the target', () => {
    expect(peersToTrim([peer('a'), peer('b')], { target: 2, graceMs: 0 })).toEqual([])
  })

  it('never closes a mesh peer, a busy or keep-alive peer, or a young connection', () => {
    const peers = [peer('mesh', { inMesh: true }), peer('busy', { busy: true }), peer('keep', { keepAlive: true }), peer('young', { ageMs: 100 }), peer('idle')]
    expect(peersToTrim(peers, { target: 0, graceMs: 1000 })).toEqual(['idle'])
  })

  it('closes negative scores first, then the least tag value (DHT-closest 50, shard provider 20), then the lowest score; only as many as over the target', () => {
    const peers = [peer('close', { value: 50, score: 1 }), peer('provider', { value: 20 }), peer('good', { score: 3 }), peer('bad', { score: -1, value: 50 }), peer('zero')]
    expect(peersToTrim(peers, { target: 2, graceMs: 0 })).toEqual(['bad', 'zero', 'good'])
    expect(peersToTrim(peers, { target: 0, graceMs: 0 })).toEqual(['bad', 'zero', 'good', 'provider', 'close'])
  })
})

// Real libp2p hosts on 127.0.0.1: a hub with six peers connected to it.
describe('connection trimmer on a real host', () => {
  const TOPIC = 'trim-test'
  const BUSY = '/proofswarm/test-busy/1.0.0'
  const HELD = '/proofswarm/test-held/1.0.0'
  let hub: Host
  let spokes: Host[]
  let trimmer: ConnectionTrimmer

  beforeAll(async () => {
    const hosts = await loopbackHosts(7)
    hub = hosts[0]
    spokes = hosts.slice(1)
    await Promise.all(spokes.map(async s => await s.dial(hub.getMultiaddrs()[0])))
    // spoke 0 shares a gossip topic with the hub: it ends in the hub's mesh
    hub.services.pubsub.subscribe(TOPIC)
    spokes[0].services.pubsub.subscribe(TOPIC)
    // spoke 1 has a transfer open to the hub that moves data (16 KiB every 100 ms, noted as a protocol
    // of ours does; bounded), spoke 2 a stream that stays open and moves nothing
    await hub.handle(BUSY, stream => {
      void (async () => {
        for (let i = 0; i < 300 && stream.writeStatus === 'writable'; i++) {
          try { stream.send(new Uint8Array(16 * 1024)) } catch { return } // closed at shutdown
          noteProgress(stream, 16 * 1024)
          await sleep(100)
        }
      })()
    })
    await hub.handle(HELD, () => { /* held open */ })
    await spokes[1].dialProtocol(hub.peerId, BUSY)
    await spokes[2].dialProtocol(hub.peerId, HELD)
    for (let i = 0; i < 100 && !meshPeers(hub, TOPIC).includes(spokes[0].peerId.toString()); i++) await sleep(100)
    // and the streams the hosts open on connecting (identify, gossipsub, kad) have finished negotiating
    const negotiating = (): boolean => hub.getConnections().some(c => c.streams.some(s => s.protocol == null || s.protocol === ''))
    for (let i = 0; i < 100 && negotiating(); i++) await sleep(100)
    trimmer = startConnectionTrimmer(hub, createLogger('peer', { level: 'silent' }), { target: 2, graceMs: 0, intervalMs: 3_600_000 })
  }, 30_000)

  afterAll(async () => {
    trimmer?.stop()
    await Promise.all([hub, ...spokes].map(async h => await h?.stop()))
  })

  it('hangs up on idle peers down to the target, keeping the mesh peer and the one moving data (not the one holding a stream that moves nothing)', async () => {
    expect(meshPeers(hub, TOPIC)).toContain(spokes[0].peerId.toString())
    expect(hub.getPeers()).toHaveLength(6)
    // a round skips a peer whose stream is still negotiating (a ping, a DHT query): a few rounds, bounded
    const closed: string[] = []
    for (let i = 0; i < 50 && closed.length < 4; i++) {
      closed.push(...await trimmer.trim())
      if (closed.length < 4) await sleep(100)
    }
    expect(closed).toHaveLength(4)
    expect(closed).not.toContain(spokes[0].peerId.toString())
    expect(closed).not.toContain(spokes[1].peerId.toString())
    expect(closed).toContain(spokes[2].peerId.toString())
    for (let i = 0; i < 50 && hub.getPeers().length > 2; i++) await sleep(100)
    expect(hub.getPeers().map(p => p.toString()).sort()).toEqual([spokes[0], spokes[1]].map(s => s.peerId.toString()).sort())
    expect(trimmer.trimmed()).toBe(4)
  }, 20_000)

  it('drops the DHT\'s keep-alive tag, so that a closed peer is not redialled', async () => {
    const id = spokes[3].peerId
    await hub.peerStore.merge(id, { tags: { [KAD_KEEP_ALIVE_TAG]: { value: 1 } } })
    let tags = (await hub.peerStore.get(id)).tags
    for (let i = 0; i < 50 && tags.has(KAD_KEEP_ALIVE_TAG); i++) { await sleep(50); tags = (await hub.peerStore.get(id)).tags }
    expect(tags.has(KAD_KEEP_ALIVE_TAG)).toBe(false)
  }, 10_000)
})
