import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import pino from 'pino'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { ROLE_SOLVER, ROLE_VERIFIER } from '../../node/chain/client.js'
import { servedBatches } from '../../protocols/availability/index.js'
import { toHex } from '../../protocols/commit/merkle.js'
import { encodeIdx, loadIdxDataset } from '../../node/train/dataset.js'
import { minWindow, taskProgram } from '../helpers/program.js'
import { testPeer } from '../helpers/peer-key.js'
import { chainClients } from './chain-clients.js'

// The submitter's peer answers a dataset challenge of its task over the dev
// chain process (docs/economics.md "A withheld dataset"): a drawn verifier
// that cannot fetch the task's custom IDX dataset rejects and challenges it;
// the submitter's DatasetResponder (from dist/) reads the program it wrote at
// submission and its dataset directory, and serves the rows of the batches
// the verifier's sample replays; the verifier's reject is withdrawn and it
// reads the rows from the chain's events.

const DIST = join(process.cwd(), 'dist')
const UNIT = 10n ** 12n
const log = pino({ level: process.env.LOG_LEVEL ?? 'silent' })
const c = chainClients('ps-dataset-responder-', ['Alice', 'Bob', 'Dave'])
let dir: string

beforeAll(() => { dir = mkdtempSync(join(tmpdir(), 'ps-dataset-responder-')) })
afterAll(() => { if (dir !== undefined) rmSync(dir, { recursive: true, force: true }) })

