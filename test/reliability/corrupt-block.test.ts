import { createHash, randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Peer } from '../../node/peer.js'
import { getShardService, type ShardService } from '../../node/shards/index.js'
import { MAX_BLOCK_BYTES, decodeManifest } from '../../protocols/shards/index.js'
import { tempDir } from '../helpers/procs.js'
import { startShardPeer } from '../helpers/shard-peer.js'

// One byte flipped in a stored block (a bad disk, or someone editing the
// database): the holding peer used to return and serve the wrong bytes, keep
// the shard listed as complete, and its fetchers banned it for everything.
// Now every block is checked against its CID when read: a bad one is dropped,
// never returned or served, and fetched again from whoever has it.

let dir: { path: string, cleanup: () => Promise<void> }
const peers: Peer[] = []
let holder: Peer, other: Peer
const svc = (p: Peer): ShardService => getShardService(p)
const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex')

beforeAll(async () => {
  dir = await tempDir('ps-corrupt-block-')
  const boot = await startShardPeer(join(dir.path, 'boot'), [])
  peers.push(boot)
  const addr = boot.host.getMultiaddrs()[0].toString()
  holder = await startShardPeer(join(dir.path, 'holder'), [addr]); peers.push(holder)
  other = await startShardPeer(join(dir.path, 'other'), [addr]); peers.push(other)
})

afterAll(async () => {
  await Promise.all(peers.map(async p => await p.stop()))
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
