import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DatasetServer, datasetServeSteps, encodeServedRows } from '../../../protocols/availability/index.js'
import { toHex, verifySlice } from '../../../protocols/commit/index.js'
import { batchIndices } from '../../../protocols/data/order.js'
import { datasetRootOf } from '../../../protocols/dispute/dataset.js'
import { newProgram, type TaskProgram } from '../../../protocols/program/index.js'
import { initBackend } from '../../../node/train/backend.js'
import { SERVED_ROWS_FILE, datasetBatches, servedRunIn } from '../../../node/train/batch-source.js'
import { datasetRootOfRows } from '../../../node/train/dataset-root.js'
import { datasetRef, encodeIdx, inputRows, labelRows, loadIdxDataset, type Dataset } from '../../../node/train/dataset.js'
import { Trainer } from '../../../node/train/trainer.js'

// A verifier whose submitter withheld a custom IDX dataset replays from the
// rows served on chain (docs/economics.md "A withheld dataset"): the served
// batch source must give the very bytes the dataset's files give, so that a
// replay from it reaches the solver's state roots bit for bit.

const N = 128
let dir: string
let ds: Dataset
let program: TaskProgram
let server: DatasetServer

beforeAll(async () => {
  await initBackend('wasm')
  dir = mkdtempSync(join(tmpdir(), 'ps-batch-source-'))
  const data = join(dir, 'data')
  mkdirSync(data)
  // pixel values over the whole byte range, so every normalised value x/255 occurs
  const images = Uint8Array.from({ length: N * 784 }, (_, i) => (i * 131 + (i >> 9)) & 0xff)
  const labels = Uint8Array.from({ length: N }, (_, i) => (i * 7) % 10)
  writeFileSync(join(data, 'train-images-idx3-ubyte'), encodeIdx([N, 28, 28], images))
  writeFileSync(join(data, 'train-labels-idx1-ubyte'), encodeIdx([N], labels))
  writeFileSync(join(data, 't10k-images-idx3-ubyte'), encodeIdx([8, 28, 28], images.subarray(0, 8 * 784)))
  writeFileSync(join(data, 't10k-labels-idx1-ubyte'), encodeIdx([8], labels.subarray(0, 8)))
  ds = loadIdxDataset(data, 'custom')
  program = newProgram({ model: 'mlp', dataset: datasetRef(ds), steps: 12, optimizer: 'adam', batchSize: 16, checkpointEvery: 4, seed: 5 })
  const all = new Uint32Array(N).map((_, i) => i)
  server = new DatasetServer({ seed: program.seed, trainSize: N, batchSize: 16, rowSize: 784, classes: 10 }, inputRows(ds, all), labelRows(ds, all))
})
afterAll(() => { if (dir !== undefined) rmSync(dir, { recursive: true, force: true }) })

/** A run directory holding the serve of `steps`, in parts of at most `maxBytes`. */
function servedDir (name: string, steps: number[], maxBytes = 64 * 1024): string {
  const run = join(dir, name)
  mkdirSync(run, { recursive: true })
  const facts = { seed: program.seed, trainSize: N, batchSize: 16, rowSize: 784, classes: 10 }
  writeFileSync(join(run, SERVED_ROWS_FILE), encodeServedRows({ datasetRoot: server.root, facts, steps, parts: server.parts(steps, { maxBytes }) }))
  return run
}

describe('the served batch source', () => {
  it('gives the same batch bytes as the dataset file for every served step (the serve in several parts), and none for a step not served', () => {
    // units 3 and 10 of 12 steps, checkpoints every 4: steps 0..2 and 8..9 (of two epochs: 8 steps an epoch)
    const steps = datasetServeSteps([3, 10], 12, 4)
    expect(steps).toEqual([0, 1, 2, 8, 9])
    const run = servedDir('run-a', steps)
    const served = servedRunIn(run, program.dataset, program)!
    expect(served.rows.parts.length).toBeGreaterThan(1)
    const files = datasetBatches(ds)
    for (const s of steps) {
      const rows = batchIndices(program.seed, N, 16, s)
      const a = served.batches.batch(s, rows)
      const b = files.batch(s, rows)
      expect(Buffer.from(a.x.buffer, a.x.byteOffset, a.x.byteLength).equals(Buffer.from(b.x.buffer, b.x.byteOffset, b.x.byteLength))).toBe(true)
      expect(Buffer.from(a.y.buffer, a.y.byteOffset, a.y.byteLength).equals(Buffer.from(b.y.buffer, b.y.byteOffset, b.y.byteLength))).toBe(true)
    }
    expect(() => served.batches.batch(3, batchIndices(program.seed, N, 16, 3))).toThrow(/not served/)
    // the engine's own dataset_root of the files is the server's (what a verifier compares with the task's)
    expect(datasetRootOfRows(ds)).toBe(toHex(server.root))
  })

  it('a trainer fed from the served rows reaches the same state roots as one fed from the files', async () => {
    const steps = datasetServeSteps([6], 12, 4)
    expect(steps).toEqual([4, 5])
    const served = servedRunIn(servedDir('run-b', [0, 1, 2, 3, ...steps]), program.dataset, program)!
    const fromFiles = await Trainer.create(program, ds)
    const fromServe = await Trainer.create(program, served.ds, served.batches)
    try {
      for (let i = 0; i < 6; i++) {
        fromFiles.runStep()
        fromServe.runStep()
        expect(toHex(fromServe.stateRoot())).toBe(toHex(fromFiles.stateRoot()))
      }
      // a step whose batch was not served cannot be replayed from the serve
      expect(() => fromServe.runStep()).toThrow(/not served/)
    } finally {
      fromFiles.dispose()
      fromServe.dispose()
    }
  })

  it('proves each served row against dataset_root (a challenger\'s data claim); a serve of another data order or shape is refused', () => {
    const steps = [1, 7]
    const run = servedDir('run-c', steps)
    const served = servedRunIn(run, program.dataset, program)!
    const p = served.proofs()
    expect(toHex(datasetRootOf(p.xRoot, p.yRoot))).toBe(toHex(server.root))
    for (const s of steps) {
      for (const r of batchIndices(program.seed, N, 16, s)) {
        const got = p.rows.get(r)!
        expect(verifySlice(p.xRoot, got.x)).toBe(true)
        expect(verifySlice(p.yRoot, got.y)).toBe(true)
      }
    }
    expect(() => servedRunIn(run, program.dataset, { ...program, seed: program.seed + 1 })).toThrow(/another data order/)
    expect(servedRunIn(join(dir, 'no-serve'), program.dataset, program)).toBeUndefined()
  })
})
