import { u8aToHex } from '@polkadot/util'
import { beforeAll, describe, expect, it } from 'vitest'
import type { TaskInfo, Verdict } from '../../devnet/chain/runtime/arbitration.js'
import { fromHex, merkleRoot, toHex } from '../../protocols/commit/merkle.js'
import { encodeClaim } from '../../protocols/dispute/index.js'
import { contextOn, honest, taskOf, taskOnChain, tamperOp, type Run } from '../unit/dispute/fixture.js'
import { dispute, tx, mlpRun } from './setup.js'
import { leavesOf, playSegment } from './segment-setup.js'

// A verifier that accepted a task with roots every m = 4 steps vouched for
// the SEGMENTS it listed (checked_steps = segment indices, docs/pallet-interface.md).
// When a dispute rules the solver wrong at step 2 (inside segment 0), the
// ruling used to slash the accept that listed segment 0 (by segment: the
// ruled step's own index would have missed it). A ruling is a fact about the
// defender's signed tape, which a solver with a correct proof can lose on
// purpose (test/adversarial/thrown-dispute.test.ts), so now no ruling slashes a
// verdict, at any m: both accepts keep their stake, and neither is paid (the
// task failed). The verdicts are written into the task as submit_verdict
// stores them (the task is posted by the fixture's m = 1 program;
// TaskRootEvery is written as submit_task writes it from a program naming m).

const M = 4
let run: Run

beforeAll(async () => { run = await mlpRun(4) }, 120_000)

describe('verdict slashing by segment', () => {
  it('a ruling at step 2 (inside segment 0) fails the task and slashes neither the accept of segment 0 nor that of segment 1', async () => {
    const cheat = tamperOp(run, 10)
    const h = await taskOnChain(run, cheat, { commit: false })
    h.write('Arbitration', 'TaskRootEvery', 0, M)
    const leaves = leavesOf(cheat.roots, run.program.steps, M)
    expect(h.run('Bob', 'Arbitration', 'commit_proof', { taskId: 0, proofRoot: '0x' + toHex(merkleRoot(leaves.map(fromHex))), finalStateRoot: '0x' + leaves[leaves.length - 1], stepCount: run.program.steps, checkpoints: [] }).error).toBeUndefined()
    // two accepts as submit_verdict stores them: Charlie checked segment 0, Eve listed segment 1 (step 5)
    const verdicts: Verdict[] = [
      { verifier: h.accounts.Charlie, accept: true, checkedSteps: [0], void: false },
      { verifier: h.accounts.Eve, accept: true, checkedSteps: [1], void: false }
    ]
    h.write('Arbitration', 'Tasks', 0, { ...taskOf(h), verdicts } satisfies TaskInfo)
    expect(h.run('Dave', 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: 0 }).error).toBeUndefined()
    const r = playSegment(run, cheat, honest(run), M, 0, { ctx: { ...contextOn(h, 0), segmented: true } })
    expect(r.by).toBe('challenger')
    expect(tx(h, 'Dave', 'adjudicate', { claim: u8aToHex(encodeClaim(r.claim)) })).toBeUndefined()
    expect(dispute(h).status).toBe('ChallengerWon')
    expect(taskOf(h).rulings.map(x => x.step)).toEqual([2])
    // no reveal comes: the solver is penalized at the reveal deadline, and the task fails
    const stakes = (): bigint[] => ['Charlie', 'Eve'].map(n => h.read<{ stake: bigint }>('Arbitration', 'Nodes', h.accounts[n])?.stake ?? 0n)
    const [before, free] = [stakes(), ['Charlie', 'Eve'].map(n => h.free(n))]
    const events: string[] = []
    for (let i = 0; i < 400 && taskOf(h).phase === 'Verifying'; i++) events.push(...h.advance(1))
    expect(taskOf(h).rulings[0].outcome).toBe('SolverPenalized')
    expect(taskOf(h).phase).toBe('Failed')
    expect(events).not.toContain('Arbitration.VerdictSlashed')
    expect(stakes()).toEqual(before)
    expect(['Charlie', 'Eve'].map(n => h.free(n))).toEqual(free)
  })
})
