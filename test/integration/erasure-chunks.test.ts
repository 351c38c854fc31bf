import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mkdirSync, openSync, writeSync, closeSync, writeFileSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Peer } from '../../node/peer.js'
import { getShardService, type ShardService } from '../../node/shards/index.js'
import { CHUNKS_FILE, CHUNK_LIST_FILE, codeCheckpoint } from '../../node/erasure/coded-run.js'
import { fetchChunks, rebuildFromChunks, sampleFromProviders } from '../../node/erasure/verifier-chunks.js'
import { codingParams } from '../../protocols/erasure/index.js'
import { bytesEqual, toHex } from '../../protocols/commit/merkle.js'
import type { RunIndex } from '../../protocols/verification/run-index.js'
import { tempDir } from '../helpers/procs.js'
import { startShardPeer } from '../helpers/shard-peer.js'
import { codedRun } from '../helpers/coded-run.js'

// Erasure-coded chunks over the shard exchange, between in-process peers on
// 127.0.0.1 (real libp2p, real LevelDB): the solver adds chunks.bin by
// reference with one chunk per block; a verifier samples chunks, rebuilds the
// checkpoint from any k of them, and sees exactly the chunks a withholding
// solver does not serve as missing.

let dir: { path: string, cleanup: () => Promise<void> }
const peers: Peer[] = []
let solver: Peer, verifier: Peer
const svc = (p: Peer): ShardService => getShardService(p)
let entry: RunIndex['checkpoints'][number]
let data: Uint8Array
let ckDir: string

beforeAll(async () => {
  dir = await tempDir('ps-erasure-chunks-')
  solver = await startShardPeer(join(dir.path, 'solver'), [])
  peers.push(solver)
  verifier = await startShardPeer(join(dir.path, 'verifier'), solver.host.getMultiaddrs().map(String))
  peers.push(verifier)
  // a real coded checkpoint (an Adam MLP state, 256 chunks)
  data = codedRun().data[1]
  ckDir = join(dir.path, 'run', 'checkpoints', 'step-00000005')
  mkdirSync(ckDir, { recursive: true })
  writeFileSync(join(ckDir, 'manifest.json'), JSON.stringify({ dataFile: 'state.bin' }))
  writeFileSync(join(ckDir, 'state.bin'), data)
  const c = codeCheckpoint(ckDir, 5)
  const list = await svc(solver).addFile(join(ckDir, CHUNK_LIST_FILE), { name: 'chunks.json', kind: 'checkpoint' }, { provide: false })
  const chunks = await svc(solver).addFile(join(ckDir, CHUNKS_FILE), { name: 'chunks.bin', kind: 'checkpoint' }, { byReference: true, provide: false, blockSize: codingParams(c.dataBytes).chunkBytes })
  expect(chunks.blocks).toBe(256)
  entry = { step: 5, manifest: list.cid, data: list.cid, coded: { dataBytes: c.dataBytes, chunkRoot: toHex(c.chunkRoot), list: list.cid, chunks: chunks.cid } }
}, 120_000)

afterAll(async () => {
  for (const p of peers.reverse()) await p.stop().catch(() => {})
  await dir?.cleanup()
})

const solverOnly = (): { providers: string[], findTimeoutMs: number, requestTimeoutMs: number } => ({
  providers: [solver.peerId], findTimeoutMs: 3000, requestTimeoutMs: 3000
})

describe('erasure-coded chunks over the shard exchange', () => {
  it('a verifier samples chunks from the solver, each checked against the chunk list', async () => {
    expect(await sampleFromProviders(svc(verifier), entry, solverOnly())).toEqual([])
    const got = await fetchChunks(svc(verifier), entry, [0, 200, 255], solverOnly())
    expect([...got.keys()].sort((a, b) => a - b)).toEqual([0, 200, 255])
  })

  it('rebuilds the checkpoint bit for bit from parity chunks when data chunks are withheld, and reports exactly the withheld chunks as missing', async () => {
    const { chunkBytes, dataShards } = codingParams(entry.coded!.dataBytes)
    // the solver withholds data chunks 64..127 (zeroed in its chunks.bin: they no longer match their CIDs and are not served)
    const withheld = Array.from({ length: 64 }, (_, i) => i + 64)
    const fd = openSync(join(ckDir, CHUNKS_FILE), 'r+')
    try { for (const i of withheld) writeSync(fd, new Uint8Array(chunkBytes), 0, chunkBytes, i * chunkBytes) } finally { closeSync(fd) }
    // a fresh verifier store: nothing fetched before
    const v2 = await startShardPeer(join(dir.path, 'verifier2'), solver.host.getMultiaddrs().map(String))
    peers.push(v2)
    const rebuilt = await rebuildFromChunks(svc(v2), entry, solverOnly())
    expect(bytesEqual(rebuilt, data)).toBe(true)
    const got = await fetchChunks(svc(v2), entry, withheld.slice(0, 4).concat([dataShards, dataShards + 1]), solverOnly())
    expect([...got.keys()].sort((a, b) => a - b)).toEqual([dataShards, dataShards + 1])
    expect(bytesEqual(new Uint8Array(readFileSync(join(ckDir, 'state.bin'))), data)).toBe(true)
  }, 120_000)

  it('with more than half of the chunks withheld the checkpoint cannot be rebuilt, and a sample sees the gap', async () => {
    const { chunkBytes, total } = codingParams(entry.coded!.dataBytes)
    const fd = openSync(join(ckDir, CHUNKS_FILE), 'r+')
    try {
      for (let i = 0; i < total; i += 2) writeSync(
        fd, new Uint8Array(chunkBytes), 0, chunkBytes, i * chunkBytes
      ); writeSync(fd, new Uint8Array(chunkBytes), 0, chunkBytes, 1 * chunkBytes)
    } finally { closeSync(fd) }
    const v3 = await startShardPeer(join(dir.path, 'verifier3'), solver.host.getMultiaddrs().map(String))
    peers.push(v3)
    await expect(rebuildFromChunks(svc(v3), entry, solverOnly())).rejects.toThrow(/could be fetched/)
    expect((await sampleFromProviders(svc(v3), entry, solverOnly())).length).toBeGreaterThan(0)
  }, 120_000)
})
