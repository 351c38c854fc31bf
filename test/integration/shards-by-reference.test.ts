import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHash, randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdir, open, readdir, rm, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { lpStream } from '@libp2p/utils'
import { Peer } from '../../node/peer.js'
import { getShardService, type ShardService } from '../../node/shards/index.js'
import { MAX_BLOCK_BYTES, MAX_RESPONSE_BYTES, SHARD_PROTOCOL, Status, decodeResponse, encodeRequest, parseShardCid } from '../../protocols/shards/index.js'
import { tempDir } from '../helpers/procs.js'
import { startShardPeer } from '../helpers/shard-peer.js'

// Files added by reference (addFile byReference): in-process peers on
// 127.0.0.1 (real libp2p, real LevelDB in temp dirs). The solver keeps only
// {path, offset, size} per block; another peer fetches the file intact; a
// changed or deleted file is never served wrong; GC / rm drop the refs and
// leave the file.

let dir: { path: string, cleanup: () => Promise<void> }
const peers: Peer[] = []
let solver: Peer, backup: Peer, fetcher: Peer

async function start (name: string, bootstrap: string[]): Promise<Peer> {
  const p = await startShardPeer(join(dir.path, name), bootstrap)
  peers.push(p)
  return p
}
const svc = (p: Peer): ShardService => getShardService(p)
const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex')
// a 1.2 MB checkpoint-like size would be 2 blocks; use 3 blocks, not a multiple of 1 MiB
const SIZE = 2 * MAX_BLOCK_BYTES + 200_001

async function file (name: string, bytes: Uint8Array): Promise<string> {
  const path = join(dir.path, 'run', name)
  await writeFile(path, bytes)
  return path
}

async function dirBytes (path: string): Promise<number> {
  let n = 0
  for (const e of await readdir(path, { withFileTypes: true })) {
    n += e.isDirectory() ? await dirBytes(join(path, e.name)) : (await stat(join(path, e.name))).size
  }
  return n
}

async function blockKeys (s: ShardService): Promise<string[]> {
  const out: string[] = []
  for await (const k of s.store.blockKeys()) out.push(k)
  return out
}

/** One raw request to a provider: what does it answer for this block? */
async function ask (from: Peer, to: Peer, cid: import('multiformats/cid').CID): Promise<{ status: number, payload: Uint8Array }> {
  const stream = await from.host.dialProtocol(to.host.peerId, SHARD_PROTOCOL)
  const lp = lpStream(stream, { maxDataLength: MAX_RESPONSE_BYTES })
  await lp.write(encodeRequest({ id: 7, cid }))
  const resp = decodeResponse((await lp.read({ signal: AbortSignal.timeout(5000) })).subarray())
  await stream.close().catch(() => {})
  return { status: resp.status, payload: resp.payload }
}

beforeAll(async () => {
  dir = await tempDir('proofswarm-shards-ref-')
  const boot = await start('boot', [])
  const addr = boot.host.getMultiaddrs()[0].toString()
  ;[solver, backup, fetcher] = await Promise.all([start('solver', [addr]), start('backup', [addr]), start('fetcher', [addr])])
  await mkdir(join(dir.path, 'run'))
})

afterAll(async () => {
  await Promise.all(peers.map(async p => await p.stop()))
  await dir?.cleanup()
})

