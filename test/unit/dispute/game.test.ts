import { writeFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { axisLayout, matrixView, sizeOf } from '../../../protocols/commit/tensor.js'
import type { Claim } from '../../../protocols/dispute/claim.js'
import { newProgram } from '../../../protocols/program/index.js'
import { supportsElement } from '../../../protocols/reference/index.js'
import { STATE_PSEUDO_KERNEL } from '../../../protocols/tape/tape.js'
import { REVEAL_WINDOW } from '../../../devnet/chain/runtime/spec.js'
import { initBackend } from '../../../node/train/backend.js'
import { datasetRef, syntheticDataset, type Dataset } from '../../../node/train/dataset.js'
import { clog2, honest, honestRun, nodeOf, playOnChain, tamperOp, tamperWeight, type Run } from './fixture.js'

// The fault-injection matrix on the pure chain runtime: for every kernel kind
// of an MLP SGD step and an Adam step, a consistent cheater (one op output
// wrong, everything after it recomputed from it) disputed at a random step
// loses and is slashed; an honest solver wins against a false challenge; a
// liar and a silent party lose; rounds stay within the bound.

let ds: Dataset
// per-dispute figures (moves, claim bytes, adjudication time), written for test/bench/disputes.bench.mjs
const figures: Array<Record<string, unknown>> = []
afterAll(() => { if (process.env.DISPUTE_FIGURES != null) writeFileSync(process.env.DISPUTE_FIGURES, JSON.stringify(figures)) })
const runs: Record<string, Run> = {}
const STEPS = 5
// a random disputed step per optimizer, reported so a failure can be replayed
const stepOf = { sgd: Math.floor(Math.random() * STEPS), adam: Math.floor(Math.random() * STEPS) }

beforeAll(async () => {
  await initBackend('wasm')
  ds = syntheticDataset(7, 64, 8)
  for (const opt of ['sgd', 'adam'] as const) {
    const p = newProgram({ model: 'mlp', dataset: datasetRef(ds), steps: STEPS, optimizer: opt, batchSize: 4, seed: 11, checkpointEvery: 5 })
    runs[opt] = await honestRun(p, ds, stepOf[opt])
  }
}, 120_000)

function bound (run: Run, entry: number): number {
  const e = run.entries[entry]
  const out = e.outputs[0] ?? { shape: [1] }
  const { rows, cols } = matrixView(out.shape)
  // step level: 0 rounds (every per-step root is committed); + tape + tensor tree + constant
  return clog2(run.program.steps) + clog2(run.entries.length) + clog2(rows * cols) + 6
}

for (const opt of ['sgd', 'adam'] as const) {
  describe(`disputes over an MLP ${opt} step`, () => {
    it('every kernel kind, tampered: the cheater is slashed, within the rounds bound', async () => {
      const run = runs[opt]
      const kinds = new Map<string, number>()
      run.entries.forEach((e, i) => { if (e.kernel !== STATE_PSEUDO_KERNEL && !kinds.has(e.kernel)) kinds.set(e.kernel, i) })
      expect(kinds.size).toBeGreaterThanOrEqual(opt === 'sgd' ? 16 : 18)
      const seen: string[] = []
      for (const [kernel, i] of kinds) {
        expect(supportsElement(run.program.runtime, kernel)).toBe(true)
        const cheat = tamperOp(run, i)
        const { outcome, h } = await playOnChain(run, cheat, honest(run))
        expect(outcome.error, `${kernel} at entry ${i} (step ${run.step})`).toBeUndefined()
        expect(outcome.status, `${kernel} at entry ${i}: ${outcome.claim?.kind}`).toBe('ChallengerWon')
        // the solver is slashed once its window to reveal a forced error has passed
        expect(outcome.events).not.toContain('Arbitration.Slashed')
        expect(h.advance(REVEAL_WINDOW + 1)).toContain('Arbitration.SolverPenalized')
        expect(nodeOf(h, 'Bob').stake).toBeLessThan(10_000n * 10n ** 12n)
        expect(outcome.moves, kernel).toBeLessThanOrEqual(2 * bound(run, i))
        // a cooperative dispute: after open_dispute, the claim is the only transaction
        expect(outcome.txs, kernel).toBe(1)
        expect(outcome.claimBytes).toBeLessThanOrEqual(64 * 1024)
        seen.push(`${kernel}:${outcome.claim?.kind}`)
        figures.push({
          opt, kernel, entry: i, entries: run.entries.length, kind: outcome.claim?.kind, moves: outcome.moves,
          txs: outcome.txs + 1, bound: 2 * bound(run, i), claimBytes: outcome.claimBytes,
          adjudicateMs: outcome.adjudicateMs
        })
      }
      // the first tampered op is adjudicated as one element (not caught as a later inconsistency)
      expect(seen.filter(s => s.endsWith(':element')).length).toBeGreaterThanOrEqual(kinds.size - 2)
    })

    it('a weight changed after the step (no op produced it) is caught on the @state entry', async () => {
      const run = runs[opt]
      const { outcome } = await playOnChain(run, tamperWeight(run), honest(run))
      expect(outcome.claim?.kind).toBe('state')
      expect(outcome.status).toBe('ChallengerWon')
    })

    it('an honest solver challenged falsely: the challenger loses its bond', async () => {
      const run = runs[opt]
      // the challenger is the cheater here: its own tape has a wrong op
      const i = run.entries.findIndex(e => e.kernel === 'BatchMatMul')
      const { outcome, h } = await playOnChain(run, honest(run), tamperOp(run, i))
      expect(outcome.status).toBe('DefenderWon')
      expect(outcome.events).toContain('Arbitration.Slashed')
      expect(nodeOf(h, 'Bob').stake).toBe(10_000n * 10n ** 12n)
    })
  })
}

describe('dispute faults', () => {
  it('a defender lying during bisection loses (its signed answers contradict)', async () => {
    const run = runs.sgd
    const i = run.entries.findIndex(e => e.kernel === 'Relu')
    const { outcome } = await playOnChain(run, tamperOp(run, i), honest(run), { defenderLies: true })
    expect(outcome.claim?.kind).toBe('lie')
    expect(outcome.status).toBe('ChallengerWon')
  })

  it('an honest defender that lies during bisection still loses: lying is punished by itself', async () => {
    const run = runs.sgd
    const i = run.entries.findIndex(e => e.kernel === 'Sub')
    const { outcome } = await playOnChain(run, honest(run), tamperOp(run, i), { defenderLies: true })
    expect(outcome.claim?.kind).toBe('lie')
    expect(outcome.status).toBe('ChallengerWon')
  })

  it('a defender that goes silent is forced on chain and loses when the response window passes', async () => {
    const run = runs.sgd
    const i = run.entries.findIndex(e => e.kernel === 'Exp')
    const { outcome } = await playOnChain(run, tamperOp(run, i), honest(run), { defenderSilentAfter: 4 })
    expect(outcome.how).toBe('timeout')
    expect(outcome.status).toBe('ChallengerWon')
    // force_move, a claim_timeout refused at the due block, the one that ends it
    expect(outcome.txs).toBe(3)
  })

  it('a defender that stops sending off chain but answers every force on chain still loses on the claim', async () => {
    const run = runs.sgd
    const i = run.entries.findIndex(e => e.kernel === 'Relu')
    const { outcome } = await playOnChain(run, tamperOp(run, i), honest(run), { defenderOffChainAfter: 1 })
    expect(outcome.how).toBe('claim')
    expect(outcome.claim?.kind).toBe('element')
    expect(outcome.status).toBe('ChallengerWon')
    // each of the k defender moves after the commit cost force_move + answer_move, plus the claim: 2k + 1 = moves
    expect(outcome.txs).toBe(outcome.moves)
  })

  it('a challenger naming a step whose pre-state it disputes is rejected and loses', async () => {
    const run = runs.adam
    const i = run.entries.findIndex(e => e.kernel === 'Sqrt')
    const { outcome } = await playOnChain(run, honest(run), tamperOp(run, i), { challengerOpensWrongPre: true })
    expect(outcome.claim?.kind).toBe('badOpen')
    expect(outcome.status).toBe('DefenderWon')
  })

  it('a wrong element inside a grouped leaf (not its first row) is located exactly and adjudicated', async () => {
    const run = runs.adam
    // the first layer's kernel gradient: [784,128] rows of 512 bytes, 4 rows per leaf
    const i = run.entries.findIndex(e => e.kernel === 'BatchMatMul' && sizeOf(e.outputs[0].shape) === 784 * 128)
    expect(i).toBeGreaterThanOrEqual(0)
    const layout = axisLayout('float32', run.entries[i].outputs[0].shape, 'row')
    expect(layout.group).toBe(4)
    const el = 781 * 128 + 77 // row 781: the second row of leaf 195
    const { outcome } = await playOnChain(run, tamperOp(run, i, el), honest(run))
    expect(outcome.claim?.kind).toBe('element')
    const c = outcome.claim as Extract<Claim, { kind: 'element' }>
    expect(c.flat).toBe(el)
    expect(c.slice.index).toBe(781)
    expect(c.slice.bytes.length).toBe(4 * 512)
    expect(outcome.status).toBe('ChallengerWon')
    expect(outcome.claimBytes).toBeLessThanOrEqual(64 * 1024)
  })

  it('a corrupted batch row is caught against dataset_root', async () => {
    const run = runs.sgd
    // an Identity of the batch x whose input (and so output) row differs from the dataset
    const i = run.entries.findIndex(e => e.kernel === 'Identity' && e.inputs[0].ref.kind === 'data')
    const side = tamperOp(run, i, 5, 0)
    const { outcome } = await playOnChain(run, side, honest(run))
    expect(outcome.claim?.kind).toBe('data')
    expect(outcome.status).toBe('ChallengerWon')
  })
})
