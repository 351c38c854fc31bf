import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLogger } from '../../node/log.js'
import type { Peer } from '../../node/peer.js'
import { PortsPart, type PortsShared } from '../../node/roles/ports-part.js'
import { getShardService } from '../../node/shards/index.js'
import { datasetHash, encodeIdx, loadDatasetFor } from '../../node/train/dataset.js'
import { datasetDirForRun } from '../../node/train/store.js'
import type { TaskProgram } from '../../protocols/program/program.js'
import { taskProgram } from '../helpers/program.js'
import { tempDir } from '../helpers/procs.js'
import { startShardPeer } from '../helpers/shard-peer.js'

// The attack: a node keeps a custom dataset it fetched from the swarm under the
// program's dataset hash (datasets/<hash>), and a dispute's tape and segment
// re-runs read that copy (node/train/store.ts datasetDirForRun). The hash in a
// program is its submitter's word. An attacker posts a task of its own naming
// an honest task's dataset hash, with a bundle whose training images are its
// own `.gz` (the loader reads `.gz` before the raw file) and other labels: a
// peer that fetches it (drawn as its verifier, selected as its solver) wrote
// those files into the honest dataset's directory; its own engine refused the
// attacker's task (hash mismatch), but the honest task's copy was spoiled for
// good: the honest solver's tape in a dispute, or the honest verifier's, failed
// the content check, and it lost the dispute. Now a fetch fills a directory of
// its own and is moved under the hash only once its content hash is the
// program's; a directory there is never written again.

const enc = new TextEncoder()
const log = createLogger('test', { level: 'silent' })
const ROWS = 256
let dir: { path: string, cleanup: () => Promise<void> }
let submitter: Peer
let attacker: Peer
let victim: Peer

const idx = (seed: number): Record<string, Uint8Array> => ({
  'train-images-idx3-ubyte': encodeIdx([ROWS, 28, 28], Uint8Array.from({ length: ROWS * 784 }, (_, i) => (i * seed) % 256)),
  'train-labels-idx1-ubyte': encodeIdx([ROWS], Uint8Array.from({ length: ROWS }, (_, i) => (i + seed) % 10)),
  't10k-images-idx3-ubyte': encodeIdx([0, 28, 28], new Uint8Array(0)),
  't10k-labels-idx1-ubyte': encodeIdx([0], new Uint8Array(0))
})
const honestFiles = idx(31)
const sha256 = datasetHash(Object.values(honestFiles))
const honest: TaskProgram = taskProgram({
  steps: 10, checkpointEvery: 5, batchSize: 16,
  dataset: { kind: 'idx', name: 'custom-idx', sha256, trainSize: ROWS, testSize: 0, rowSize: 784, classes: 10 }
}).program
// the attacker's own program: another seed, the honest task's dataset hash
const hostile: TaskProgram = { ...honest, seed: honest.seed + 1 }

/** The victim's ports, as far as a dataset's fetch goes. */
class DatasetFetch extends PortsPart {
  async fetch (program: TaskProgram, cid: string, from: Peer): Promise<string | undefined> {
    return await this.datasetDirFor(program, cid, undefined, from.peerId)
  }
}
const dataDir = (name = 'victim'): string => join(dir.path, name)
const fetcher = (name = 'victim'): DatasetFetch => new DatasetFetch({
  init: { shards: getShardService(victim), datasetDir: join(dir.path, 'nowhere') },
  peerId: victim.peerId, progress: new Map(), econ: {}, log, dataDir: dataDir(name), engine: undefined
} as unknown as PortsShared)

async function bundle (from: Peer, files: Record<string, Uint8Array>): Promise<string> {
  const s = getShardService(from)
  const list = await Promise.all(Object.entries(files).map(async ([name, bytes]) => ({ name, cid: (await s.addBytes(bytes, { name, kind: 'dataset' })).cid })))
  return (await s.addBytes(enc.encode(JSON.stringify({ kind: 'dataset-bundle', sha256, files: list })), { name: 'b.json', kind: 'dataset' })).cid
}

beforeAll(async () => {
  dir = await tempDir('ps-dataset-poison-')
  submitter = await startShardPeer(join(dir.path, 'submitter'), [])
  const boot = [submitter.host.getMultiaddrs()[0].toString()]
  attacker = await startShardPeer(join(dir.path, 'attacker'), boot)
  victim = await startShardPeer(join(dir.path, 'victim-peer'), boot)
}, 60_000)

afterAll(async () => {
  await victim?.stop()
  await attacker?.stop()
  await submitter?.stop()
  await dir?.cleanup()
})

describe('a task naming another task\'s dataset hash', () => {
  // the attacker's task: training images as .gz (read first), other labels
  const poison = async (): Promise<string> => {
    const other = idx(7)
    return await bundle(attacker, {
      ...honestFiles,
      'train-images-idx3-ubyte.gz': gzipSync(other['train-images-idx3-ubyte']),
      'train-labels-idx1-ubyte': other['train-labels-idx1-ubyte']
    })
  }
  const staging = (name: string): string[] => readdirSync(join(dataDir(name), 'datasets')).filter(n => n.startsWith('.fetch-'))

  it('fetched after the honest task\'s: cannot change the copy its tapes read', async () => {
    // the honest task: its dataset fetched, its run directory's tapes read it
    const runDir = join(dataDir(), 'tasks', '1', 'run')
    mkdirSync(runDir, { recursive: true })
    writeFileSync(join(runDir, 'task.json'), JSON.stringify(honest))
    const got = await fetcher().fetch(honest, await bundle(submitter, honestFiles), submitter)
    expect(loadDatasetFor(honest.dataset, datasetDirForRun(runDir, dataDir())).sha256).toBe(sha256)

    await fetcher().fetch(hostile, await poison(), attacker).catch(() => {})
    const tapeDir = datasetDirForRun(runDir, dataDir())
    const load = (): string => { try { return loadDatasetFor(honest.dataset, tapeDir).sha256 } catch (e) { return (e as Error).message } }
    expect({ tapeDir, load: load(), gz: existsSync(join(got!, 'train-images-idx3-ubyte.gz')), staging: staging('victim') })
      .toEqual({ tapeDir: got, load: sha256, gz: false, staging: [] })
  }, 60_000)

  it('fetched first: refused once whole, nothing of it kept', async () => {
    const r = await fetcher('other').fetch(hostile, await poison(), attacker).then(d => `fetched into ${d ?? '?'}`, (e: Error) => e.message)
    expect({ r, staging: staging('other'), kept: readdirSync(join(dataDir('other'), 'datasets')) })
      .toEqual({ r: expect.stringMatching(/content hash is [0-9a-f]{64}, not the program's/), staging: [], kept: [] })
  }, 60_000)

  it('a dataset already here is not fetched again', async () => {
    // a bundle that cannot be fetched at all (no CID): the copy here is used
    const dirOf = await fetcher().fetch(honest, 'not-a-cid', submitter)
    expect(loadDatasetFor(honest.dataset, dirOf).sha256).toBe(sha256)
  }, 30_000)
})
