import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { RPC } from '@libp2p/gossipsub/message'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLogger } from '../../node/log.js'
import { AUTHOR_RATE, GossipRate, OPEN_TOPIC_RATE } from '../../node/p2p/gossip-rate.js'
import { topicName } from '../../node/p2p/topics.js'
import { Peer } from '../../node/peer.js'
import { sleep, tempDir, waitFor } from '../helpers/procs.js'

// The attack: gossip had no rate. A peer publishing valid-looking messages as
// fast as it can sign them had every one decoded, kept (the last 1,000, up to
// 64 MiB) and relayed to its mesh by every honest peer, each of which then
// spent the same on the copies of its neighbours; on a protocol topic each one
// was also a chain query. On the free-form `announce` topic any key may
// author a message, so a flood can also come signed by a new key each time.
// Now every author has a rate per topic (node/p2p/gossip-rate.ts): a flood
// from its author is REJECTed past it (gossipsub's P4: the flooder is
// graylisted and hung up on) and not relayed; `announce` as a whole has a rate
// too, which bounds what keys made per message can make a peer take in.

const dirs: Array<{ cleanup: () => Promise<void> }> = []
const peers: Peer[] = []
const enc = new TextEncoder()

async function start (name: string, bootstrap: string[] = []): Promise<Peer> {
  const d = await tempDir(`ps-flood-${name}-`)
  dirs.push(d)
  const peer = await Peer.start({
    kind: bootstrap.length === 0 ? 'bootstrap' : 'peer', dataDir: join(d.path, name), network: 'devnet-test',
    listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap, logger: createLogger(name, { level: 'silent' })
  })
  peers.push(peer)
  return peer
}

let victim: Peer
let honest: Peer
const TOPIC = topicName('devnet-test', 'announce')

beforeAll(async () => {
  victim = await start('victim')
  honest = await start('honest', [victim.host.getMultiaddrs()[0].toString()])
}, 60_000)

afterAll(async () => {
  for (const p of peers) await p.stop()
  for (const d of dirs) await d.cleanup()
})

type RawPubsub = { sendRpc: (id: string, rpc: unknown) => boolean, getSubscribers: (t: string) => Array<{ toString: () => string }> }
const subscribed = async (from: Peer, to: Peer): Promise<void> => {
  const pubsub = from.host.services.pubsub as unknown as RawPubsub
  await waitFor(async () => pubsub.getSubscribers(TOPIC).some(p => p.toString() === to.peerId), 20_000, 'the subscription known')
}
const fromAuthor = (p: Peer, author: string): number => p.gossip.received({ topic: 'announce' }).filter(m => m.from === author).length

/** The honest peer's announcement still reaches the victim (resent while unseen: a flood publish skips a stream not open yet). */
async function honestGetsThrough (nonce: string): Promise<void> {
  await waitFor(async () => {
    await honest.gossip.publish('announce', enc.encode(JSON.stringify({ nonce }))).catch(() => {})
    return victim.gossip.received({ topic: 'announce' }).some(m => (m.msg as { nonce?: string }).nonce === nonce)
  }, 20_000, 'the honest announcement received', 500)
}

