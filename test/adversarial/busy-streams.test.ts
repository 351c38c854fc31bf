import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLogger } from '../../node/log.js'
import { startConnectionTrimmer } from '../../node/p2p/conn-trim.js'
import { DHT_PROTOCOL } from '../../node/p2p/limits.js'
import type { Host } from '../../node/p2p/host.js'
import type { Peer } from '../../node/peer.js'
import { DISPUTE_PROTOCOL, serve as serveDisputes } from '../../node/dispute/transport.js'
import { TASKBOOK_PROTOCOL, TaskBook } from '../../node/roles/task-book.js'
import { getShardService } from '../../node/shards/index.js'
import { SHARD_PROTOCOL, chunk } from '../../protocols/shards/index.js'
import { loopbackHosts } from '../helpers/loopback-hosts.js'
import { tempDir } from '../helpers/procs.js'
import { startShardPeer } from '../helpers/shard-peer.js'
import { HOLDS, type HoldName, type HoldTarget } from '../helpers/stream-holds.js'

// The attacker: sybil peers that connect to a victim and keep a stream open on
// each protocol it serves without doing any work — a shard stream never used,
// a request sent a byte at a time, 1 MiB answers asked for and never read, a
// request-response stream left half open, a DHT stream reopened whenever it
// is closed, requests for blocks nobody has every few seconds, big requests
// nobody needs every few seconds (bytes moved, but no work done). While a stream
// counted as work in progress, the trimmer never closed such a peer: each
// held a connection slot (and the streams' memory) for ever and could crowd
// honest peers out. The attacker gains if any of its connections outlives the
// trimmer's rounds, or any of its idle streams outlives the protocols'
// deadlines. Real peers on 127.0.0.1: the victim is a node with its shard
// store (LevelDB), task book and dispute handler; the sybils are raw libp2p
// hosts opening the victim's protocols by hand.

const sleep = async (ms: number): Promise<void> => await new Promise(resolve => setTimeout(resolve, ms))
const meshPeers = (h: Host, topic: string): string[] => (h.services.pubsub as unknown as { getMeshPeers: (t: string) => string[] }).getMeshPeers(topic)
const TOPIC = 'busy-streams-test'
const PROTOCOL: Record<HoldName, string> = {
  idleShard: SHARD_PROTOCOL,
  trickleShard: SHARD_PROTOCOL,
  slowLoris: SHARD_PROTOCOL,
  cheapRequests: SHARD_PROTOCOL,
  halfOpenTaskbook: TASKBOOK_PROTOCOL,
  trickleDispute: DISPUTE_PROTOCOL,
  halfOpenDispute: DISPUTE_PROTOCOL,
  bigDisputeRequests: DISPUTE_PROTOCOL,
  cyclingDht: DHT_PROTOCOL
}
const ALL: HoldName[] = ['idleShard', 'trickleShard', 'slowLoris', 'cheapRequests', 'halfOpenTaskbook', 'trickleDispute', 'halfOpenDispute', 'bigDisputeRequests', 'cyclingDht']
/** the idle holds: each must be ended by the victim's own deadlines, with no trimming at all */
const IDLE: HoldName[] = ['idleShard', 'trickleShard', 'slowLoris', 'halfOpenTaskbook', 'trickleDispute', 'halfOpenDispute']
/** the victim ends every idle stream within this: 30 s deadlines (a dispute request, an unread answer), then 10 s for a close */
const STREAM_BOUND_MS = 60_000
/** and hangs up on every sybil within this once over its target (a query of its own to a sybil protects it ≤ 30 s) */
const SLOT_BOUND_MS = 60_000

let dir: { path: string, cleanup: () => Promise<void> }
let victim: Peer
let honest: Host[]
let sybils: Host[]
let target: HoldTarget

/** the victim's streams that sybil i opened on the protocol of its hold */
const heldStreams = (names: HoldName[], i: number): number => victim.host.getConnections(sybils[i].peerId).flatMap(c => c.streams)
  .filter(s => s.direction === 'inbound' && s.protocol === PROTOCOL[names[i]]).length
/** the sybils whose hold has no stream open on the victim */
const notHeld = (names: HoldName[]): HoldName[] => names.filter((_, i) => heldStreams(names, i) === 0)

/** starts hold `names[i]` on sybil i; each resolves when the victim ended its stream */
const startHolds = (names: HoldName[], stop: AbortSignal): Array<Promise<number>> => names.map(async (n, i) => {
  const t0 = Date.now()
  await HOLDS[n](sybils[i], target, stop).catch(() => {})
  return Date.now() - t0
})

