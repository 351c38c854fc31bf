import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHash, randomBytes } from 'node:crypto'
import { readFile, readdir, writeFile } from 'node:fs/promises'
import { basename, join } from 'node:path'
import { buildManifest, cidOf } from '../../protocols/shards/index.js'
import { CliSwarm, type CliPeer } from '../helpers/cli-peers.js'
import { firstJson, runCli, runCliJson, sleep, startCli, stopProc, tempDir, waitFor, type Proc } from '../helpers/procs.js'

// Six peers (1 bootstrap + 5), each a separate OS process started through the
// CLI on 127.0.0.1. P0 provides a 50 MiB checkpoint, P1..P4 fetch it in
// parallel; then faults: a corrupting provider, a fetcher killed and resumed
// after a restart, a provider killed mid-transfer, GC after the window.

const MiB = 1024 * 1024
let dir: { path: string, cleanup: () => Promise<void> }
let swarm: CliSwarm | undefined
type P = CliPeer
const peers: P[] = []

async function restart (i: number, env: Record<string, string> = {}): Promise<void> {
  const p = peers[i]
  // a peer we SIGKILLed: just wait for it to be gone; otherwise stop it cleanly
  if (p.proc.child.signalCode != null || p.proc.child.killed) await p.proc.exited
  else expect(await stopProc(p.proc)).toBe(0)
  peers[i] = await swarm!.join(basename(p.dataDir), env)
  expect(peers[i].id).toBe(p.id)
}

const cli = async (args: string[], timeoutMs = 60_000): Promise<any> => await runCliJson(args, timeoutMs)