describe('a gossip flood', () => {
  it('from its author: taken up to the author\'s rate, the flooder penalised and hung up on', async () => {
    // connected to both honest peers: each gets the flood from its author, and relays of it from the other
    const spammer = await start('spammer', [victim, honest].map(p => p.host.getMultiaddrs()[0].toString()))
    await subscribed(spammer, victim)
    await subscribed(spammer, honest)
    // its burst's worth and more at once, then a few seconds at several times its rate, which each honest
    // peer takes part of (its refilled tokens) at moments of its own, and relays to the other
    const N = 600
    const t0 = Date.now()
    for (let i = 0; i < N; i++) {
      await spammer.gossip.publish('announce', enc.encode(JSON.stringify({ spam: i, pad: 'x'.repeat(200) }))).catch(() => {})
      if (i >= 200) await sleep(10)
    }
    const s = await waitFor(async () => { const st = victim.status(); return st.gossip.disconnected[spammer.peerId] !== undefined ? st : undefined }, 20_000, 'the flooder hung up on')
    const seconds = (Date.now() - t0) / 1000
    const taken = fromAuthor(victim, spammer.peerId)
    // its burst and its rate over the flood's seconds, not the flood
    expect(taken).toBeGreaterThan(0)
    expect(taken).toBeLessThanOrEqual(AUTHOR_RATE.burst + Math.ceil(AUTHOR_RATE.perSecond * seconds))
    expect(taken).toBeLessThan(N / 2)
    expect(s.gossip.rejectedBy[spammer.peerId]).toBeGreaterThanOrEqual(1)
    expect(s.gossip.disconnected[spammer.peerId].score).toBeLessThan(-80)
    // nobody else is blamed: not the honest peers that relayed what they took of it to each other
    // (a REJECT over the rate would have cost each of them: gossipsub penalises every forwarder of a
    // message it rejected), and an honest author is still heard
    await waitFor(async () => honest.status().gossip.disconnected[spammer.peerId] !== undefined ? true : undefined, 20_000, 'the flooder hung up on by the other')
    await honestGetsThrough('after the flood')
    for (const [p, other] of [[victim, honest], [honest, victim]]) {
      const st = p.status()
      expect(Object.keys(st.gossip.rejectedBy)).toEqual([spammer.peerId])
      expect(Object.keys(st.gossip.disconnected)).toEqual([spammer.peerId])
      expect(st.gossip.scores[other.peerId]).toBeGreaterThanOrEqual(0)
    }
  }, 60_000)

  it('signed by a new key each time: taken up to the topic\'s rate, dropped past it', async () => {
    const forger = await start('forger', [victim.host.getMultiaddrs()[0].toString()])
    await subscribed(forger, victim)
    const pubsub = forger.host.services.pubsub as unknown as RawPubsub
    const N = 1000
    const keys = await Promise.all(Array.from({ length: N }, async () => await generateKeyPair('Ed25519')))
    const signed = await Promise.all(keys.map(async (k, i) => {
      const from = peerIdFromPrivateKey(k).toMultihash().bytes
      const m: RPC.Message = { from, data: enc.encode(JSON.stringify({ spam: i })), seqno: randomBytes(8), topic: TOPIC }
      return { ...m, signature: await k.sign(new Uint8Array([...enc.encode('libp2p-pubsub:'), ...RPC.Message.encode(m)])) }
    }))
    const seen = (): number => victim.gossip.stats.accepted + victim.gossip.stats.ignored + victim.gossip.stats.rejected
    const accepted0 = victim.gossip.stats.accepted
    const seen0 = seen()
    const t0 = Date.now()
    for (let b = 0; b < N; b += 50) expect(pubsub.sendRpc(victim.peerId, { subscriptions: [], messages: signed.slice(b, b + 50) })).toBe(true)
    // every message through the victim's validator (bounded wait)
    await waitFor(async () => seen() - seen0 >= N ? true : undefined, 20_000, 'the flood validated')
    const seconds = (Date.now() - t0) / 1000
    const taken = victim.gossip.stats.accepted - accepted0
    expect(taken).toBeGreaterThan(0)
    expect(taken).toBeLessThanOrEqual(OPEN_TOPIC_RATE.burst + Math.ceil(OPEN_TOPIC_RATE.perSecond * seconds))
    expect(taken).toBeLessThan(N / 2)
    // the topic's rate refills: an honest author is heard again
    await sleep(1000)
    await honestGetsThrough('after the forged flood')
  }, 60_000)

  it('keys made per message on `announce` do not make a peer forget an author\'s rate on another topic', async () => {
    // before: one table of 4,096 authors for every topic; the forged flood (dropped over announce's own
    // rate, without a penalty) forgot the flooder's bucket on a protocol topic, where it then had a fresh burst
    const flooder = await start('evicter', [victim.host.getMultiaddrs()[0].toString()])
    const handler = { decode: (d: Uint8Array) => JSON.parse(new TextDecoder().decode(d)) as unknown }
    const PROBE = 'probe'
    victim.gossip.register(PROBE, handler)
    const full = flooder.gossip.register(PROBE, handler)
    const pubsub = flooder.host.services.pubsub as unknown as RawPubsub
    await subscribed(flooder, victim)
    await waitFor(async () => pubsub.getSubscribers(full).some(p => p.toString() === victim.peerId), 20_000, 'the probe subscription known')
    // signed beforehand: the attack's seconds are the victim's, not the key generation's
    const N = 4400
    const signed = await Promise.all(Array.from({ length: N }, async (_, i) => {
      const k = await generateKeyPair('Ed25519')
      const from = peerIdFromPrivateKey(k).toMultihash().bytes
      const m: RPC.Message = { from, data: enc.encode(JSON.stringify({ evict: i })), seqno: randomBytes(8), topic: TOPIC }
      return { ...m, signature: await k.sign(new Uint8Array([...enc.encode('libp2p-pubsub:'), ...RPC.Message.encode(m)])) }
    }))
    const taken = (): number => victim.gossip.received({ topic: PROBE }).filter(m => m.from === flooder.peerId).length
    const seen = (): number => victim.gossip.stats.accepted + victim.gossip.stats.ignored + victim.gossip.stats.rejected
    // the victim's rates on a clock that stands still (no refill): what is counted is its buckets, not how
    // fast a loaded machine validates the flood
    const own = victim.gossip.rate
    const still = new GossipRate(AUTHOR_RATE, () => 0)
    still.limitTopic(TOPIC, OPEN_TOPIC_RATE)
    Object.assign(victim.gossip, { rate: still })
    try {
      // its burst on the probe topic
      for (let i = 0; i < AUTHOR_RATE.burst; i++) await flooder.gossip.publish(PROBE, enc.encode(JSON.stringify({ first: i }))).catch(() => {})
      await waitFor(async () => taken() >= AUTHOR_RATE.burst ? true : undefined, 20_000, 'the burst taken')
      // the forged flood on announce, every message through the victim's validator
      const seen0 = seen()
      for (let b = 0; b < N; b += 100) pubsub.sendRpc(victim.peerId, { subscriptions: [], messages: signed.slice(b, b + 100) })
      await waitFor(async () => seen() - seen0 >= N ? true : undefined, 30_000, 'the forged flood validated')
      // a second burst on the probe topic: over its rate (nothing refilled), unless its bucket was forgotten
      const rejected0 = victim.gossip.stats.rejected
      for (let i = 0; i < AUTHOR_RATE.burst; i++) await flooder.gossip.publish(PROBE, enc.encode(JSON.stringify({ second: i }))).catch(() => {})
      await waitFor(async () => victim.gossip.stats.rejected > rejected0 || taken() >= 2 * AUTHOR_RATE.burst ? true : undefined, 20_000, 'the second burst met')
      await sleep(500)
      expect(taken()).toBe(AUTHOR_RATE.burst)
    } finally {
      Object.assign(victim.gossip, { rate: own })
    }
  }, 90_000)

  it('from a bootstrap peer: its first invalid message graylists it, its +20 notwithstanding', async () => {
    // a bootstrap peer is trusted for peer exchange: +20 of score at the peers that name it
    const boot = await start('boot')
    const joiner = await start('joiner', [boot.host.getMultiaddrs()[0].toString()])
    await subscribed(boot, joiner)
    // one message that is no JSON object, past the bootstrap peer's own validation
    await boot.host.services.pubsub.publish(TOPIC, enc.encode('not a JSON object'))
    await waitFor(async () => (joiner.status().gossip.rejectedBy[boot.peerId] ?? 0) >= 1 ? true : undefined, 20_000, 'the invalid message refused')
    // -100 + 20 was -80: not under the threshold, its RPCs still taken
    const s = await waitFor(async () => { const st = joiner.status(); return st.gossip.disconnected[boot.peerId] !== undefined ? st : undefined }, 10_000, 'the bootstrap peer hung up on')
    expect(s.gossip.disconnected[boot.peerId].score).toBeLessThan(-80)
  }, 60_000)
})