beforeAll(async () => {
  dir = await tempDir('ps-busy-streams-')
  victim = await startShardPeer(join(dir.path, 'victim'), [])
  void new TaskBook(victim)
  await serveDisputes(victim.host, async () => ({ err: 'not a party to this dispute' }), () => {})
  const data = randomBytes(4 * 1024 * 1024)
  await getShardService(victim).addBytes(data)
  target = { victim: victim.host.peerId, bigBlock: [...chunk(data)][0].cid, missingBlock: [...chunk(randomBytes(1000))][0].cid }
  const hosts = await loopbackHosts(2 + ALL.length)
  honest = hosts.slice(0, 2)
  sybils = hosts.slice(2)
  victim.host.services.pubsub.subscribe(TOPIC)
  for (const h of honest) { h.services.pubsub.subscribe(TOPIC); await h.dial(victim.host.getMultiaddrs()[0]) }
  for (let i = 0; i < 100 && meshPeers(victim.host, TOPIC).length < honest.length; i++) await sleep(100)
}, 60_000)

afterAll(async () => {
  await Promise.all([...(honest ?? []), ...(sybils ?? [])].map(async h => await h.stop()))
  await victim?.stop()
  await dir?.cleanup()
})

describe('sybils holding streams open without doing any work', () => {
  it('are hung up on by the trimmer once the victim is over its target, and never an honest mesh peer', async () => {
    await Promise.all(sybils.map(async s => await s.dial(victim.host.getMultiaddrs()[0])))
    const stop = new AbortController()
    const holds = startHolds(ALL, stop.signal)
    try {
      // every hold is in place: the victim has a stream of the sybil's open (bounded wait)
      for (let i = 0; i < 100 && notHeld(ALL).length > 0; i++) await sleep(100)
      expect(notHeld(ALL)).toEqual([])
      const trimmer = startConnectionTrimmer(victim.host, createLogger('peer', { level: 'silent' }), { target: honest.length, graceMs: 0, intervalMs: 3_600_000 })
      const sybilIds = new Set(sybils.map(s => s.peerId.toString()))
      const honestIds = honest.map(h => h.peerId.toString())
      const trimmed = new Set<string>()
      const t0 = Date.now()
      try {
        while (Date.now() - t0 < SLOT_BOUND_MS && [...sybilIds].some(id => !trimmed.has(id))) {
          for (const id of await trimmer.trim()) trimmed.add(id)
          await sleep(500)
        }
      } finally { trimmer.stop() }
      expect([...sybilIds].filter(id => !trimmed.has(id))).toEqual([])
      for (const id of honestIds) expect(trimmed.has(id)).toBe(false)
      expect(victim.host.getPeers().map(p => p.toString())).toEqual(expect.arrayContaining(honestIds))
      expect(meshPeers(victim.host, TOPIC).sort()).toEqual([...honestIds].sort())
      // with its connection gone, no hold has a stream left
      const ended = await Promise.race([Promise.all(holds), sleep(10_000).then(() => 'holds still open')])
      expect(ended).not.toBe('holds still open')
    } finally {
      stop.abort()
      await Promise.allSettled(holds)
    }
  }, SLOT_BOUND_MS + 40_000)

  it('have every idle stream ended by the victim\'s protocol deadlines, with no trimming', async () => {
    for (const s of sybils.slice(0, IDLE.length)) {
      if (s.getConnections(victim.host.peerId).length === 0) await s.dial(victim.host.getMultiaddrs()[0])
    }
    const stop = new AbortController()
    const holds = startHolds(IDLE, stop.signal)
    try {
      for (let i = 0; i < 100 && notHeld(IDLE).length > 0; i++) await sleep(100)
      expect(notHeld(IDLE)).toEqual([])
      const ended = await Promise.race([Promise.all(holds), sleep(STREAM_BOUND_MS).then(() => undefined)])
      const still = IDLE.filter((_, i) => heldStreams(IDLE, i) > 0)
      expect(still).toEqual([])
      expect(ended).toBeDefined()
      for (const ms of ended ?? []) expect(ms).toBeLessThan(STREAM_BOUND_MS)
    } finally {
      stop.abort()
      await Promise.allSettled(holds)
    }
  }, STREAM_BOUND_MS + 30_000)
})
