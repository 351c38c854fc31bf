import { beforeAll, describe, expect, it } from 'vitest'
import { tapeAllowance } from '../../devnet/chain/runtime/disputes.js'
import { referenceRerunBlocks } from '../../protocols/scheduling/estimate.js'
import { referenceCostOn } from '../helpers/rerun-cost.js'
import { honest, nodeOf, taskOf, type Run } from '../unit/dispute/fixture.js'
import { signed } from '../helpers/dispute-msgs.js'
import { BOND, answer, dispute, force, mlpRun, opened, tx, until, worth } from './setup.js'

// (a) A griefer opens a dispute and never plays. Before forces, an honest
// defender that answered only in reply to a `hello` timed out and was slashed
// a quarter of its stake for a 100-unit bond. Now the defender publishes its
// commit at once and forces it on chain; a silent griefer loses its bond.
// Every test fails if the griefer ends up with more than it started with
// minus its bond, or the defender with less than it started with.

let run: Run
beforeAll(async () => { run = await mlpRun() }, 120_000)

function expectGrieferLost (h: Awaited<ReturnType<typeof opened>>['h'], before: { dave: bigint, bob: bigint, bobStake: bigint }): void {
  expect(dispute(h).status).toBe('DefenderWon')
  expect(worth(h, 'Dave')).toBe(before.dave - BOND)
  expect(nodeOf(h, 'Bob').stake).toBe(before.bobStake)
  expect(worth(h, 'Bob')).toBe(before.bob + BOND / 2n)
  expect(taskOf(h).solverFailed).toBe(false)
  expect(taskOf(h).openDisputes).toBe(0)
}

describe('a griefer opens a dispute and never plays', () => {
  it('the honest defender forces its commit on chain; the silent griefer loses its bond, the defender is not slashed', async () => {
    const { h, g } = await opened(run, honest(run))
    const before = { dave: worth(h, 'Dave'), bob: worth(h, 'Bob'), bobStake: nodeOf(h, 'Bob').stake }
    const commit = g.D.commit()
    expect(tx(h, 'Dave', 'claim_timeout')).toBe('Arbitration.NotExpired')
    expect(force(h, 'Bob', undefined, commit)).toBeUndefined()
    const f = dispute(h).force!
    expect(f).toMatchObject({ to: 'Challenger', seq: 1 })
    // the griefer cannot answer with the defender's message, nor with anything but an opening of this step
    expect(answer(h, 'Dave', g.D.commit())).toBe('Arbitration.InvalidMove')
    expect(answer(h, 'Dave', signed('Dave', g.ctx, { t: 'query', d: 0, want: 'children', tree: { e: -1 }, level: 0, index: 0 }, commit))).toBe('Arbitration.NotAnAnswer')
    until(h, f.due)
    expect(tx(h, 'Dave', 'claim_timeout')).toBe('Arbitration.NotExpired')
    expect(tx(h, 'Eve', 'claim_timeout')).toBeUndefined()
    expectGrieferLost(h, before)
  })

  it('a griefer that forces the commit at once and then goes silent loses too: the defender had the tape allowance on top of the window', async () => {
    const { h, g } = await opened(run, honest(run))
    const before = { dave: worth(h, 'Dave'), bob: worth(h, 'Bob'), bobStake: nodeOf(h, 'Bob').stake }
    expect(force(h, 'Dave')).toBeUndefined()
    const f = dispute(h).force!
    const cost = referenceCostOn(h)
    const allowance = tapeAllowance({ steps: run.program.steps, checkpointEvery: run.program.checkpointEvery, solveTimeout: 20 }, run.step, cost)
    // the re-run of steps 0..2: at the submitter's pace 12 blocks, at the program's reference cost 5 (twice 3 steps of 2,440 millionths of a block, and the engine start)
    const n = (run.step % run.program.checkpointEvery) + 1
    expect(allowance).toBe(Math.min(Math.ceil(n * 20 / run.program.steps), referenceRerunBlocks(n, cost.stepCost, cost.flopsPerBlock)))
    expect(allowance).toBe(5)
    expect(f.due - f.at).toBe(20 + allowance)
    // the griefer cannot end it early
    until(h, f.due - 1)
    expect(tx(h, 'Dave', 'claim_timeout')).toBe('Arbitration.NotExpired')
    // the defender answers in the last block it may
    expect(answer(h, 'Bob', g.D.commit())).toBeUndefined()
    // nothing pending against the defender now; a second empty force (rewinding to the start) is refused
    expect(tx(h, 'Dave', 'claim_timeout')).toBe('Arbitration.NotExpired')
    expect(force(h, 'Dave')).toBe('Arbitration.InvalidMove')
    // the griefer stays silent: the defender forces its commit, already on chain
    expect(force(h, 'Bob', undefined, g.D.commit())).toBeUndefined()
    until(h, dispute(h).force!.due + 1)
    expect(tx(h, 'Bob', 'claim_timeout')).toBeUndefined()
    expectGrieferLost(h, before)
  })

  it('with neither side forcing, the griefer loses at the dispute deadline: the burden of proof is its own', async () => {
    const { h } = await opened(run, honest(run))
    const before = { dave: worth(h, 'Dave'), bob: worth(h, 'Bob'), bobStake: nodeOf(h, 'Bob').stake }
    until(h, dispute(h).deadline)
    expect(tx(h, 'Dave', 'claim_timeout')).toBe('Arbitration.NotExpired')
    expect(tx(h, 'Eve', 'claim_timeout')).toBeUndefined()
    expectGrieferLost(h, before)
  }, 60_000)
})