const withLog = (err: Error, p: Proc): Error => new Error(`${err.message}\nstderr:\n${p.stderr().slice(-2000)}`)
const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex')
const haveBlocks = (stderr: string): number => Math.max(0, ...[...stderr.matchAll(/progress (\d+)\//g)].map(m => Number(m[1])))

// the manifest records a name: the same content added under one name has one CID
async function addFile (p: P, file: string, bytes: Uint8Array, name = 'shared'): Promise<string> {
  const path = join(dir.path, file)
  await writeFile(path, bytes)
  const t0 = Date.now()
  const r = await cli(['shards', 'add', path, '--kind', 'checkpoint', '--name', name, '--data-dir', p.dataDir])
  timings.push(`add ${file}: ${Date.now() - t0} ms`)
  return r.cid
}

const timings: string[] = []
let ckpt: Uint8Array
let ckptCid: string

beforeAll(async () => {
  dir = await tempDir('proofswarm-shards-swarm-')
  const s = swarm = await CliSwarm.start(dir.path)
  peers.push(...await Promise.all([0, 1, 2, 3, 4].map(async i => await s.join(`p${i}`,
    // P3 gives fetched shards a 1 s default hold so the GC test sees only its explicit hold
    i === 3 ? { PROOFSWARM_SHARDS_RETENTION_MS: '1000' } : {}))))
}, 120_000)

afterAll(async () => {
  console.log(timings.join('\n'))
  await swarm?.stop()
  await dir?.cleanup()
})

describe('shards across 6 peer processes', () => {
  it('one peer provides a 50 MiB checkpoint; four fetch it in parallel from the DHT and verify it', async () => {
    ckpt = randomBytes(50 * MiB)
    ckptCid = await addFile(peers[0], 'ckpt.bin', ckpt)
    expect(ckptCid).toMatch(/^bafyrei/)
    // wait for the provider record to be findable (the add announces in the background)
    await waitFor(async () => {
      const r = await cli(['dht', 'find-providers', ckptCid, '--timeout', '3000', '--data-dir', peers[4].dataDir])
      return r.providers.some((p: any) => p.peerId === peers[0].id)
    }, 30_000, 'provider record of the checkpoint')
    const t0 = Date.now()
    const results = await Promise.all([1, 2, 3, 4].map(async i => {
      const out = join(dir.path, `out-${i}.bin`)
      const r = await cli(['shards', 'get', ckptCid, '--out', out, '--data-dir', peers[i].dataDir], 90_000)
      return { r, out }
    }))
    timings.push(`4 parallel fetches of 50 MiB: ${Date.now() - t0} ms; ${results.map(x => `${x.r.durationMs as number} ms ${x.r.mibPerSecond as number} MiB/s from ${x.r.providers.length as number}`).join(', ')}`)
    for (const { r, out } of results) {
      expect(r.size).toBe(50 * MiB)
      expect(r.blocks).toBe(50)
      expect(r.sha256).toBe(sha(ckpt))
      expect(sha(await readFile(out))).toBe(sha(ckpt))
    }
    const ls = await cli(['shards', 'ls', '--data-dir', peers[2].dataDir])
    expect(ls.find((x: any) => x.cid === ckptCid)).toMatchObject({ complete: true, size: 50 * MiB, kind: 'checkpoint', source: 'fetched' })
  })

  it('a provider serving corrupted blocks is penalised and the fetch completes from an honest one', async () => {
    await restart(4, { PROOFSWARM_FAULT_SHARDS: 'corrupt' })
    const data = randomBytes(4 * MiB + 5)
    const cid = await addFile(peers[4], 'd-bad.bin', data)
    expect(await addFile(peers[0], 'd-good.bin', data)).toBe(cid)
    const out = join(dir.path, 'out-d.bin')
    // explicit order: the corrupt provider is asked first
    const r = await cli(['shards', 'get', cid, '--out', out, '--from', peers[4].id, '--from', peers[0].id, '--data-dir', peers[3].dataDir])
    expect(sha(await readFile(out))).toBe(sha(data))
    const bad = r.providers.find((p: any) => p.peerId === peers[4].id)
    expect(bad.corrupt).toBeGreaterThanOrEqual(1)
    // banned for each bad block it sent; for everything only from its third bad block on (node/shards/bans.ts)
    if (bad.corrupt >= 3) expect(bad.error).toMatch(/not matching/)
    else expect(bad.error).toBeUndefined()
    expect(r.providers.find((p: any) => p.peerId === peers[0].id).corrupt).toBe(0)
  })

  it('a fetcher killed mid-fetch resumes after restart; a provider killed mid-transfer → the fetch completes from another; restarted providers serve their blocks', async () => {
    const data = randomBytes(24 * MiB)
    const cid = await addFile(peers[0], 'e.bin', data)
    expect(await addFile(peers[1], 'e1.bin', data)).toBe(cid)
    // restarted providers: they must still hold and serve their blocks; slowed down so we can kill mid-transfer
    await Promise.all([restart(0, { PROOFSWARM_FAULT_SHARDS: 'delay:150' }), restart(1, { PROOFSWARM_FAULT_SHARDS: 'delay:150' })])
    const ls0 = await cli(['shards', 'ls', '--data-dir', peers[0].dataDir])
    expect(ls0.find((x: any) => x.cid === cid)?.complete).toBe(true)

    // 1) fetcher P2 gets a few blocks from P0, then its peer process dies
    const first = startCli(['shards', 'get', cid, '--from', peers[0].id, '--data-dir', peers[2].dataDir])
    await waitFor(async () => haveBlocks(first.stderr()) >= 4, 30_000, 'first blocks').catch(err => { throw withLog(err, first) })
    peers[2].proc.child.kill('SIGKILL')
    expect(await first.exited).not.toBe(0)
    expect(first.stderr()).toMatch(/run the command again to resume/)
    await restart(2)

    // 2) after the restart, the fetch resumes from both providers; P0 is killed mid-transfer
    const out = join(dir.path, 'out-e.bin')
    const second = startCli(['shards', 'get', cid, '--out', out, '--json', '--from', peers[0].id, '--from', peers[1].id, '--data-dir', peers[2].dataDir])
    let resumedAt = 0
    await waitFor(async () => { resumedAt ||= haveBlocks(second.stderr()); return haveBlocks(second.stderr()) >= resumedAt + 3 && resumedAt > 0 }, 30_000, 'second fetch progress')
      .catch(err => { throw withLog(err, second) })
    peers[0].proc.child.kill('SIGKILL')
    expect(await second.exited).toBe(0)
    const r = firstJson(second.stdout())
    expect(r.alreadyHad).toBeGreaterThanOrEqual(4)
    expect(r.fetchedBlocks).toBe(24 - r.alreadyHad)
    // the killed provider is recorded with the error that ended its transfer
    expect(r.providers.find((p: any) => p.peerId === peers[0].id).error).toMatch(/\S/)
    expect(r.providers.find((p: any) => p.peerId === peers[1].id).blocks).toBeGreaterThan(0)
    expect(sha(await readFile(out))).toBe(sha(data))
    await restart(0)
  })

  it('a peer killed during get --out: after a restart, get --out resumes from the part file it left (verified blocks kept) and gives the exact file', async () => {
    const data = randomBytes(12 * MiB)
    const cid = await addFile(peers[1], 'k.bin', data, 'k') // P1 still answers one block per 150 ms
    const out = join(dir.path, 'out-k.bin')
    const first = startCli(['shards', 'get', cid, '--out', out, '--from', peers[1].id, '--data-dir', peers[3].dataDir])
    await waitFor(async () => haveBlocks(first.stderr()) >= 3, 30_000, 'first blocks').catch(err => { throw withLog(err, first) })
    peers[3].proc.child.kill('SIGKILL')
    expect(await first.exited).not.toBe(0)
    await restart(3, { PROOFSWARM_SHARDS_RETENTION_MS: '1000' })
    const parts = (await readdir(dir.path)).filter(n => n.startsWith('out-k.bin.part-'))
    expect(parts).toHaveLength(1)
    const r = await cli(['shards', 'get', cid, '--out', out, '--from', peers[1].id, '--data-dir', peers[3].dataDir])
    expect(r.alreadyHad).toBeGreaterThanOrEqual(3)
    expect(r.fetchedBlocks).toBe(12 - r.alreadyHad)
    expect(sha(await readFile(out))).toBe(sha(data))
    expect((await readdir(dir.path)).filter(n => n.startsWith('out-k.bin.part-'))).toEqual([])
  })

  it('retained until a chain block: kept before the window closes, collected after; pinned shards stay', async () => {
    const p3 = peers[3].dataDir
    const pinned = await addFile(peers[3], 'pinned.bin', randomBytes(MiB + 1))
    await cli(['shards', 'pin', pinned, '--data-dir', p3])
    await cli(['shards', 'retain', ckptCid, '--until-block', '100', '--reason', 'task-1', '--data-dir', p3])
    await sleep(1100) // the 1 s default holds of P3's shards expire
    const t0 = Date.now()
    let gc = await cli(['shards', 'gc', '--block', '99', '--data-dir', p3])
    timings.push(`gc: ${Date.now() - t0} ms`)
    expect(gc.removedRoots).not.toContain(ckptCid)
    let ls = await cli(['shards', 'ls', '--data-dir', p3])
    expect(ls.map((x: any) => x.cid)).toContain(ckptCid)
    gc = await cli(['shards', 'gc', '--block', '100', '--data-dir', p3])
    expect(gc.removedRoots).toContain(ckptCid)
    // fetched by `get --out`: held by reference to out-3.bin, not copied: GC drops the 50 refs, never the file
    expect(gc.removedRefs).toBeGreaterThanOrEqual(50)
    expect(sha(await readFile(join(dir.path, 'out-3.bin')))).toBe(sha(ckpt))
    ls = await cli(['shards', 'ls', '--data-dir', p3])
    expect(ls.map((x: any) => x.cid)).toEqual([pinned])
  })

  it('--by-reference: served from the file without a copy; ls --json says so; rm drops it and leaves the file', async () => {
    const data = randomBytes(2 * MiB + 12_345)
    const path = join(dir.path, 'state-ref.bin')
    await writeFile(path, data)
    const added = await cli(['shards', 'add', path, '--by-reference', '--kind', 'checkpoint', '--data-dir', peers[3].dataDir])
    expect(added.byReference).toBe(true)
    const ls = await cli(['shards', 'ls', '--data-dir', peers[3].dataDir])
    expect(ls.find((x: any) => x.cid === added.cid)).toMatchObject({ complete: true, byReference: { path } })
    const out = join(dir.path, 'out-ref.bin')
    await cli(['shards', 'get', added.cid, '--out', out, '--from', peers[3].id, '--data-dir', peers[2].dataDir])
    expect(sha(await readFile(out))).toBe(sha(data))
    // get --out writes straight into the file and holds the shard by reference to it; --copy keeps the blocks in the store
    expect((await cli(['shards', 'ls', '--data-dir', peers[2].dataDir])).find((x: any) => x.cid === added.cid)).toMatchObject({ complete: true, byReference: { path: out } })
    const copied = await cli(['shards', 'get', added.cid, '--out', join(dir.path, 'out-copy.bin'), '--copy', '--from', peers[3].id, '--data-dir', peers[1].dataDir])
    expect(copied.sha256).toBe(sha(data))
    const rec1 = (await cli(['shards', 'ls', '--data-dir', peers[1].dataDir])).find((x: any) => x.cid === added.cid)
    expect(rec1.complete).toBe(true)
    expect(rec1.byReference).toBeUndefined()
    const rm = await cli(['shards', 'rm', added.cid, '--data-dir', peers[3].dataDir])
    expect(rm).toMatchObject({ removedRoots: [added.cid], removedBlocks: 1, removedRefs: 3 }) // the manifest + 3 refs
    expect(sha(await readFile(path))).toBe(sha(data))
    expect((await cli(['shards', 'ls', '--data-dir', peers[3].dataDir])).map((x: any) => x.cid)).not.toContain(added.cid)
  })

  it('no provider at all: a clear error after the bounded wait', async () => {
    const cid = buildManifest([{ cid: cidOf(randomBytes(8)), size: 8 }], {}).cid.toString()
    const t0 = Date.now()
    const r = await runCli(['shards', 'get', cid, '--timeout', '2000', '--data-dir', peers[3].dataDir], 30_000)
    expect(r.code).not.toBe(0)
    expect(r.stderr).toContain(`cannot fetch ${cid}: no usable provider found within 2 s`)
    expect(Date.now() - t0).toBeLessThan(20_000)
  })

  it('bad input is named: an invalid CID, a missing file', async () => {
    const bad = await runCli(['shards', 'get', 'not-a-cid', '--data-dir', peers[3].dataDir])
    expect(bad.code).not.toBe(0)
    expect(bad.stderr).toContain('invalid CID "not-a-cid"')
    const missing = await runCli(['shards', 'add', join(dir.path, 'nope.bin'), '--data-dir', peers[3].dataDir])
    expect(missing.code).not.toBe(0)
    expect(missing.stderr).toMatch(/nope\.bin: no such file/)
  })
})
