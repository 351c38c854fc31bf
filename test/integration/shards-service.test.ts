import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHash, randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { lpStream } from '@libp2p/utils'
import { Peer } from '../../node/peer.js'
import { getShardService, type ShardService } from '../../node/shards/index.js'
import { MAX_BLOCK_BYTES, MAX_REQUEST_BYTES, SHARD_PROTOCOL, Status, cidOf, decodeResponse, errorText } from '../../protocols/shards/index.js'
import { tempDir } from '../helpers/procs.js'
import { MAX_BAD_BLOCKS } from '../../node/shards/bans.js'
import { startShardPeer } from '../helpers/shard-peer.js'

// In-process peers on 127.0.0.1 (real libp2p, real LevelDB in a temp dir):
// the service API the role actors use, and its failure modes.

let dir: { path: string, cleanup: () => Promise<void> }
const peers: Peer[] = []
let boot: Peer, honest: Peer, corrupt: Peer, fetcher: Peer, stalled: Peer

async function start (name: string, bootstrap: string[], fault?: string): Promise<Peer> {
  const p = await startShardPeer(join(dir.path, name), bootstrap, { corrupt: fault === 'corrupt', delayMs: fault === 'stall' ? 20_000 : 0 })
  peers.push(p)
  return p
}
const svc = (p: Peer): ShardService => getShardService(p)
const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex')

beforeAll(async () => {
  dir = await tempDir('proofswarm-shards-')
  boot = await start('boot', [])
  const addr = boot.host.getMultiaddrs()[0].toString()
  ;[honest, corrupt, fetcher, stalled] = await Promise.all([start('honest', [addr]), start('corrupt', [addr], 'corrupt'), start('fetcher', [addr]), start('stalled', [addr], 'stall')])
})

afterAll(async () => {
  await Promise.all(peers.map(async p => await p.stop()))
  await dir?.cleanup()
})