describe('a dataset challenge over the dev chain', () => {
  it('the submitter\'s peer serves the rows the verifier\'s sample replays; the verifier\'s reject is withdrawn and it has the rows', async () => {
    const { DatasetResponder, datasetServerFor, submittedTaskFile } = await import(join(DIST, 'node/availability/dataset-responder.js')) as typeof import('../../node/availability/dataset-responder.js')
    const block = async (): Promise<void> => { await c.Alice.api.rpc.engine.createBlock(true, true) }
    // Alice's custom dataset, in her dataset directory only
    const n = 256
    const data = join(dir, 'alice-data')
    mkdirSync(data)
    const images = Uint8Array.from({ length: n * 784 }, (_, i) => (i * 131 + (i >> 9)) & 0xff)
    const labels = Uint8Array.from({ length: n }, (_, i) => (i * 7) % 10)
    writeFileSync(join(data, 'train-images-idx3-ubyte'), encodeIdx([n, 28, 28], images))
    writeFileSync(join(data, 'train-labels-idx1-ubyte'), encodeIdx([n], labels))
    writeFileSync(join(data, 't10k-images-idx3-ubyte'), encodeIdx([16, 28, 28], images.subarray(0, 16 * 784)))
    writeFileSync(join(data, 't10k-labels-idx1-ubyte'), encodeIdx([16], labels.subarray(0, 16)))
    const ds = loadIdxDataset(data, 'custom')
    const p = taskProgram({ steps: 10, checkpointEvery: 5, batchSize: 16, dataset: { kind: 'idx', name: 'custom', sha256: ds.sha256, trainSize: n, testSize: 16, rowSize: 784, classes: 10 } })
    // the program where the submitter's node writes it at submission
    const aliceDir = join(dir, 'alice')
    const taskFile = submittedTaskFile(aliceDir, p.programHash)
    mkdirSync(dirname(taskFile), { recursive: true })
    writeFileSync(taskFile, p.bytes)
    const responder = new DatasetResponder({ dataDir: aliceDir, datasetDir: data, chain: async () => c.Alice, log })
    const root = '0x' + toHex(datasetServerFor(p.program, data).root)

    const keys = { Bob: testPeer('BobDataset'), Dave: testPeer('DaveDataset') }
    await c.Bob.registerNode(keys.Bob.peerId, ROLE_SOLVER, 2000n * UNIT, keys.Bob.sign)
    await c.Dave.registerNode(keys.Dave.peerId, ROLE_VERIFIER, 2000n * UNIT, keys.Dave.sign)
    const id = Number(await c.Alice.submitTask({
      programHash: p.programHash, program: p.bytes, datasetRoot: root, skeletonRoot: '0x' + '03'.repeat(32),
      steps: 10, checkpointEvery: 5, escrow: 1000n * UNIT, solverReward: 500n * UNIT, verifierReward: 100n * UNIT,
      verifierCount: 1, challengeWindow: Math.max(60, minWindow(p, 1)), solveTimeout: 100
    }))
    await block()
    expect((await c.Alice.task(id))?.solver).toBe(c.Bob.accountId)
    await c.Bob.commitProof(id, { proofRoot: '0x' + '05'.repeat(32), finalStateRoot: '0x' + '06'.repeat(32), stepCount: 10, checkpoints: [] })
    for (let i = 0; i < 10 && await c.Dave.myAssignment(id) == null; i++) await block()
    expect(await c.Dave.myAssignment(id)).not.toBeNull()

    // Dave cannot fetch the dataset: it rejects and challenges it
    await c.Dave.submitVerdict(id, false, [])
    const challengeId = Number(await c.Dave.challengeDataset(id, p.bytes))
    const challenge = (await c.Dave.datasetChallenge(challengeId))!
    expect(challenge.status).toBe('Open')
    expect(challenge.steps.length).toBeGreaterThan(0)
    expect((await c.Dave.myAssignment(id))?.backed).toBe(true)

    // Alice's peer answers from its dataset directory
    await responder.answer(challengeId)
    expect(responder.handled.at(-1)).toMatchObject({ challengeId, answered: true, rows: challenge.steps.length * 16 })
    const after = (await c.Dave.datasetChallenge(challengeId))!
    expect(after.status).toBe('Answered')
    expect(after.served).toBe(after.total)
    // served: its reject withdrawn, Dave votes again (after reading the rows from the chain's events)
    expect((await c.Dave.myAssignment(id))?.backed).toBe(false)
    const parts: Uint8Array[] = []
    const best = await c.Dave.bestNumber()
    for (let b = best; b > best - 10 && b > 0; b--) {
      const found = (await c.Dave.eventsAt(await c.Dave.blockHash(b)))
        .filter(e => e.section === 'arbitration' && e.method === 'DatasetServed' && Number(e.data.challengeId) === challengeId)
        .map(e => Uint8Array.from(Buffer.from(String(e.data.part).slice(2), 'hex')))
      parts.unshift(...found)
    }
    const facts = { seed: p.program.seed, trainSize: n, batchSize: 16, rowSize: 784, classes: 10 }
    const batches = servedBatches({ datasetRoot: Uint8Array.from(Buffer.from(root.slice(2), 'hex')), facts, steps: challenge.steps }, parts)
    expect(batches.size).toBe(challenge.steps.length)
  }, 240_000)

  it('challenges of several programs on one dataset: the submitter\'s peer holds that dataset\'s rows once, not once per program', async () => {
    // before: a server per program, kept for good, each a float32 copy of the dataset (188 MB for
    // Fashion-MNIST): a verifier drawn on a submitter's sweep of programs over one dataset challenged
    // each and grew the submitter's node by a dataset's rows per challenge, up to running out of memory
    const { DatasetResponder, datasetServerFor, submittedTaskFile } = await import(join(DIST, 'node/availability/dataset-responder.js')) as typeof import('../../node/availability/dataset-responder.js')
    const block = async (): Promise<void> => { await c.Alice.api.rpc.engine.createBlock(true, true) }
    const n = 4096 // 12.8 MB of float32 rows
    const data = join(dir, 'sweep-data')
    mkdirSync(data)
    const images = Uint8Array.from({ length: n * 784 }, (_, i) => (i * 17 + (i >> 11)) & 0xff)
    const labels = Uint8Array.from({ length: n }, (_, i) => (i * 3) % 10)
    writeFileSync(join(data, 'train-images-idx3-ubyte'), encodeIdx([n, 28, 28], images))
    writeFileSync(join(data, 'train-labels-idx1-ubyte'), encodeIdx([n], labels))
    writeFileSync(join(data, 't10k-images-idx3-ubyte'), encodeIdx([16, 28, 28], images.subarray(0, 16 * 784)))
    writeFileSync(join(data, 't10k-labels-idx1-ubyte'), encodeIdx([16], labels.subarray(0, 16)))
    const ds = loadIdxDataset(data, 'sweep')
    const rowBytes = n * 784 * 4
    const aliceDir = join(dir, 'alice-sweep')
    const responder = new DatasetResponder({ dataDir: aliceDir, datasetDir: data, chain: async () => c.Alice, log })
    setFlagsFromString('--expose-gc')
    const gc = runInNewContext('gc') as () => void
    const held = (): number => { gc(); gc(); return process.memoryUsage().arrayBuffers }
    // registered by the first scenario (unless it was left out)
    for (const [who, key, role] of [['Bob', 'BobDataset', ROLE_SOLVER], ['Dave', 'DaveDataset', ROLE_VERIFIER]] as const) {
      const k = testPeer(key)
      if (await c[who].node(c[who].accountId) == null) await c[who].registerNode(k.peerId, role, 2000n * UNIT, k.sign)
    }
    let root: string | undefined
    const sizes: number[] = []
    for (const seed of [11, 12, 13, 14]) {
      const p = taskProgram({ steps: 10, checkpointEvery: 5, batchSize: 16, seed, dataset: { kind: 'idx', name: 'sweep', sha256: ds.sha256, trainSize: n, testSize: 16, rowSize: 784, classes: 10 } })
      const taskFile = submittedTaskFile(aliceDir, p.programHash)
      mkdirSync(dirname(taskFile), { recursive: true })
      writeFileSync(taskFile, p.bytes)
      root ??= '0x' + toHex(datasetServerFor(p.program, data).root)
      const id = Number(await c.Alice.submitTask({
        programHash: p.programHash, program: p.bytes, datasetRoot: root, skeletonRoot: '0x' + '03'.repeat(32),
        steps: 10, checkpointEvery: 5, escrow: 100n * UNIT, solverReward: 10n * UNIT, verifierReward: 10n * UNIT,
        verifierCount: 1, challengeWindow: Math.max(60, minWindow(p, 1)), solveTimeout: 100
      }))
      await block()
      for (let i = 0; i < 10 && (await c.Alice.task(id))?.solver !== c.Bob.accountId; i++) await block()
      await c.Bob.commitProof(id, { proofRoot: '0x' + '05'.repeat(32), finalStateRoot: '0x' + '06'.repeat(32), stepCount: 10, checkpoints: [] })
      for (let i = 0; i < 10 && await c.Dave.myAssignment(id) == null; i++) await block()
      await c.Dave.submitVerdict(id, false, [])
      const challengeId = Number(await c.Dave.challengeDataset(id, p.bytes))
      await responder.answer(challengeId)
      expect(responder.handled.at(-1)).toMatchObject({ challengeId, answered: true })
      expect((await c.Dave.datasetChallenge(challengeId))?.status).toBe('Answered')
      sizes.push(held())
    }
    // after the first program's serve, three more programs' serves hold less than one more copy of the rows
    const grown = sizes[3] - sizes[0]
    expect({ grownMB: Math.round(grown / 2 ** 20), under: grown < rowBytes }).toEqual({ grownMB: expect.any(Number), under: true })
  }, 240_000)
})
