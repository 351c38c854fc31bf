import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { spawnSync } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { lpStream } from '@libp2p/utils'
import type { CID } from 'multiformats/cid'
import { Peer } from '../../node/peer.js'
import { getShardService, type ShardService } from '../../node/shards/index.js'
import type { ShardFault } from '../../node/shards/server.js'
import { MAX_BLOCK_BYTES, MAX_RESPONSE_BYTES, SHARD_PROTOCOL, Status, decodeResponse, encodeRequest, parseShardCid } from '../../protocols/shards/index.js'
import { tempDir } from '../helpers/procs.js'
import { MAX_BAD_BLOCKS } from '../../node/shards/bans.js'
import { startShardPeer } from '../helpers/shard-peer.js'

// fetchToFile writing blocks straight into the output file (no copy in the
// store, the shard then held by reference to the file): in-process peers on
// 127.0.0.1 (real libp2p, real LevelDB in temp dirs).

let dir: { path: string, cleanup: () => Promise<void> }
const peers: Peer[] = []
let provider: Peer, corrupt: Peer, slow: Peer, fetcher: Peer, third: Peer

async function start (name: string, bootstrap: string[], fault?: Partial<ShardFault>): Promise<Peer> {
  const p = await startShardPeer(join(dir.path, name), bootstrap, fault)
  peers.push(p)
  return p
}
const svc = (p: Peer): ShardService => getShardService(p)
const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex')
// 3 blocks, the last one partial (not a multiple of 1 MiB)
const SIZE = 2 * MAX_BLOCK_BYTES + 200_001
const out = (name: string): string => join(dir.path, 'out', name)

async function ask (from: Peer, to: Peer, cid: CID): Promise<number> {
  const stream = await from.host.dialProtocol(to.host.peerId, SHARD_PROTOCOL)
  const lp = lpStream(stream, { maxDataLength: MAX_RESPONSE_BYTES })
  await lp.write(encodeRequest({ id: 1, cid }))
  const resp = decodeResponse((await lp.read({ signal: AbortSignal.timeout(5000) })).subarray())
  await stream.close().catch(() => {})
  return resp.status
}

/** The store holds none of the root's data blocks as copies. */
async function storedCopies (s: ShardService, root: string): Promise<number> {
  let n = 0
  for (const b of (await s.store.manifest(root))!.blocks) if (await s.store.blocks.has(b.cid.toString())) n++
  return n
}

async function partFiles (): Promise<string[]> {
  return (await readdir(join(dir.path, 'out'))).filter(n => n.includes('.part-'))
}

beforeAll(async () => {
  dir = await tempDir('proofswarm-shards-f2f-')
  const boot = await start('boot', [])
  const addr = boot.host.getMultiaddrs()[0].toString()
  ;[provider, corrupt, slow, fetcher, third] = await Promise.all([
    start('provider', [addr]), start('corrupt', [addr], { corrupt: true }), start('slow', [addr], { delayMs: 150 }),
    start('fetcher', [addr]), start('third', [addr])
  ])
  await mkdir(join(dir.path, 'out'))
})

afterAll(async () => {
  await Promise.all(peers.map(async p => await p.stop()))
  await dir?.cleanup()
})