describe('shard service (in-process peers)', () => {
  it('adds bytes, finds the provider in the DHT, fetches and verifies, then provides it too', async () => {
    const data = randomBytes(3 * MAX_BLOCK_BYTES + 777)
    const added = await svc(honest).addBytes(data, { name: 'ckpt', kind: 'checkpoint' })
    expect(added.blocks).toBe(4)
    await svc(honest).provide(added.cid)
    const progress: number[] = []
    const r = await svc(fetcher).fetch(added.cid, { onProgress: p => progress.push(p.haveBlocks), findTimeoutMs: 10_000 })
    expect(r.fetchedBlocks).toBe(4)
    expect(r.providers.map(p => p.peerId)).toEqual([honest.peerId])
    expect(progress.at(-1)).toBe(4)
    expect(sha(await svc(fetcher).read(added.cid))).toBe(sha(data))
    expect(await svc(fetcher).has(added.cid)).toBe(true)
    // a second fetch finds everything local
    const again = await svc(fetcher).fetch(added.cid)
    expect(again.alreadyHad).toBe(4)
    expect(again.fetchedBlocks).toBe(0)
  })

  it('a provider serving corrupted blocks is banned per block, then for everything after MAX_BAD_BLOCKS; the honest one completes the fetch', async () => {
    const data = randomBytes(6 * MAX_BLOCK_BYTES)
    const a = await svc(honest).addBytes(data, { name: 'd' }, { provide: false })
    const b = await svc(corrupt).addBytes(data, { name: 'd' }, { provide: false })
    expect(b.cid).toBe(a.cid)
    const r = await svc(fetcher).fetch(a.cid, { providers: [corrupt.peerId, honest.peerId], maxProviders: 2, provide: false })
    expect(sha(await svc(fetcher).read(a.cid))).toBe(sha(data))
    // explicit providers are tried in order: the corrupt one gets the manifest request first
    const bad = r.providers.find(p => p.peerId === corrupt.peerId)!
    // each bad block bans it for that block; the third bans it for everything
    // (how many it gets to send before the honest provider has the rest depends on timing)
    expect(bad.corrupt).toBeGreaterThanOrEqual(1)
    expect(bad.corrupt).toBeLessThanOrEqual(MAX_BAD_BLOCKS)
    // dropped with that error once banned for everything; else the honest provider finished first
    if (bad.corrupt === MAX_BAD_BLOCKS) expect(bad.error).toMatch(/not matching/)
    else expect(bad.error).toBeUndefined()
    expect(bad.blocks).toBe(0)
    expect(svc(fetcher).isBanned(corrupt.peerId)).toBe(bad.corrupt === MAX_BAD_BLOCKS)
    const fetched = r.providers.find(p => p.peerId === honest.peerId)!
    expect(fetched.corrupt).toBe(0)
  })

  it('only a banned (corrupt) provider: the fetch fails with a clear error naming it, no bad block is kept', async () => {
    const data = randomBytes(2 * MAX_BLOCK_BYTES)
    const b = await svc(corrupt).addBytes(data, { name: 'only-bad' }, { provide: false })
    // a provider that keeps sending bad blocks ends up banned for everything (each fetch here gets a bad manifest)
    // (a bad block bans per block: each round asks for other content, so each bad manifest is another strike,
    // whatever the previous test left)
    for (let i = 0; i < MAX_BAD_BLOCKS && !svc(fetcher).isBanned(corrupt.peerId); i++) {
      const other = await svc(corrupt).addBytes(randomBytes(2 * MAX_BLOCK_BYTES), { name: `only-bad-${i}` }, { provide: false })
      await svc(fetcher).fetch(other.cid, { providers: [corrupt.peerId], findTimeoutMs: 500, provide: false }).catch(() => {})
    }
    expect(svc(fetcher).isBanned(corrupt.peerId)).toBe(true)
    const err = await svc(fetcher).fetch(b.cid, { providers: [corrupt.peerId], findTimeoutMs: 1000, provide: false }).catch(e => e as Error)
    expect(err).toBeInstanceOf(Error)
    expect((err as Error).message).toMatch(/no usable provider found within 1 s/)
    expect((err as Error).message).toMatch(new RegExp(`banned for serving bad blocks: .*${corrupt.peerId.slice(-8)}`))
    expect(await svc(fetcher).store.has(b.cid)).toBe(false)
    expect(svc(fetcher).isBanned(corrupt.peerId)).toBe(true)
    const tags = (await fetcher.host.peerStore.get(corrupt.host.peerId)).tags
    expect(tags.has('proofswarm-shard-misbehaved')).toBe(true)
  })

  it('no provider at all: a clear error after the bounded wait', async () => {
    const cid = (await import('../../protocols/shards/index.js')).buildManifest([{ cid: cidOf(randomBytes(10)), size: 10 }], {}).cid
    const t0 = Date.now()
    const err = await svc(fetcher).fetch(cid, { findTimeoutMs: 1500 }).catch(e => e as Error)
    expect((err as Error).name).toBe('NoProviderError')
    expect((err as Error).message).toMatch(/no usable provider found within 1.5 s/)
    expect(Date.now() - t0).toBeLessThan(10_000)
  })

  it('resumes: blocks already stored are not fetched again', async () => {
    const data = randomBytes(4 * MAX_BLOCK_BYTES)
    const a = await svc(honest).addBytes(data, {}, { provide: false })
    // simulate an interrupted fetch: the manifest and two blocks are already here
    const m = (await svc(honest).store.manifest(a.cid))!
    await svc(fetcher).store.put(a.cid, (await svc(honest).store.get(a.cid))!)
    for (const b of m.blocks.slice(0, 2)) await svc(fetcher).store.put(b.cid, (await svc(honest).store.get(b.cid))!)
    const r = await svc(fetcher).fetch(a.cid, { providers: [honest.peerId], provide: false })
    expect(r.alreadyHad).toBe(2)
    expect(r.fetchedBlocks).toBe(2)
    expect(sha(await svc(fetcher).read(a.cid))).toBe(sha(data))
  })

  it('consecutive fetches from one provider share one stream; after the provider hangs up, the next fetch opens a new one', async () => {
    const contents = [0, 1, 2, 3].map(() => randomBytes(MAX_BLOCK_BYTES + 1000))
    const cids = []
    for (const c of contents) cids.push((await svc(honest).addBytes(c, {}, { provide: false })).cid)
    const streams0 = svc(honest).server.stats.streams
    for (let i = 0; i < 3; i++) {
      const r = await svc(fetcher).fetch(cids[i], { providers: [honest.peerId], provide: false })
      expect(r.fetchedBlocks).toBe(2)
      expect(sha(await svc(fetcher).read(cids[i]))).toBe(sha(contents[i]))
    }
    // 3 manifests + 6 blocks: one stream at most (none if an earlier test left one idle)
    expect(svc(honest).server.stats.streams - streams0).toBeLessThanOrEqual(1)
    await honest.host.hangUp(fetcher.host.peerId)
    // the fetcher sees the connection (and the idle stream on it) closed
    for (let i = 0; i < 100 && fetcher.host.getConnections(honest.host.peerId).length > 0; i++) await new Promise(resolve => setTimeout(resolve, 20))
    const streams1 = svc(honest).server.stats.streams
    const r = await svc(fetcher).fetch(cids[3], { providers: [honest.peerId], provide: false, findTimeoutMs: 5000 })
    expect(r.fetchedBlocks).toBe(2)
    expect(r.providers.every(p => p.error == null)).toBe(true)
    expect(sha(await svc(fetcher).read(cids[3]))).toBe(sha(contents[3]))
    expect(svc(honest).server.stats.streams - streams1).toBe(1)
  })

  it('roots added or fetched with provide: false are marked unannounced (not re-announced after a restart) until added with provide', async () => {
    const a = await svc(honest).addBytes(randomBytes(5000), {}, { provide: false })
    expect((await svc(honest).store.getRoot(a.cid))?.unannounced).toBe(true)
    await svc(fetcher).fetch(a.cid, { providers: [honest.peerId], provide: false })
    expect((await svc(fetcher).store.getRoot(a.cid))?.unannounced).toBe(true)
    await svc(honest).addBytes(randomBytes(5000), {}, { provide: false }) // another root: no effect on a
    const again = await svc(honest).addBytes((await svc(honest).read(a.cid)), {}, {})
    expect(again.cid).toBe(a.cid)
    expect((await svc(honest).store.getRoot(a.cid))?.unannounced).toBeUndefined()
    // once announced, a later provide: false add does not hide it again
    await svc(honest).addBytes((await svc(honest).read(a.cid)), {}, { provide: false })
    expect((await svc(honest).store.getRoot(a.cid))?.unannounced).toBeUndefined()
  })

  it('end game: blocks stuck at a provider that stalls (without closing) are fetched again from another', async () => {
    const data = randomBytes(8 * MAX_BLOCK_BYTES)
    const a = await svc(honest).addBytes(data, { name: 'eg' }, { provide: false })
    await svc(stalled).addBytes(data, { name: 'eg' }, { provide: false })
    const t0 = Date.now()
    // the honest peer serves the manifest; then both get blocks and the stalled one never answers
    const r = await svc(fetcher).fetch(a.cid, { providers: [honest.peerId, stalled.peerId], maxProviders: 2, provide: false })
    expect(Date.now() - t0).toBeLessThan(10_000)
    expect(sha(await svc(fetcher).read(a.cid))).toBe(sha(data))
    expect(r.providers.find(p => p.peerId === honest.peerId)!.blocks).toBe(9) // manifest + 8
    expect(r.providers.find(p => p.peerId === stalled.peerId)!.blocks).toBe(0)
  })

  it('refuses an oversized request with an error frame', async () => {
    const stream = await fetcher.host.dialProtocol(honest.host.peerId, SHARD_PROTOCOL)
    const lp = lpStream(stream)
    await lp.write(new Uint8Array(MAX_REQUEST_BYTES + 100))
    const resp = decodeResponse((await lp.read({ signal: AbortSignal.timeout(5000) })).subarray())
    expect(resp.status).toBe(Status.ERROR)
    expect(errorText(resp.payload)).toMatch(/request over 256 bytes/)
    expect(svc(honest).server.stats.refused).toBeGreaterThanOrEqual(1)
  })

  it('GC keeps pinned and retained shards until the window closes, then removes them and their blocks', async () => {
    const s = svc(honest)
    const shared = randomBytes(MAX_BLOCK_BYTES)
    const ck = await s.addBytes(Buffer.concat([shared, randomBytes(1000)]), { kind: 'checkpoint' }, { retain: { untilBlock: 100 }, reason: 'task-1', provide: false })
    const pinned = await s.addBytes(Buffer.concat([shared, randomBytes(10)]), {}, { pin: true, provide: false })
    const timed = await s.addBytes(randomBytes(500), {}, { retain: { untilTime: Date.now() + 60_000 }, reason: 'x', provide: false })
    // before the window closes (or with an unknown chain height) nothing goes
    let r = await s.gc({ currentBlock: 99 })
    expect(r.removedRoots).not.toContain(ck.cid)
    r = await s.gc({})
    expect(r.removedRoots).not.toContain(ck.cid)
    // the 24 h default hold keeps earlier adds; move the clock past it and past the window
    r = await s.gc({ currentBlock: 100, now: Date.now() + 48 * 3600_000 })
    expect(r.removedRoots).toContain(ck.cid)
    expect(r.removedRoots).toContain(timed.cid)
    expect(r.removedRoots).not.toContain(pinned.cid)
    expect(await s.store.has(ck.cid)).toBe(false)
    const ckManifestGone = await s.store.manifest(ck.cid)
    expect(ckManifestGone).toBeUndefined()
    // the block shared with the pinned shard survives
    expect(await s.has(pinned.cid)).toBe(true)
    expect(await s.store.has(cidOf(shared))).toBe(true)
    expect((await s.list()).map(x => x.cid)).toEqual([pinned.cid])
    await s.unpin(pinned.cid)
    r = await s.gc({ now: Date.now() + 48 * 3600_000 })
    expect(r.removedRoots).toEqual([pinned.cid])
    expect(await s.store.has(cidOf(shared))).toBe(false)
  })
})
