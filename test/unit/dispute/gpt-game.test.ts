import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { matrixView } from '../../../protocols/commit/tensor.js'
import type { Claim } from '../../../protocols/dispute/claim.js'
import { batchIndices } from '../../../protocols/data/order.js'
import { newProgram, stepKernels, type TaskProgram } from '../../../protocols/program/index.js'
import { ASCII_VOCAB } from '../../../protocols/program/gpt.js'
import { supportsElement } from '../../../protocols/reference/index.js'
import { STATE_PSEUDO_KERNEL } from '../../../protocols/tape/tape.js'
import { REVEAL_WINDOW } from '../../../devnet/chain/runtime/spec.js'
import { initBackend } from '../../../node/train/backend.js'
import { datasetRef, textDataset } from '../../../node/train/dataset.js'
import { clog2, honest, honestRun, nodeOf, playOnChain, tamperOp, tamperWeight, type Run } from './fixture.js'
import { trainOnOtherRow } from './tamper-data.js'

// Disputes over a real GPT step (a small GPT on the fortunes-min corpus) on
// the pure chain runtime: for every kernel kind the step emits, a consistent
// cheater (one op output element wrong, everything after it recomputed)
// loses with one element claim within the rounds bound; a solver that trains
// on another text window loses with a data claim; an honest solver wins
// against a false challenge.

const STEPS = 3
const runs: Record<string, Run> = {}
// a random disputed step per optimizer, reported so a failure can be replayed
const stepOf = { sgd: Math.floor(Math.random() * STEPS), adam: Math.floor(Math.random() * STEPS) }

beforeAll(async () => {
  await initBackend('wasm')
  const ds = textDataset('fortunes-min', { vocab: ASCII_VOCAB, context: 4 })
  for (const opt of ['sgd', 'adam'] as const) runs[opt] = await honestRun(PROGRAM(opt), ds, stepOf[opt])
}, 120_000)

// the disputes run without a macrotask turn; let the worker answer the test
// runner's messages between tests
afterEach(async () => { await new Promise(resolve => setTimeout(resolve, 10)) })

function bound (run: Run, entry: number): number {
  const out = run.entries[entry].outputs[0] ?? { shape: [1] }
  const { rows, cols } = matrixView(out.shape)
  return clog2(run.program.steps) + clog2(run.entries.length) + clog2(rows * cols) + 6
}

// the matrix runs over the Adam step, whose kernels include the SGD step's
// (the test checks both lists); one kernel per test keeps each short
const PROGRAM = (opt: 'sgd' | 'adam'): TaskProgram => newProgram({ model: 'gpt', gpt: { layers: 1, dModel: 8, heads: 2, mlp: 12 }, dataset: datasetRef(textDataset('fortunes-min', { vocab: ASCII_VOCAB, context: 4 })), steps: STEPS, optimizer: opt, batchSize: 2, seed: 21, checkpointEvery: STEPS, learningRate: 0.01 })

describe(`disputes over a GPT adam step (step ${stepOf.adam}): every kernel kind, tampered`, () => {
  const kernels = stepKernels(PROGRAM('adam'))
  it('the matrix covers every kernel of both optimizers\' steps, as taped', () => {
    const run = runs.adam
    expect(kernels).toEqual(expect.arrayContaining(stepKernels(PROGRAM('sgd'))))
    const taped = new Set(run.entries.filter(e => e.kernel !== STATE_PSEUDO_KERNEL).map(e => e.kernel))
    expect([...taped].sort()).toEqual(kernels)
    expect(new Set(runs.sgd.entries.filter(e => e.kernel !== STATE_PSEUDO_KERNEL).map(e => e.kernel)).size).toBeGreaterThanOrEqual(15)
  })
  for (const kernel of kernels) {
    it(`${kernel}: the cheater loses on one element and is slashed, within the rounds bound`, async () => {
      const run = runs.adam
      const i = run.entries.findIndex(e => e.kernel === kernel)
      expect(supportsElement(run.program.runtime, kernel)).toBe(true)
      const { outcome, h } = await playOnChain(run, tamperOp(run, i), honest(run))
      expect(outcome.error, `${kernel} at entry ${i}`).toBeUndefined()
      expect(outcome.status, `${kernel} at entry ${i}: ${outcome.claim?.kind}`).toBe('ChallengerWon')
      expect(outcome.claim?.kind, kernel).toBe('element')
      expect(h.advance(REVEAL_WINDOW + 1)).toContain('Arbitration.SolverPenalized')
      expect(nodeOf(h, 'Bob').stake).toBeLessThan(10_000n * 10n ** 12n)
      expect(outcome.moves, kernel).toBeLessThanOrEqual(2 * bound(run, i))
      expect(outcome.claimBytes).toBeLessThanOrEqual(64 * 1024)
    }, 60_000)
  }
})

for (const opt of ['sgd', 'adam'] as const) {
  it(`GPT ${opt}: a weight changed after the step (the devnet's forced error) is caught on the @state entry`, async () => {
    const run = runs[opt]
    const { outcome } = await playOnChain(run, tamperWeight(run), honest(run))
    expect(outcome.error).toBeUndefined()
    expect(outcome.claim?.kind).toBe('state')
    expect(outcome.status).toBe('ChallengerWon')
  }, 60_000)

  it(`an honest GPT ${opt} solver challenged falsely (on the attention Transpose) wins; the challenger loses its bond`, async () => {
    const run = runs[opt]
    const i = run.entries.findIndex(e => e.kernel === 'Transpose')
    const { outcome, h } = await playOnChain(run, honest(run), tamperOp(run, i, 5))
    expect(outcome.status).toBe('DefenderWon')
    expect(outcome.events).toContain('Arbitration.Slashed')
    expect(nodeOf(h, 'Bob').stake).toBe(10_000n * 10n ** 12n)
  }, 60_000)
}

describe('data claims over token inputs', () => {
  const other = (run: Run, e: number): number => (batchIndices(run.program.seed, run.ds.trainSize, run.program.batchSize, run.step)[e] + 7) % run.ds.trainSize

  it('a solver that trains on another text window loses with a data claim against dataset_root', async () => {
    const run = runs.adam
    const { outcome } = await playOnChain(run, trainOnOtherRow(run, 'x', 1, other(run, 1)), honest(run))
    expect(outcome.error).toBeUndefined()
    expect(outcome.claim?.kind).toBe('data')
    const c = outcome.claim as Extract<Claim, { kind: 'data' }>
    expect(Math.floor(c.flat / (4 * 96))).toBe(1)
    expect(c.row.shape).toEqual([run.ds.trainSize, 4 * 96])
    expect(outcome.status).toBe('ChallengerWon')
  })

  it('a solver that trains on other next-token labels loses with a data claim', async () => {
    const run = runs.sgd
    const { outcome } = await playOnChain(run, trainOnOtherRow(run, 'y', 0, other(run, 0)), honest(run))
    expect(outcome.claim?.kind).toBe('data')
    expect(outcome.status).toBe('ChallengerWon')
  })

  it('an honest solver against a challenger that trained on another window wins the data claim', async () => {
    const run = runs.sgd
    const { outcome } = await playOnChain(run, honest(run), trainOnOtherRow(run, 'x', 0, other(run, 0)))
    expect(outcome.claim?.kind).toBe('data')
    expect(outcome.status).toBe('DefenderWon')
  })
})
