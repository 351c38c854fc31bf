import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLogger } from '../../node/log.js'
import type { Peer } from '../../node/peer.js'
import { PortsPart, type PortsShared } from '../../node/roles/ports-part.js'
import { getShardService } from '../../node/shards/index.js'
import { datasetHash, encodeIdx } from '../../node/train/dataset.js'
import type { TaskProgram } from '../../protocols/program/program.js'
import { cidOf, encodeManifest, manifestCid, MAX_BLOCK_BYTES, MANIFEST_FORMAT, MANIFEST_VERSION } from '../../protocols/shards/index.js'
import { CUSTOM_PROGRAM } from '../helpers/custom-dataset.js'
import { tempDir } from '../helpers/procs.js'
import { startShardPeer } from '../helpers/shard-peer.js'

// The attack: a task's custom IDX dataset comes as a bundle, a JSON list of
// files (a name and a shard CID each) published by its submitter, and its
// solver and verifiers fetched every file it listed, each as large as its
// manifest said: the dataset's hash is checked only once it is whole. A
// coalition submitter names as its training images a manifest listing one
// 1 MiB block thousands of times, or lists thousands of files: the disks of
// the solver and of every verifier drawn fill, from a block it stored once
// (and the verifiers miss their deadlines writing it). Now only the four IDX
// files the loader reads are fetched, each within what the program's own
// sizes allow (protocols/verification/fetch-limits.ts idxFileMaxBytes), from a
// bundle of at most 16 entries: a larger file is refused before its first block.

const enc = new TextEncoder()
const log = createLogger('test', { level: 'silent' })
let dir: { path: string, cleanup: () => Promise<void> }
let submitter: Peer
let solver: Peer
const program: TaskProgram = CUSTOM_PROGRAM.program

/** The solver's ports, as far as a dataset's fetch goes. */
class DatasetFetch extends PortsPart {
  // from the submitter's peer first, as a solver's and a verifier's are
  async fetch (cid: string, p: TaskProgram = program): Promise<string | undefined> { return await this.datasetDirFor(p, cid, undefined, submitter.peerId) }
}
const fetcher = (): DatasetFetch => new DatasetFetch({
  // no local copy of the dataset: it is fetched
  init: { shards: getShardService(solver), datasetDir: join(dir.path, 'nowhere') },
  peerId: solver.peerId, progress: new Map(), econ: {}, log, dataDir: join(dir.path, 'solver'), engine: undefined
} as unknown as PortsShared)

/** Publishes `files` as the submitter's dataset bundle; returns its CID. */
async function bundle (files: Array<{ name: string, cid: string }>): Promise<string> {
  return (await getShardService(submitter).addBytes(enc.encode(JSON.stringify({ kind: 'dataset-bundle', sha256: program.dataset.sha256, files })), { name: 'b.json', kind: 'dataset' })).cid
}
const add = async (bytes: Uint8Array, name: string): Promise<string> => (await getShardService(submitter).addBytes(bytes, { name, kind: 'dataset' })).cid
/** bytes on disk under the solver's datasets directory (sparse part files counted by their blocks) */
function onDisk (): number {
  const root = join(dir.path, 'solver', 'datasets')
  if (!existsSync(root)) return 0
  let n = 0
  for (const d of readdirSync(root)) for (const f of readdirSync(join(root, d))) n += statSync(join(root, d, f)).blocks * 512
  return n
}

beforeAll(async () => {
  dir = await tempDir('ps-dataset-bundle-')
  submitter = await startShardPeer(join(dir.path, 'submitter'), [])
  solver = await startShardPeer(join(dir.path, 'solver-peer'), [submitter.host.getMultiaddrs()[0].toString()])
}, 60_000)

afterAll(async () => {
  await solver?.stop()
  await submitter?.stop()
  await dir?.cleanup()
})

describe('a dataset bundle', () => {
  it('naming one block 64 times as its training images: refused before a block is fetched, nothing written', async () => {
    const zeros = new Uint8Array(MAX_BLOCK_BYTES)
    const block = cidOf(zeros)
    const manifest = encodeManifest({
      format: MANIFEST_FORMAT, version: MANIFEST_VERSION, kind: 'dataset', name: 'train-images-idx3-ubyte',
      size: 64 * MAX_BLOCK_BYTES, blockSize: MAX_BLOCK_BYTES, blocks: Array.from({ length: 64 }, () => ({ cid: block, size: MAX_BLOCK_BYTES })), labels: {}
    })
    const store = getShardService(submitter).store
    await store.put(block, zeros)
    await store.put(manifestCid(manifest), manifest)
    await getShardService(submitter).provide(manifestCid(manifest).toString(), 10_000).catch(() => {})
    const cid = await bundle([{ name: 'train-images-idx3-ubyte', cid: manifestCid(manifest).toString() }])
    const r = await fetcher().fetch(cid).then(() => 'fetched', (e: Error) => e.message)
    // the program's 256 rows of 784 bytes are 200,724 bytes with their header
    expect({ r, onDisk: onDisk() }).toEqual({ r: expect.stringMatching(/declares 67108864 bytes, more than the 200724 expected/), onDisk: 0 })
  }, 60_000)

  it('listing 40 files: refused, nothing fetched', async () => {
    const junk = await add(new Uint8Array(64 * 1024).fill(7), 'junk')
    const cid = await bundle(Array.from({ length: 40 }, (_, i) => ({ name: `junk-${i}`, cid: junk })))
    const r = await fetcher().fetch(cid).then(() => 'fetched', (e: Error) => e.message)
    expect({ r, onDisk: onDisk() }).toEqual({ r: expect.stringMatching(/does not list at most 16 files/), onDisk: 0 })
  }, 60_000)

  it('an honest dataset (gzipped IDX files) is fetched whole; a file nothing reads is not', async () => {
    const rows = program.dataset.trainSize
    const images = encodeIdx([rows, 28, 28], Uint8Array.from({ length: rows * 784 }, (_, i) => (i * 31) % 256))
    const labels = encodeIdx([rows], Uint8Array.from({ length: rows }, (_, i) => i % 10))
    const files = {
      'train-images-idx3-ubyte.gz': gzipSync(images, { level: 0 }), // stored blocks: gzip's largest output
      'train-labels-idx1-ubyte.gz': gzipSync(labels),
      't10k-images-idx3-ubyte.gz': gzipSync(encodeIdx([0, 28, 28], new Uint8Array(0))),
      't10k-labels-idx1-ubyte.gz': gzipSync(encodeIdx([0], new Uint8Array(0))),
      'README.txt': enc.encode('not a dataset file')
    }
    const list = await Promise.all(Object.entries(files).map(async ([name, bytes]) => ({ name, cid: await add(bytes, name) })))
    // the program names the files' content hash (a fetch is kept only when it is theirs: dataset-dir-poison.test.ts)
    const sha256 = datasetHash([images, labels, encodeIdx([0, 28, 28], new Uint8Array(0)), encodeIdx([0], new Uint8Array(0))])
    const out = await fetcher().fetch(await bundle(list), { ...program, dataset: { ...program.dataset, sha256 } })
    expect(out).toBeDefined()
    for (const [name, bytes] of Object.entries(files)) {
      if (name === 'README.txt') expect(existsSync(join(out!, name))).toBe(false)
      else expect(Buffer.compare(readFileSync(join(out!, name)), Buffer.from(bytes))).toBe(0)
    }
  }, 60_000)
})
