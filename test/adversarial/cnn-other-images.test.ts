import { beforeAll, describe, expect, it } from 'vitest'
import { batchIndices } from '../../protocols/data/order.js'
import { newProgram } from '../../protocols/program/index.js'
import { REVEAL_WINDOW } from '../../devnet/chain/runtime/spec.js'
import { initBackend } from '../../node/train/backend.js'
import { datasetRef, syntheticDataset } from '../../node/train/dataset.js'
import { honest, honestRun, playOnChain, taskOf, type Run } from '../unit/dispute/fixture.js'
import { trainOnOtherRow } from '../unit/dispute/tamper-data.js'

// Attack: a solver trains the cnn on other images than the program's data
// order names (cheaper data, or poisoned data) and commits a proof that is
// consistent with its own run. The only place it deviates is a batch input
// [b,28,28,1]; if the chain had no data claim for that layout the challenger
// could not end the dispute and the solver would win by the challenger's
// timeout. The attacker must gain nothing: it loses the dispute on a data
// claim, is slashed, and is never paid for the task.

let run: Run
const example = Math.floor(Math.random() * 8)

beforeAll(async () => {
  await initBackend('wasm')
  const ds = syntheticDataset(21, 96, 8)
  const p = newProgram({ model: 'cnn', dataset: datasetRef(ds), steps: 3, optimizer: 'adam', batchSize: 8, seed: 5, checkpointEvery: 3 })
  run = await honestRun(p, ds, Math.floor(Math.random() * 3))
}, 120_000)

describe(`a cnn solver training on other images (example ${example})`, () => {
  it('loses its dispute on a data claim, is slashed and never paid', async () => {
    const rows = batchIndices(run.program.seed, run.ds.trainSize, run.program.batchSize, run.step)
    // another training image: the row after the one the data order names
    const other = (rows[example] + 1) % run.ds.trainSize
    const cheat = trainOnOtherRow(run, 'x', example, other)
    // the attack changes the committed post-state (else there is nothing to dispute)
    expect(cheat.roots[run.step + 1]).not.toBe(run.roots[run.step + 1])
    const { outcome, h } = await playOnChain(run, cheat, honest(run))
    const before = h.free('Bob') + h.reserved('Bob')
    expect(outcome.error).toBeUndefined()
    // decided by a claim the chain judged, not by a clock
    expect(outcome.how).toBe('claim')
    expect(outcome.claim?.kind).toBe('data')
    expect(outcome.status).toBe('ChallengerWon')
    // no forced-error excuse: penalized once the reveal window passes, then the task settles as failed
    expect(h.advance(REVEAL_WINDOW + 1)).toContain('Arbitration.SolverPenalized')
    h.advance(60)
    const t = taskOf(h)
    expect(t.solverFailed).toBe(true)
    expect(t.phase).not.toBe('Verifying')
    // everything the solver holds, stake included, is less than before the dispute: no reward, a slash
    const after = h.free('Bob') + h.reserved('Bob')
    expect(after).toBeLessThan(before)
  })
})
