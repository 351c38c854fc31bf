import { u8aToHex } from '@polkadot/util'
import { cryptoWaitReady } from '@polkadot/util-crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import type { Params } from '../../devnet/chain/runtime/arbitration.js'
import { MAX_TASK_PERIOD } from '../../devnet/chain/runtime/spec.js'
import { fromHex, merkleRoot, sha256, toHex } from '../../protocols/commit/merkle.js'
import { commitTensor } from '../../protocols/commit/tensor.js'
import { datasetRootOf, skeletonRootOf } from '../../protocols/dispute/index.js'
import { validateProgram } from '../../protocols/program/index.js'
import { programSize, referenceRerunBlocks, stepCostMicroblocks } from '../../protocols/scheduling/estimate.js'
import type { Harness } from '../unit/chain/harness.js'
import { honest, taskOnChain, type Run } from '../unit/dispute/fixture.js'
import { dispute, mlpRun } from './setup.js'

// The queue stall (docs/economics.md "Queue stall"). A dispute's re-run waits
// behind every earlier dispute against the same defender (TapeQueue), each
// taking its task's tape allowance. Priced at the submitter's pace alone,
// ⌈(step mod checkpoint_every + 1) · solve_timeout / steps⌉, a coalition's
// task of 5 steps with checkpoint_every 5 and solve_timeout MaxTaskPeriod
// (2^24) made each of its puppets' disputes at its last step take 2^24 blocks
// of its solver's queue, for a bond B each: 255 of them pushed every later
// dispute against that solver, on any task, to the last u32 block (~136 years
// at 1 s blocks), and every honest task of that solver stayed open with its
// escrow, bonds and stakes. Now a re-run is priced at most at its program's
// cost at the reference speed (TaskStepCost): this MLP step costs 2,440
// millionths of a block at 10^9 FLOP per block, a 5-step re-run 5 blocks
// (twice its work, rounded up, plus a 4-block engine start), so the 255
// puppet disputes hold the queue 1,275 blocks and the honest task's commit is
// due 1,275 + 5 + dispute_clock blocks after it is forced.

const PUPPETS = 255

let run: Run
beforeAll(async () => { await cryptoWaitReady(); run = await mlpRun() }, 120_000)

/** Alice submits a second task of the run's program (solve_timeout 20, the fixture's): Bob, the only solver, is selected and commits its honest proof. */
function honestTask (h: Harness): number {
  const r = h.run('Alice', 'Arbitration', 'submit_task', {
    programHash: '0x' + toHex(sha256(run.programBytes)),
    program: u8aToHex(run.programBytes),
    datasetRoot: '0x' + toHex(datasetRootOf(commitTensor(run.x).root, commitTensor(run.y).root)),
    skeletonRoot: '0x' + toHex(skeletonRootOf(run.skeleton)),
    steps: run.program.steps,
    checkpointEvery: run.program.checkpointEvery,
    escrow: 1000n * UNIT,
    solverReward: 600n * UNIT,
    verifierReward: 100n * UNIT,
    verifierCount: 2,
    challengeWindow: 50,
    solveTimeout: 20
  })
  expect(r.error).toBeUndefined()
  h.advance(1)
  expect(h.read<{ solver: string }>('Arbitration', 'Tasks', 1)!.solver).toBe(h.accounts.Bob)
  const roots = honest(run).roots
  expect(h.run('Bob', 'Arbitration', 'commit_proof', { taskId: 1, proofRoot: '0x' + toHex(merkleRoot(roots.map(fromHex))), finalStateRoot: '0x' + roots[roots.length - 1], stepCount: run.program.steps, checkpoints: [] }).error).toBeUndefined()
  return 1
}

describe('a coalition task of solve_timeout 2^24 whose puppets dispute its last step', () => {
  it('an honest task of the same solver disputed afterwards is due within its program\'s cost, not 2^24 blocks per puppet dispute', async () => {
    // task 0: the coalition's, committed by Bob (any proof: it is never paid), its solve_timeout MaxTaskPeriod
    const h = await taskOnChain(run, honest(run))
    h.write('Arbitration', 'Tasks', 0, { ...h.read<Record<string, unknown>>('Arbitration', 'Tasks', 0)!, solveTimeout: MAX_TASK_PERIOD })
    const honestId = honestTask(h)
    // Ferdie, the solver's puppet, opens PUPPETS disputes at the coalition task's last step, a bond B each
    const flood: Array<[string, string, string, Record<string, unknown>]> = Array.from({ length: PUPPETS }, () =>
      ['Ferdie', 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: 4 }])
    expect(h.block(flood).results.every(r => r.error === undefined)).toBe(true)
    // Eve disputes the honest task at step 2 and forces the commit at once
    expect(h.run('Eve', 'Arbitration', 'open_dispute', { taskId: honestId, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: 2 }).error).toBeUndefined()
    const id = PUPPETS
    expect(dispute(h, id).taskId).toBe(BigInt(honestId))
    expect(h.run('Eve', 'Arbitration', 'force_move', { disputeId: id, theirs: '0x', mine: '0x' }).error).toBeUndefined()
    const f = dispute(h, id).force!
    // the bound, from the program's cost at the reference speed: each puppet's re-run of steps 0..4, then the honest one of steps 0..2
    const p = h.read<Params>('Arbitration', 'Params')!
    const flopsPerBlock = Number(p.referenceFlopsPerBlock)
    const cost = stepCostMicroblocks(programSize(validateProgram(run.program)), flopsPerBlock)
    const bound = PUPPETS * referenceRerunBlocks(5, cost, flopsPerBlock) + referenceRerunBlocks(3, cost, flopsPerBlock) + p.disputeClock
    expect({ cost, bound }).toEqual({ cost: 2440, bound: PUPPETS * 5 + 5 + 20 })
    // before: 255 · 2^24 blocks of queue, the due stopped at the last u32 block
    expect(f.due - f.at).toBeLessThanOrEqual(bound)
    // the puppets' disputes still hold their share: the honest re-run waits its turn, at the program's cost
    expect(f.due - f.at).toBeGreaterThan(PUPPETS * referenceRerunBlocks(5, cost, flopsPerBlock) - 2)
    // the dispute's deadline moved with the wait, no more
    expect(dispute(h, id).deadline - dispute(h, id).openedAt).toBeLessThan(bound + 8_000)
    // what submit_task stored for both tasks
    expect([0, 1].map(t => Number(h.read<bigint>('Arbitration', 'TaskStepCost', t)))).toEqual([cost, cost])
  }, 120_000)
})
