import { randomBytes } from 'node:crypto'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { multiaddr } from '@multiformats/multiaddr'
import { lpStream } from '@libp2p/utils'
import type { Stream } from '@libp2p/interface'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Peer } from '../../node/peer.js'
import { getShardService } from '../../node/shards/index.js'
import { MAX_INBOUND_STREAMS } from '../../node/shards/server.js'
import { MAX_PIPELINE, SHARD_PROTOCOL, chunk, encodeRequest } from '../../protocols/shards/index.js'
import { CliSwarm, type CliPeer } from '../helpers/cli-peers.js'
import { runCliJson, tempDir } from '../helpers/procs.js'
import { peakRssFor, round, settledRss } from '../helpers/rss.js'
import { startShardPeer } from '../helpers/shard-peer.js'

// Fetchers that ask for blocks and never read the answers: each used to pin
// ~100 MiB of the provider (every stream held a full pipeline of 1 MiB
// answers, 32 streams per connection), kept after they left. Now every
// answer is charged to the fetcher's share of a serve budget before its block
// is read: 4 slow readers with 32 streams of 8 requests each keep the
// provider within 2× its idle RSS, and an honest fetcher is still served.

const MiB = 1024 * 1024
const SLOW = 4
let dir: { path: string, cleanup: () => Promise<void> }
let swarm: CliSwarm | undefined
let provider: CliPeer
const inproc: Peer[] = []

const cli = async (args: string[], timeoutMs = 60_000): Promise<any> => await runCliJson(args, timeoutMs)

beforeAll(async () => {
  dir = await tempDir('ps-slow-readers-')
  swarm = await CliSwarm.start(dir.path)
  provider = await swarm.join('provider')
}, 60_000)

afterAll(async () => {
  await Promise.all(inproc.map(async p => await p.stop().catch(() => {})))
  await swarm?.stop()
  await dir?.cleanup()
})

describe('fetchers that never read their responses', () => {
  it(`${SLOW} slow readers keep the provider within 2× its idle RSS, and an honest fetcher is still served`, async () => {
    const data = randomBytes(32 * MiB)
    const file = join(dir.path, 'shard.bin')
    await writeFile(file, data)
    const added = await cli(['shards', 'add', file, '--name', 'shard', '--data-dir', provider.dataDir])
    const cids = [...chunk(data)].map(c => c.cid)
    const pid = provider.proc.child.pid!
    // idle: the provider at rest after it served the shard once (warm code paths and store)
    const honestFetch = async (name: string): Promise<void> => {
      const p = await startShardPeer(join(dir.path, name), [])
      inproc.push(p)
      await p.host.dial(multiaddr(provider.addr))
      const r = await getShardService(p).fetch(added.cid, { providers: [provider.id], findTimeoutMs: 20_000, provide: false })
      expect(r.fetchedBytes).toBe(data.length)
    }
    await honestFetch('warm')
    await inproc.pop()!.stop()
    const idle = await settledRss(pid)

    // each slow reader: MAX_INBOUND_STREAMS streams, MAX_PIPELINE requests on each, reads paused
    const streams: Stream[] = []
    for (let i = 0; i < SLOW; i++) {
      const p = await startShardPeer(join(dir.path, `slow${i}`), [])
      inproc.push(p)
      await p.host.dial(multiaddr(provider.addr))
      for (let s = 0; s < MAX_INBOUND_STREAMS; s++) {
        const stream = await p.host.dialProtocol(multiaddr(provider.addr), SHARD_PROTOCOL)
        stream.pause()
        const lp = lpStream(stream)
        for (let r = 0; r < MAX_PIPELINE; r++) await lp.write(encodeRequest({ id: r + 1, cid: cids[(s * MAX_PIPELINE + r) % cids.length] }))
        streams.push(stream)
      }
      // libp2p's per-protocol stream cap: one more shard stream is refused
      if (i === 0) await expect(
        p.host.dialProtocol(multiaddr(provider.addr), SHARD_PROTOCOL).then(async s => {
          await lpStream(s).write(encodeRequest({ id: 1, cid: cids[0] })); return await lpStream(s).read()
        })
      ).rejects.toThrow()
    }
    const stalled = await peakRssFor(pid, 4000)

    // an honest fetcher meanwhile gets the whole shard
    await honestFetch('honest')
    const withHonest = await peakRssFor(pid, 1000)

    // the slow readers leave
    for (const s of streams) s.abort(new Error('leaving'))
    for (const p of inproc.splice(0, SLOW)) await p.stop()
    const after = await peakRssFor(pid, 3000)
    console.log(`RSS (MiB) of a provider with ${SLOW} slow readers (${MAX_INBOUND_STREAMS} streams × ${MAX_PIPELINE} requests each): ` +
      `${JSON.stringify({ idle: round(idle), slowReaders: round(stalled), plusHonestFetch: round(withHonest), afterTheyLeft: round(after) })}; ` +
      `slow/idle ${(stalled.total / idle.total).toFixed(2)}, after/idle ${(after.total / idle.total).toFixed(2)}`)
    expect(stalled.total).toBeLessThan(2 * idle.total)
    expect(withHonest.total).toBeLessThan(2 * idle.total)
    expect(after.total).toBeLessThan(2 * idle.total)
  }, 120_000)
})
