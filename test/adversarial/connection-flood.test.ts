import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Host } from '../../node/p2p/host.js'
import { loopbackHosts } from '../helpers/loopback-hosts.js'
import { startConnectionTrimmer, type ConnectionTrimmer } from '../../node/p2p/conn-trim.js'
import { createLogger } from '../../node/log.js'

// The attacker: a swarm of identities that connect to a victim and keep
// redialling it, hoping the victim's connection trimming (which closes
// connections down to a target) closes its honest gossip neighbours to make
// room, so that the victim's mesh — what it hears the protocol through — ends
// up empty or theirs. The attacker profits if any honest mesh peer is closed.
// Real libp2p hosts on 127.0.0.1.
const sleep = async (ms: number): Promise<void> => await new Promise(resolve => setTimeout(resolve, ms))
const meshPeers = (h: Host, topic: string): string[] => (h.services.pubsub as unknown as { getMeshPeers: (t: string) => string[] }).getMeshPeers(topic)
const TOPIC = 'flood-test'
const TARGET = 3

describe('a flood of connections from many identities', () => {
  let victim: Host
  let honest: Host[]
  let sybils: Host[]
  let trimmer: ConnectionTrimmer

  beforeAll(async () => {
    const hosts = await loopbackHosts(11)
    victim = hosts[0]
    honest = hosts.slice(1, 3)
    sybils = hosts.slice(3)
    victim.services.pubsub.subscribe(TOPIC)
    for (const h of honest) { h.services.pubsub.subscribe(TOPIC); await h.dial(victim.getMultiaddrs()[0]) }
    for (let i = 0; i < 100 && meshPeers(victim, TOPIC).length < honest.length; i++) await sleep(100)
    trimmer = startConnectionTrimmer(victim, createLogger('peer', { level: 'silent' }), { target: TARGET, graceMs: 0, intervalMs: 3_600_000 })
  }, 30_000)

  afterAll(async () => {
    trimmer?.stop()
    await Promise.all([victim, ...honest, ...sybils].map(async h => await h?.stop()))
  })

  it('never closes an honest mesh peer, and trims the sybils back each time they redial', async () => {
    const honestIds = honest.map(h => h.peerId.toString())
    expect(meshPeers(victim, TOPIC).sort()).toEqual([...honestIds].sort())
    for (let wave = 0; wave < 3; wave++) {
      await Promise.allSettled(sybils.map(async s => await s.dial(victim.getMultiaddrs()[0], { signal: AbortSignal.timeout(5000) })))
      expect(victim.getPeers().length).toBeGreaterThan(TARGET)
      // rounds until the victim is back at its target (a round skips a connection whose streams still negotiate,
      // which takes seconds on a loaded machine); bounded
      for (let i = 0; i < 300 && victim.getPeers().length > TARGET; i++) { await trimmer.trim(); await sleep(100) }
      const connected = victim.getPeers().map(p => p.toString())
      expect(connected.length).toBeLessThanOrEqual(TARGET)
      for (const id of honestIds) expect(connected).toContain(id)
      expect(meshPeers(victim, TOPIC).sort()).toEqual([...honestIds].sort())
    }
    expect(trimmer.trimmed()).toBeGreaterThanOrEqual(3 * (sybils.length - (TARGET - honest.length)))
  }, 150_000)
})
