import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Peer } from '../../node/peer.js'
import { getShardService, type ShardService } from '../../node/shards/index.js'
import { MAX_BLOCK_BYTES, decodeManifest } from '../../protocols/shards/index.js'
import { tempDir } from '../helpers/procs.js'
import { ShardSwarm, sha256Hex as sha } from '../helpers/shard-peer.js'

// A provider that serves one bad block (a bit flipped on its way out) used
// to be banned for everything for an hour: a shard whose other blocks only it
// held became unfetchable. Now the ban is for that block: the fetch takes
// that block from another provider and every other block from it, and it
// stays usable for other shards.

let dir: { path: string, cleanup: () => Promise<void> }
let swarm: ShardSwarm | undefined
let holder: Peer, helper: Peer, fetcher: Peer
const corruptCids = new Set<string>()
const svc = (p: Peer): ShardService => getShardService(p)

beforeAll(async () => {
  dir = await tempDir('ps-per-block-ban-')
  swarm = await ShardSwarm.start(dir.path)
  holder = await swarm.join('holder', { corruptCids })
  helper = await swarm.join('helper')
  fetcher = await swarm.join('fetcher')
})

afterAll(async () => {
  await swarm?.stop()
  await dir?.cleanup()
})

describe('a provider that serves one bad block', () => {
  it('is banned for that block only: the rest of the shard, held by it alone, is still fetched from it', async () => {
    const data = randomBytes(6 * MAX_BLOCK_BYTES)
    const a = await svc(holder).addBytes(data, { name: 'd' }, { provide: false })
    const manifestBytes = (await svc(holder).store.get(a.cid))!
    const m = decodeManifest(manifestBytes)
    const victim = m.blocks[2].cid
    corruptCids.add(victim.toString())
    // the helper holds only that block (and the manifest): the other five exist only at the holder
    await svc(helper).store.put(a.cid, manifestBytes)
    await svc(helper).store.put(victim, data.subarray(2 * MAX_BLOCK_BYTES, 3 * MAX_BLOCK_BYTES))

    const r = await svc(fetcher).fetch(a.cid, { providers: [holder.peerId, helper.peerId], maxProviders: 2, findTimeoutMs: 10_000, provide: false })
    expect(sha(await svc(fetcher).read(a.cid))).toBe(sha(data))
    const h = r.providers.find(p => p.peerId === holder.peerId)!
    expect(h.corrupt).toBe(1)
    expect(h.blocks).toBe(1 + 5) // the manifest, and every data block but the bad one
    expect(r.providers.find(p => p.peerId === helper.peerId)!.blocks).toBe(1)
    expect(svc(fetcher).isBlockBanned(holder.peerId, victim.toString())).toBe(true)
    expect(svc(fetcher).isBanned(holder.peerId)).toBe(false)

    // and it still serves other shards to this fetcher
    const other = randomBytes(2 * MAX_BLOCK_BYTES)
    const b = await svc(holder).addBytes(other, { name: 'other' }, { provide: false })
    const r2 = await svc(fetcher).fetch(b.cid, { providers: [holder.peerId], findTimeoutMs: 5000, provide: false })
    expect(r2.fetchedBlocks).toBe(2)
    expect(sha(await svc(fetcher).read(b.cid))).toBe(sha(other))
  }, 60_000)
})