describe('shards added by reference', () => {
  it('another peer fetches the file intact (DHT); the solver stores no copy of its blocks', async () => {
    const data = randomBytes(SIZE)
    const path = await file('state-1.bin', data)
    const shardsDir = join(dir.path, 'solver', 'shards')
    const before = await dirBytes(shardsDir)
    const added = await svc(solver).addFile(path, { name: 'ckpt-1-state.bin', kind: 'checkpoint' }, { byReference: true, reason: 'task-1' })
    expect(added.blocks).toBe(3)
    expect(added.byReference).toBe(true)
    // only the manifest is a stored block; LevelDB grew by far less than the file
    expect(await blockKeys(svc(solver))).toEqual([added.cid])
    expect(await dirBytes(shardsDir) - before).toBeLessThan(64 * 1024)
    const rec = (await svc(solver).list()).find(r => r.cid === added.cid)!
    expect(rec.byReference).toEqual({ path })
    expect(rec.complete).toBe(true)
    expect(await svc(solver).has(added.cid)).toBe(true)
    // local reads (export) come from the file
    expect(sha(await svc(solver).read(added.cid))).toBe(sha(data))
    await svc(solver).provide(added.cid)
    const r = await svc(fetcher).fetch(added.cid, { findTimeoutMs: 10_000, provide: false })
    expect(r.fetchedBlocks).toBe(3)
    expect(r.providers.map(p => p.peerId)).toEqual([solver.peerId])
    expect(sha(await svc(fetcher).read(added.cid))).toBe(sha(data))
    const out = join(dir.path, 'out-1.bin')
    const w = await svc(fetcher).fetchToFile(added.cid, out)
    expect(w.sha256).toBe(sha(data))
  })

  it('default addFile still copies, with the same root CID; the record has no byReference', async () => {
    const data = randomBytes(SIZE)
    const path = await file('state-2.bin', data)
    const byRef = await svc(solver).addFile(path, { name: 'same', kind: 'checkpoint' }, { byReference: true, provide: false })
    const copy = await svc(backup).addFile(path, { name: 'same', kind: 'checkpoint' }, { provide: false })
    expect(copy.cid).toBe(byRef.cid)
    expect(copy.byReference).toBeUndefined()
    const m = (await svc(backup).store.manifest(copy.cid))!
    for (const b of m.blocks) expect(await svc(backup).store.blocks.has(b.cid.toString())).toBe(true)
    expect((await svc(backup).list()).find(r => r.cid === copy.cid)!.byReference).toBeUndefined()
    // adding it again by reference where it is already copied keeps the copies
    const again = await svc(backup).addFile(path, { name: 'same', kind: 'checkpoint' }, { byReference: true, provide: false })
    expect(again.byReference).toBeUndefined()
    expect((await svc(backup).list()).find(r => r.cid === copy.cid)!.byReference).toBeUndefined()
    // the copy does not depend on the file
    await rm(path)
    expect(await svc(backup).has(copy.cid)).toBe(true)
    expect(await svc(solver).has(byRef.cid)).toBe(false)
  })

  it('a changed byte: that block is not served (NOT_FOUND, never wrong bytes); the fetch fails clearly, then completes from another provider', async () => {
    const data = randomBytes(SIZE)
    const path = await file('state-3.bin', data)
    const a = await svc(solver).addFile(path, { name: 'ckpt-3', kind: 'checkpoint' }, { byReference: true, provide: false })
    await svc(backup).addBytes(data, { name: 'ckpt-3', kind: 'checkpoint' }, { provide: false })
    const m = (await svc(solver).store.manifest(a.cid))!
    const fh = await open(path, 'r+')
    await fh.write(Buffer.from([data[MAX_BLOCK_BYTES + 5] ^ 0x01]), 0, 1, MAX_BLOCK_BYTES + 5)
    await fh.close()
    // on the wire: block 1 is NOT_FOUND, blocks 0 and 2 still correct
    expect((await ask(fetcher, solver, m.blocks[1].cid)).status).toBe(Status.NOT_FOUND)
    const ok = await ask(fetcher, solver, m.blocks[0].cid)
    expect(ok.status).toBe(Status.OK)
    expect(sha(ok.payload)).toBe(sha(data.subarray(0, MAX_BLOCK_BYTES)))
    expect(await svc(solver).has(a.cid)).toBe(false)
    await expect(svc(solver).read(a.cid)).rejects.toThrow(/incomplete here/)
    // only the solver: a clear failure naming the block it lacks; it is not treated as malicious
    const err = await svc(fetcher).fetch(a.cid, { providers: [solver.peerId], findTimeoutMs: 1000, provide: false }).catch(e => e as Error)
    expect((err as Error).name).toBe('NoProviderError')
    expect((err as Error).message).toContain(`does not have block ${m.blocks[1].cid.toString()}`)
    expect(svc(fetcher).isBanned(solver.peerId)).toBe(false)
    expect(await svc(fetcher).store.has(m.blocks[1].cid)).toBe(false)
    // with the backup as well, the fetch resumes and completes intact
    const r = await svc(fetcher).fetch(a.cid, { providers: [solver.peerId, backup.peerId], maxProviders: 2, provide: false })
    expect(r.providers.every(p => p.corrupt === 0)).toBe(true)
    expect(sha(await svc(fetcher).read(a.cid))).toBe(sha(data))
  })

  it('a deleted file: nothing of it is served, reads fail clearly, the peer keeps running', async () => {
    const data = randomBytes(SIZE)
    const path = await file('state-4.bin', data)
    const a = await svc(solver).addFile(path, { name: 'ckpt-4', kind: 'checkpoint' }, { byReference: true, provide: false })
    const m = (await svc(solver).store.manifest(a.cid))!
    await rm(path)
    for (const b of m.blocks) expect((await ask(fetcher, solver, b.cid)).status).toBe(Status.NOT_FOUND)
    expect(await svc(solver).has(a.cid)).toBe(false)
    await expect(svc(solver).fetchBytes(a.cid, { providers: [backup.peerId], findTimeoutMs: 500, provide: false })).rejects.toThrow(/no usable provider/)
    const err = await svc(fetcher).fetch(a.cid, { providers: [solver.peerId], findTimeoutMs: 1000, provide: false }).catch(e => e as Error)
    expect((err as Error).message).toMatch(/no usable provider found within 1 s.*does not have block/)
    // still serving other content
    expect((await ask(fetcher, solver, parseShardCid(a.cid))).status).toBe(Status.OK)
  })

  it('references survive a restart of the peer: still served from the file', async () => {
    const data = randomBytes(SIZE)
    const path = await file('state-7.bin', data)
    const a = await svc(solver).addFile(path, { name: 'ckpt-7', kind: 'checkpoint' }, { byReference: true, provide: false })
    const m = (await svc(solver).store.manifest(a.cid))!
    const i = peers.indexOf(solver)
    const bootAddr = peers[0].host.getMultiaddrs()[0].toString()
    await solver.stop()
    solver = await start('solver', [bootAddr])
    peers.splice(i, 1)
    expect(await svc(solver).has(a.cid)).toBe(true)
    expect((await svc(solver).list()).find(r => r.cid === a.cid)!.byReference).toEqual({ path })
    await fetcher.host.dial(solver.host.getMultiaddrs()[0])
    const got = await ask(fetcher, solver, m.blocks[2].cid)
    expect(got.status).toBe(Status.OK)
    expect(sha(got.payload)).toBe(sha(data.subarray(2 * MAX_BLOCK_BYTES)))
  })

  it('GC and rm drop the references, never the file', async () => {
    const s = svc(solver)
    const p1 = await file('state-5.bin', randomBytes(SIZE))
    const p2 = await file('state-6.bin', randomBytes(MAX_BLOCK_BYTES + 1))
    const gcd = await s.addFile(p1, { name: 'ckpt-5', kind: 'checkpoint' }, { byReference: true, retain: { untilBlock: 50 }, reason: 'task-5', provide: false })
    const removed = await s.addFile(p2, { name: 'ckpt-6', kind: 'checkpoint' }, { byReference: true, pin: true, provide: false })
    const refsOf = async (cid: string): Promise<number> => {
      let n = 0
      for (const b of (await s.store.manifest(cid))!.blocks) n += (await s.store.getRefs(b.cid)).length
      return n
    }
    expect(await refsOf(gcd.cid)).toBe(3)
    expect(await refsOf(removed.cid)).toBe(2)
    const m1 = (await s.store.manifest(gcd.cid))!
    // window still open: kept
    expect((await s.gc({ currentBlock: 49 })).removedRoots).not.toContain(gcd.cid)
    const r = await s.gc({ currentBlock: 50, now: Date.now() + 48 * 3600_000 })
    expect(r.removedRoots).toContain(gcd.cid)
    expect(r.removedRefs).toBeGreaterThanOrEqual(3)
    for (const b of m1.blocks) expect(await s.store.getRefs(b.cid)).toEqual([])
    expect(existsSync(p1)).toBe(true)
    // rm removes a pinned shard at once
    const m2 = (await s.store.manifest(removed.cid))!
    const rr = await s.remove(removed.cid)
    expect(rr.removedRoots).toEqual([removed.cid])
    expect(rr.removedRefs).toBe(2)
    for (const b of m2.blocks) expect(await s.store.has(b.cid)).toBe(false)
    expect(await s.store.getRoot(removed.cid)).toBeUndefined()
    expect(existsSync(p2)).toBe(true)
    await expect(s.remove(removed.cid)).rejects.toThrow(/not stored here/)
  })
})
