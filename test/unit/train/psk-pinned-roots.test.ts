import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { initBackend } from '../../../node/train/backend.js'
import { datasetRef, syntheticDataset, textDataset, type Dataset } from '../../../node/train/dataset.js'
import { trainTask } from '../../../node/train/run.js'
import { tapeStep } from '../../../node/train/tape-recorder.js'
import { Trainer } from '../../../node/train/trainer.js'
import { newProgram, WASM_PSK_RUNTIME } from '../../../protocols/program/index.js'
import { ASCII_VOCAB } from '../../../protocols/program/gpt.js'

// The psk1 runtime's speed-ups that are not psk1 kernels (buffers shared by Identity and a
// same-dtype Cast, native elementwise kernels with tfjs-wasm's bits) must leave every bit a
// peer commits as it was: the proof root of a task, and the tape of a step (its kernels,
// their inputs' references and every commitment). These roots were computed by the build
// before those changes (tfjs-wasm's own Identity, Cast and elementwise kernels), so any
// drift of a value, or of which op a tape says an input came from, fails here (the MLP, the CNN and a small GPT).
const PINNED = {
  mlp: {
    proofRoot: '956122ffe3d3035c7afc8c5f81af9d3040ed4e16b839cfe1f3012ef62714bca9',
    tapeRoot: 'ada2828793e22fa08ad0e9801821e676be95a394183f3da3cb455e3f8ea71d33',
    skeletonRoot: '107898ccadcf1d89dadf06f9d6956ef168f61d2cb0748129340bc5bad107677f',
    entries: 127
  },
  cnn: {
    proofRoot: '65b26e3d83e492e5ccd008f0a45edd2d3166cb16c6ba8d4195c74f8a614f98e1',
    tapeRoot: '68bf5226bd2e5d279c8cdf07fa17155029911e6457733bbf1738285c3ceb2ada',
    skeletonRoot: '2f7f16f680878a94fbbf37bbfdda819d3ab05f624cb159807558362a1f09222d',
    entries: 182
  },
  // many more broadcasts (layer norms, attention, GELU) through the native elementwise kernels
  gpt: {
    proofRoot: 'effde78c3936046bca66652de884dcfbb64bfbd3d864d1b7e61843afda5bb7f0',
    tapeRoot: '144b261947ad4a26d71f421c9a4ee5929918452f92e27512a3a570d8aa935b3b',
    skeletonRoot: '389534e666ed483777a0e8c0bc04aec69ad4a0f4510686b5768256e081634233',
    entries: 734
  }
} as const

let ds: Dataset
let text: Dataset
let dir: string
beforeAll(async () => {
  const b = await initBackend('auto', WASM_PSK_RUNTIME)
  expect(b.runtime).toBe(WASM_PSK_RUNTIME)
  ds = syntheticDataset(4, 256, 16)
  text = textDataset('fortunes-min', { vocab: ASCII_VOCAB, context: 16 })
  dir = mkdtempSync(join(tmpdir(), 'ps-psk-pinned-'))
})
afterAll(() => { if (dir !== undefined) rmSync(dir, { recursive: true, force: true }) })

describe('psk1: proof roots and tapes are the previous build\'s', () => {
  for (const [model, batchSize] of [['mlp', 32], ['cnn', 16], ['gpt', 4]] as const) {
    it(`${model}: the proof root of a 6-step task and the tape of step 2`, async () => {
      const data = model === 'gpt' ? text : ds
      const common = { model, runtime: WASM_PSK_RUNTIME, dataset: datasetRef(data), steps: 6, checkpointEvery: 3, batchSize, seed: 5 }
      const program = model === 'gpt' ? newProgram({ ...common, gpt: { layers: 1, dModel: 16, heads: 2, mlp: 32 }, learningRate: 0.01 }) : newProgram(common)
      const r = await trainTask({ program, outDir: join(dir, model), dataset: data, hashWorker: false, evaluate: false })
      expect(r.proofRoot).toBe(PINNED[model].proofRoot)
      const t = await Trainer.create(program, data)
      try {
        t.runStep(); t.runStep()
        const tape = tapeStep(t)
        expect(tape.entries.length).toBe(PINNED[model].entries)
        expect(tape.skeletonRoot).toBe(PINNED[model].skeletonRoot)
        expect(tape.tapeRoot).toBe(PINNED[model].tapeRoot)
        // the tape's step is the step training runs: the same state after it
        const plain = await Trainer.create(program, data)
        for (let i = 0; i < 3; i++) plain.runStep()
        expect(tape.stateRootAfter).toBe(Buffer.from(plain.stateRoot()).toString('hex'))
        plain.dispose()
      } finally {
        t.dispose()
      }
    })
  }
})
