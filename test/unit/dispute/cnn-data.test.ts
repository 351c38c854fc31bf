import { beforeAll, describe, expect, it } from 'vitest'
import type { Claim } from '../../../protocols/dispute/claim.js'
import { batchIndices } from '../../../protocols/data/order.js'
import { newProgram } from '../../../protocols/program/index.js'
import { REVEAL_WINDOW } from '../../../devnet/chain/runtime/spec.js'
import { initBackend } from '../../../node/train/backend.js'
import { datasetRef, syntheticDataset } from '../../../node/train/dataset.js'
import { honest, honestRun, nodeOf, playOnChain, tamperOp, type Run } from './fixture.js'
import { trainOnOtherRow } from './tamper-data.js'

// Data claims over the cnn's 4-D image batch [b,28,28,1] (and its labels
// [b,10]) on the pure chain runtime: a solver that trains on other data loses
// with a data claim, an honest solver wins against a false one.

const STEPS = 4
const runs: Record<string, Run> = {}
// a random disputed step and batch example per optimizer, reported so a failure can be replayed
const stepOf = { sgd: Math.floor(Math.random() * STEPS), adam: Math.floor(Math.random() * STEPS) }
const exampleOf = { sgd: Math.floor(Math.random() * 4), adam: Math.floor(Math.random() * 4) }

/** A dataset row that is not the one the program's data order puts at `example` of the disputed step (another image). */
function otherRow (run: Run, example: number): number {
  const rows = batchIndices(run.program.seed, run.ds.trainSize, run.program.batchSize, run.step)
  return (rows[example] + 1 + example) % run.ds.trainSize === rows[example]
    ? (rows[example] + 2) % run.ds.trainSize
    : (rows[example] + 1 + example) % run.ds.trainSize
}

beforeAll(async () => {
  await initBackend('wasm')
  const ds = syntheticDataset(9, 64, 8)
  for (const opt of ['sgd', 'adam'] as const) {
    const p = newProgram({ model: 'cnn', dataset: datasetRef(ds), steps: STEPS, optimizer: opt, batchSize: 4, seed: 13, checkpointEvery: STEPS })
    runs[opt] = await honestRun(p, ds, stepOf[opt])
  }
}, 120_000)

for (const opt of ['sgd', 'adam'] as const) {
  describe(`data disputes over a cnn ${opt} step (step ${stepOf[opt]}, example ${exampleOf[opt]})`, () => {
    it('a solver that trains on another image loses with a data claim and is slashed', async () => {
      const run = runs[opt]
      const cheat = trainOnOtherRow(run, 'x', exampleOf[opt], otherRow(run, exampleOf[opt]))
      const { outcome, h } = await playOnChain(run, cheat, honest(run))
      expect(outcome.error).toBeUndefined()
      expect(outcome.how).toBe('claim')
      expect(outcome.claim?.kind).toBe('data')
      const c = outcome.claim as Extract<Claim, { kind: 'data' }>
      // the element is one pixel of the swapped example, proved against its dataset row
      expect(Math.floor(c.flat / 784)).toBe(exampleOf[opt])
      expect(c.slice.shape).toEqual([4, 28, 28, 1])
      expect(c.row.shape).toEqual([run.ds.trainSize, 784])
      expect(outcome.status).toBe('ChallengerWon')
      expect(h.advance(REVEAL_WINDOW + 1)).toContain('Arbitration.SolverPenalized')
      expect(nodeOf(h, 'Bob').stake).toBeLessThan(10_000n * 10n ** 12n)
    })

    it('a solver that trains on another label loses with a data claim', async () => {
      const run = runs[opt]
      const rows = batchIndices(run.program.seed, run.ds.trainSize, run.program.batchSize, run.step)
      const e = exampleOf[opt]
      // a row with another label than the example's
      const label = (r: number): number => run.ds.trainLabels[r]
      const from = Array.from({ length: run.ds.trainSize }, (_, r) => r).find(r => label(r) !== label(rows[e]))!
      const { outcome } = await playOnChain(run, trainOnOtherRow(run, 'y', e, from), honest(run))
      expect(outcome.claim?.kind).toBe('data')
      expect(outcome.status).toBe('ChallengerWon')
    })

    it('an honest cnn solver challenged with a false data claim wins; the challenger loses its bond', async () => {
      const run = runs[opt]
      // the challenger trained on another image and disputes the honest batch
      const { outcome, h } = await playOnChain(run, honest(run), trainOnOtherRow(run, 'x', exampleOf[opt], otherRow(run, exampleOf[opt])))
      expect(outcome.error).toBeUndefined()
      expect(outcome.claim?.kind).toBe('data')
      expect(outcome.status).toBe('DefenderWon')
      expect(outcome.events).toContain('Arbitration.Slashed')
      expect(nodeOf(h, 'Bob').stake).toBe(10_000n * 10n ** 12n)
    })
  })
}

describe('cnn data claims, details', () => {
  it('a corrupted pixel of the image batch (not a whole image) is caught against dataset_root', async () => {
    const run = runs.sgd
    const i = run.entries.findIndex(e => e.kernel === 'Identity' && e.inputs[0].ref.kind === 'data' && e.inputs[0].shape.length === 4)
    expect(i).toBeGreaterThanOrEqual(0)
    const el = 3 * 784 + 407 // example 3, pixel (14, 15)
    const { outcome } = await playOnChain(run, tamperOp(run, i, el, 0), honest(run))
    expect(outcome.claim?.kind).toBe('data')
    expect((outcome.claim as Extract<Claim, { kind: 'data' }>).flat).toBe(el)
    expect(outcome.status).toBe('ChallengerWon')
  })
})
