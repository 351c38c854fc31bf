import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Peer } from '../../node/peer.js'
import { getShardService, type ShardService } from '../../node/shards/index.js'
import { MAX_BLOCK_BYTES, decodeManifest } from '../../protocols/shards/index.js'
import { tempDir } from '../helpers/procs.js'
import { ShardSwarm, sha256Hex as sha } from '../helpers/shard-peer.js'

// One byte flipped in a stored block (a bad disk, or someone editing the
// database): the holding peer used to return and serve the wrong bytes, keep
// the shard listed as complete, and its fetchers banned it for everything.
// Now every block is checked against its CID when read: a bad one is dropped,
// never returned or served, and fetched again from whoever has it.

let dir: { path: string, cleanup: () => Promise<void> }
let swarm: ShardSwarm | undefined
let holder: Peer, other: Peer
const svc = (p: Peer): ShardService => getShardService(p)

beforeAll(async () => {
  dir = await tempDir('ps-corrupt-block-')
  swarm = await ShardSwarm.start(dir.path)
  holder = await swarm.join('holder')
  other = await swarm.join('other')
})

afterAll(async () => {
  await swarm?.stop()
  await dir?.cleanup()
})

describe('a corrupted stored block', () => {
  it('is never returned: the holder drops it, the shard reads as incomplete, and a fetch repairs it from another provider', async () => {
    const data = randomBytes(3 * MAX_BLOCK_BYTES)
    const a = await svc(holder).addBytes(data, { name: 'd' }, { provide: false })
    await svc(other).addBytes(data, { name: 'd' }, { provide: false })
    const store = svc(holder).store
    const manifest = decodeManifest((await store.get(a.cid))!)
    const victim = manifest.blocks[1].cid
    const good = (await store.get(victim))!
    // flip one byte of the stored block, as a bad disk would
    const bad = good.slice(); bad[12345] ^= 0xff
    await store.put(victim, bad)
    expect(await store.get(victim)).toBeUndefined()
    expect(store.corruptDropped).toBe(1)
    expect(await store.has(victim)).toBe(false)
    expect(await svc(holder).has(a.cid)).toBe(false)
    // reading the shard never yields the wrong bytes
    await expect(svc(holder).read(a.cid)).rejects.toThrow()
    // fetched again from the other provider: whole and right
    const r = await svc(holder).fetch(a.cid, { providers: [other.peerId], findTimeoutMs: 10_000 })
    expect(r.fetchedBlocks).toBe(1)
    expect(sha(await svc(holder).read(a.cid))).toBe(sha(data))
  }, 60_000)
})
