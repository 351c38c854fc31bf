import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLogger } from '../../node/log.js'
import type { Peer } from '../../node/peer.js'
import type { PortsShared } from '../../node/roles/ports-part.js'
import { VerifierChecks } from '../../node/roles/verifier-checks.js'
import { getShardService, type ShardService } from '../../node/shards/index.js'
import { buildCheckpoint } from '../../protocols/pol/checkpoint.js'
import { initLayout, initialState } from '../../protocols/program/init.js'
import { cidOf, encodeManifest, manifestCid, MAX_BLOCK_BYTES, MANIFEST_FORMAT, MANIFEST_VERSION, DAG_CBOR_CODEC } from '../../protocols/shards/index.js'
import { MAX_RUN_INDEX_BYTES, checkpointMaxBytes } from '../../protocols/verification/fetch-limits.js'
import { startShardPeer } from '../helpers/shard-peer.js'
import { taskProgram } from '../helpers/program.js'
import { tempDir } from '../helpers/procs.js'

// The attack: a shard's manifest may list the same block many times (zero
// pages do), and nothing bounded what a fetcher accepted. A solver names, as a
// checkpoint in its run index, a manifest listing one 1 MiB block of zeros
// 20,000 times: its verifiers fetch (or copy from the one block they hold)
// ~20 GiB into a file, from a block the solver stored once, their disk filling
// and their verdict's deadline passing while they write. The same manifest as
// a run index was read into memory whole (fetchBytes). Now a fetch names the
// most it expects (a checkpoint: the program's state size; a run index, a
// program, a proof: theirs) and a larger manifest is refused before any block.

const COPIES = 20_000
let dir: { path: string, cleanup: () => Promise<void> }
let solver: Peer
let verifier: Peer
let root: string

beforeAll(async () => {
  dir = await tempDir('ps-inflated-')
  solver = await startShardPeer(join(dir.path, 'solver'), [])
  verifier = await startShardPeer(join(dir.path, 'verifier'), [solver.host.getMultiaddrs()[0].toString()])
  // one block of zeros, listed COPIES times: ~20 GiB declared, 1 MiB stored
  const zeros = new Uint8Array(MAX_BLOCK_BYTES)
  const block = cidOf(zeros)
  const manifest = encodeManifest({
    format: MANIFEST_FORMAT, version: MANIFEST_VERSION, kind: 'checkpoint', name: 'state.bin',
    size: COPIES * MAX_BLOCK_BYTES,
    blockSize: MAX_BLOCK_BYTES,
    blocks: Array.from({ length: COPIES }, () => ({ cid: block, size: MAX_BLOCK_BYTES })),
    labels: {}
  })
  const mcid = manifestCid(manifest)
  expect(mcid.code).toBe(DAG_CBOR_CODEC)
  const store = getShardService(solver).store
  await store.put(block, zeros)
  await store.put(mcid, manifest)
  root = mcid.toString()
}, 60_000)

afterAll(async () => {
  await verifier?.stop()
  await solver?.stop()
  await dir?.cleanup()
})

/** `p` or, after `ms`, 'timeout' (the fetch is left to the peer's stop). */
async function within<T> (p: Promise<T>, ms: number): Promise<T | 'timeout'> {
  let t: NodeJS.Timeout | undefined
  const r = await Promise.race([p, new Promise<'timeout'>(resolve => { t = setTimeout(() => resolve('timeout'), ms) })])
  clearTimeout(t)
  return r
}

describe('a manifest that names one block thousands of times', () => {
  it('a verifier refuses it as a checkpoint before fetching a block: nothing written, at once', async () => {
    const { program } = taskProgram({ optimizer: 'adam' })
    const max = checkpointMaxBytes(program)
    expect(max).toBeGreaterThan(0)
    const shards: ShardService = getShardService(verifier)
    const checks = new VerifierChecks({ init: { shards }, log: createLogger('verifier', { level: 'silent' }), dataDir: join(dir.path, 'verifier') } as unknown as PortsShared)
    const ckDir = join(dir.path, 'verifier', 'verify', '0', 'checkpoints', 'step-00000010')
    mkdirSync(ckDir, { recursive: true })
    const t0 = Date.now()
    const problem = await within(checks.fetchCheckpoint({ step: 10, manifest: root, data: root }, ckDir, solver.peerId.toString(), max), 15_000)
    const written = existsSync(join(ckDir, 'state.bin')) ? statSync(join(ckDir, 'state.bin')).size : 0
    const part = readdirSync(ckDir).filter(f => f.includes('.part-')).map(f => statSync(join(ckDir, f)).blocks * 512).reduce((a, b) => a + b, 0)
    expect({ problem, written, partOnDisk: part }).toMatchObject({ problem: expect.stringMatching(/declares 20971520000 bytes, more than the \d+ expected/), written: 0, partOnDisk: 0 })
    expect(Date.now() - t0).toBeLessThan(5_000)
  }, 60_000)

  it('as a run index (read into memory) it is refused the same way', async () => {
    const shards = getShardService(verifier)
    const r = await within(shards.fetchBytes(root, { providers: [solver.peerId.toString()], maxBytes: MAX_RUN_INDEX_BYTES }).then(() => 'fetched', (e: Error) => e.message), 15_000)
    expect(r).toMatch(/declares 20971520000 bytes/)
    // and without a bound of its caller's, fetchBytes still holds at most MAX_FETCH_BYTES
    const d = await within(shards.fetchBytes(root, { providers: [solver.peerId.toString()] }).then(() => 'fetched', (e: Error) => e.message), 15_000)
    expect(d).toMatch(/declares 20971520000 bytes/)
  }, 60_000)

  it('the bound admits an honest checkpoint: exactly the program\'s state', () => {
    for (const optimizer of ['sgd', 'adam']) {
      const { program } = taskProgram({ optimizer: optimizer as 'sgd' | 'adam' })
      const names = initLayout(program).map(t => t.name)
      const { data } = buildCheckpoint('00'.repeat(32), 0, names, initialState(program))
      expect(checkpointMaxBytes(program)).toBe(data.length)
    }
  })
})