describe('fetchToFile straight into the file', () => {
  it('exact bytes from another peer (DHT); no copy in the store; held by reference; a third peer fetches it from the fetcher', async () => {
    const data = randomBytes(SIZE)
    const a = await svc(provider).addBytes(data, { name: 'ckpt-1', kind: 'checkpoint' }, { provide: false })
    await svc(provider).provide(a.cid)
    const path = out('state-1.bin')
    const progress: number[] = []
    const r = await svc(fetcher).fetchToFile(a.cid, path, { findTimeoutMs: 10_000, provide: false, onProgress: p => progress.push(p.haveBlocks) })
    expect(r.fetchedBlocks).toBe(3)
    expect(r.alreadyHad).toBe(0)
    expect(r.out).toBe(path)
    expect(r.sha256).toBe(sha(data))
    expect(progress.at(-1)).toBe(3)
    expect(sha(await readFile(path))).toBe(sha(data))
    expect(await partFiles()).toEqual([])
    // no copy of the data blocks: references into the file instead
    expect(await storedCopies(svc(fetcher), a.cid)).toBe(0)
    const m = (await svc(fetcher).store.manifest(a.cid))!
    expect((await svc(fetcher).store.getRefs(m.blocks[2].cid)).map(x => [x.path, x.offset, x.size])).toEqual([[path, 2 * MAX_BLOCK_BYTES, 200_001]])
    const rec = (await svc(fetcher).list()).find(x => x.cid === a.cid)!
    expect(rec.complete).toBe(true)
    expect(rec.byReference).toEqual({ path })
    expect(await svc(fetcher).has(a.cid)).toBe(true)
    // the fetcher serves it: a third peer gets it from the fetcher only
    const t = await svc(third).fetch(a.cid, { providers: [fetcher.peerId], findTimeoutMs: 5000, provide: false })
    expect(t.fetchedBlocks).toBe(3)
    expect(sha(await svc(third).read(a.cid))).toBe(sha(data))
    // complete locally now: a second fetchToFile writes from local blocks (no network)
    const again = await svc(fetcher).fetchToFile(a.cid, out('state-1-copy.bin'), { providers: [corrupt.peerId], provide: false })
    expect(again.alreadyHad).toBe(3)
    expect(again.fetchedBlocks).toBe(0)
    expect(again.sha256).toBe(sha(data))
    expect(svc(fetcher).isBanned(corrupt.peerId)).toBe(false) // never asked
  })

  it('a corrupted block from a bad provider is refused (provider banned) and fetched from another; nothing wrong in the file', async () => {
    const data = randomBytes(4 * MAX_BLOCK_BYTES + 12_345)
    const a = await svc(provider).addBytes(data, { name: 'ckpt-2', kind: 'checkpoint' }, { provide: false })
    await svc(corrupt).addBytes(data, { name: 'ckpt-2', kind: 'checkpoint' }, { provide: false })
    // the manifest is already here, so the corrupt provider is asked for data blocks
    await svc(fetcher).store.put(a.cid, (await svc(provider).store.get(a.cid))!)
    const path = out('state-2.bin')
    const r = await svc(fetcher).fetchToFile(a.cid, path, { providers: [corrupt.peerId, provider.peerId], maxProviders: 2, provide: false })
    const bad = r.providers.find(p => p.peerId === corrupt.peerId)!
    // banned per block, then for everything at its MAX_BAD_BLOCKS-th bad block
    // (how many it gets to send before the honest provider has the rest depends on timing)
    expect(bad.corrupt).toBeGreaterThanOrEqual(1)
    expect(bad.corrupt).toBeLessThanOrEqual(MAX_BAD_BLOCKS)
    expect(bad.blocks).toBe(0)
    expect(svc(fetcher).isBanned(corrupt.peerId)).toBe(bad.corrupt === MAX_BAD_BLOCKS)
    expect(r.providers.find(p => p.peerId === provider.peerId)!.blocks).toBe(5)
    expect(sha(await readFile(path))).toBe(sha(data))
    expect(r.sha256).toBe(sha(data))
    expect(await storedCopies(svc(fetcher), a.cid)).toBe(0)
  })

  it('contentHash: false (a verifier whose engine checks the content) gives the exact file without a content sha256', async () => {
    const data = randomBytes(2 * MAX_BLOCK_BYTES + 777)
    const a = await svc(provider).addBytes(data, { name: 'ckpt-nohash', kind: 'checkpoint' }, { provide: false })
    const path = out('state-nohash.bin')
    const r = await svc(fetcher).fetchToFile(a.cid, path, { providers: [provider.peerId], provide: false, contentHash: false })
    expect(r.fetchedBlocks).toBe(3) // the data blocks
    expect(r.sha256).toBeUndefined()
    expect(sha(await readFile(path))).toBe(sha(data))
    expect(await partFiles()).toEqual([])
  })

  it('an aborted fetch keeps its verified blocks in the part file; the retry fetches only the rest and gives the exact file', async () => {
    const data = randomBytes(5 * MAX_BLOCK_BYTES + 999)
    const a = await svc(slow).addBytes(data, { name: 'ckpt-3', kind: 'checkpoint' }, { provide: false })
    await svc(provider).addBytes(data, { name: 'ckpt-3', kind: 'checkpoint' }, { provide: false })
    const path = out('state-3.bin')
    const abort = new AbortController()
    const err = await svc(fetcher).fetchToFile(a.cid, path, {
      providers: [slow.peerId], pipeline: 1, provide: false, signal: abort.signal,
      onProgress: p => { if (p.haveBlocks >= 2) abort.abort() }
    }).catch(e => e as Error)
    expect(err).toBeInstanceOf(Error)
    expect(existsSync(path)).toBe(false)
    expect(await partFiles()).toEqual([`state-3.bin.part-${process.pid}`])
    expect(await svc(fetcher).has(a.cid)).toBe(false)
    const r = await svc(fetcher).fetchToFile(a.cid, path, { providers: [provider.peerId], provide: false })
    expect(r.alreadyHad).toBeGreaterThanOrEqual(2)
    expect(r.alreadyHad).toBeLessThan(6)
    expect(r.fetchedBlocks).toBe(6 - r.alreadyHad)
    expect(sha(await readFile(path))).toBe(sha(data))
    expect(r.sha256).toBe(sha(data))
    expect(await partFiles()).toEqual([])
  })

  it('a failed fetch with nothing verified leaves no part file and no output; the error names the missing blocks', async () => {
    const data = randomBytes(MAX_BLOCK_BYTES + 10)
    const a = await svc(provider).addBytes(data, { name: 'ckpt-7', kind: 'checkpoint' }, { provide: false })
    await svc(fetcher).store.put(a.cid, (await svc(provider).store.get(a.cid))!) // manifest here, blocks nowhere else
    const path = out('state-7.bin')
    const err = await svc(fetcher).fetchToFile(a.cid, path, { providers: [third.peerId], findTimeoutMs: 500, provide: false }).catch(e => e as Error)
    expect((err as Error).name).toBe('NoProviderError')
    expect((err as Error).message).toMatch(/2 of 2 block\(s\) missing/)
    expect(existsSync(path)).toBe(false)
    expect(await partFiles()).toEqual([])
    expect(await svc(fetcher).has(a.cid)).toBe(false)
  })

  it('a part file left by a killed process is resumed (blocks checked: a bad one is fetched again); a live process\'s part file is left alone', async () => {
    const data = randomBytes(3 * MAX_BLOCK_BYTES + 4321)
    const a = await svc(provider).addBytes(data, { name: 'ckpt-4', kind: 'checkpoint' }, { provide: false })
    const path = out('state-4.bin')
    // a process that has exited: its pid is free
    const dead = spawnSync(process.execPath, ['-e', '']).pid!
    const left = Buffer.from(data.subarray(0, 3 * MAX_BLOCK_BYTES)) // blocks 0-2 written, block 3 never
    left[MAX_BLOCK_BYTES + 10] ^= 0xff // block 1 torn / wrong
    await writeFile(`${path}.part-${dead}`, left)
    const live = `${path}.part-${process.ppid}`
    await writeFile(live, 'another process is writing this')
    const r = await svc(fetcher).fetchToFile(a.cid, path, { providers: [provider.peerId], provide: false })
    expect(r.alreadyHad).toBe(2)
    expect(r.fetchedBlocks).toBe(2)
    expect(sha(await readFile(path))).toBe(sha(data))
    expect(r.sha256).toBe(sha(data))
    expect(existsSync(`${path}.part-${dead}`)).toBe(false)
    expect(await readFile(live, 'utf8')).toBe('another process is writing this')
    await rm(live)
  })

  it('the fetched file deleted: the peer stops serving it (NOT_FOUND, no crash); fetchToFile again fetches it anew', async () => {
    const data = randomBytes(MAX_BLOCK_BYTES + 200_000) // a 1.2 MB checkpoint: 2 blocks
    const a = await svc(provider).addBytes(data, { name: 'ckpt-5', kind: 'checkpoint' }, { provide: false })
    const path = out('state-5.bin')
    await svc(fetcher).fetchToFile(a.cid, path, { providers: [provider.peerId], provide: false })
    const m = (await svc(fetcher).store.manifest(a.cid))!
    expect(await ask(third, fetcher, m.blocks[0].cid)).toBe(Status.OK)
    await rm(path)
    for (const b of m.blocks) expect(await ask(third, fetcher, b.cid)).toBe(Status.NOT_FOUND)
    expect(await svc(fetcher).has(a.cid)).toBe(false)
    const err = await svc(third).fetch(a.cid, { providers: [fetcher.peerId], findTimeoutMs: 500, provide: false }).catch(e => e as Error)
    expect((err as Error).name).toBe('NoProviderError')
    expect(svc(third).isBanned(fetcher.peerId)).toBe(false)
    expect(await ask(third, fetcher, parseShardCid(a.cid))).toBe(Status.OK) // still running and serving
    const r = await svc(fetcher).fetchToFile(a.cid, path, { providers: [provider.peerId], provide: false })
    expect(r.fetchedBlocks).toBe(2)
    expect(sha(await readFile(path))).toBe(sha(data))
    expect(await svc(fetcher).has(a.cid)).toBe(true)
  })

  it('the same root to two paths at once: both files exact, fetched once', async () => {
    const data = randomBytes(2 * MAX_BLOCK_BYTES + 7)
    const a = await svc(provider).addBytes(data, { name: 'ckpt-6', kind: 'checkpoint' }, { provide: false })
    const opts = { providers: [provider.peerId], provide: false }
    const [x, y] = await Promise.all([svc(fetcher).fetchToFile(a.cid, out('six-a.bin'), opts), svc(fetcher).fetchToFile(a.cid, out('six-b.bin'), opts)])
    expect(x.fetchedBlocks + y.fetchedBlocks).toBe(3)
    for (const p of ['six-a.bin', 'six-b.bin']) expect(sha(await readFile(out(p)))).toBe(sha(data))
    expect(await storedCopies(svc(fetcher), a.cid)).toBe(0)
  })
})
