import { open, rm } from 'node:fs/promises'
import { randomFillSync } from 'node:crypto'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CliSwarm, type CliPeer } from '../helpers/cli-peers.js'
import { runCliJson, tempDir } from '../helpers/procs.js'
import { peakRssDuring, peakRssFor, round, settledRss } from '../helpers/rss.js'

// `shards rm` (and GC) of a 400 MiB shard used to read every block it freed
// to count its bytes: the peer's RSS went 143 → 638 MiB and stayed there.
// Now blocks are deleted by key (their sizes come from the manifest): the
// peer's RSS stays within 2× its idle figure through the removal and after.

const MiB = 1024 * 1024
const SHARD_MIB = 400
let dir: { path: string, cleanup: () => Promise<void> }
let swarm: CliSwarm | undefined
let peer: CliPeer

const cli = async (args: string[], timeoutMs = 120_000): Promise<any> => await runCliJson(args, timeoutMs)

beforeAll(async () => {
  dir = await tempDir('ps-memory-rm-')
  swarm = await CliSwarm.start(dir.path)
  peer = await swarm.join('peer')
}, 60_000)

afterAll(async () => {
  await swarm?.stop()
  await dir?.cleanup()
})

describe('removing a 400 MiB shard', () => {
  it('keeps the peer within 2× its idle RSS: blocks are deleted by key, never read', async () => {
    const pid = peer.proc.child.pid!
    const idle = await settledRss(pid)
    // a 400 MiB file, written 16 MiB at a time (not held whole by the test)
    const file = join(dir.path, 'big.bin')
    const fh = await open(file, 'w')
    const piece = new Uint8Array(16 * MiB)
    for (let i = 0; i < SHARD_MIB / 16; i++) { randomFillSync(piece); await fh.write(piece) }
    await fh.close()
    const added = await cli(['shards', 'add', file, '--name', 'big', '--data-dir', peer.dataDir])
    expect(added.size).toBe(SHARD_MIB * MiB)
    await rm(file)
    // the add's LevelDB compactions run in the background: let them finish
    const beforeRm = await settledRss(pid)
    const { peak, result } = await peakRssDuring(pid, cli(['shards', 'rm', added.cid, '--data-dir', peer.dataDir]))
    const after = await peakRssFor(pid, 5000)
    console.log(`RSS (MiB) through shards rm of ${SHARD_MIB} MiB: ${JSON.stringify({ idle: round(idle), beforeRm: round(beforeRm), peakDuringRm: round(peak), peak5sAfter: round(after) })}; ` +
      `peak/beforeRm ${(peak.total / beforeRm.total).toFixed(2)}, after/beforeRm ${(after.total / beforeRm.total).toFixed(2)}, anon peak/beforeRm ${(peak.anon / beforeRm.anon).toFixed(2)}`)
    expect(await cli(['shards', 'ls', '--data-dir', peer.dataDir])).toEqual([])
    // idle: the peer at rest holding the shard (the add's memtable and its
    // LevelDB tables included), as the probe measured it (143 → 638 MiB)
    expect(peak.total).toBeLessThan(2 * beforeRm.total)
    expect(after.total).toBeLessThan(2 * beforeRm.total)
    // what the process itself holds (heap, buffers) does not grow at all beyond noise
    expect(peak.anon).toBeLessThan(beforeRm.anon + 32)
    expect(result.removedBlocks).toBe(SHARD_MIB + 1)
    expect(result.freedBytes).toBe(SHARD_MIB * MiB)
  }, 180_000)
})
