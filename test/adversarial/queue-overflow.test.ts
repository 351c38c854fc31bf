import { cryptoWaitReady } from '@polkadot/util-crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { harnessAssignments } from '../helpers/verdict-sample.js'
import { taskOf, taskOnChain, tamperOp, type Run } from '../unit/dispute/fixture.js'
import { mlpRun, worth } from './setup.js'

// A full dispute queue must not make a cheater undisputable. A dispute's
// re-run waits behind every earlier dispute against the same defender
// (TapeQueue, docs/disputes.md "Concurrent disputes"), each taking its task's
// tape allowance: up to solve_timeout = MaxTaskPeriod (2^24) blocks. A solver
// whose puppets open 255 disputes at the last step of a long task fill the
// queue to 2^32 − 2^24: before, the next open_dispute against it computed a
// queue end past the last u32 block and failed ('Other'), so an honest
// verifier that found its proof wrong could not back its reject and was left
// to lapse (−(B + R)) or accept the cheat, which was then paid. Now the queue
// and the deadlines derived from it stop at the last block: the dispute opens,
// the reject is backed, and the cheat is not paid (the task waits for the
// dispute). Since a re-run is priced at most at its program's cost at the
// reference speed (queue-stall.test.ts), only a program whose steps are that
// heavy fills the queue: this one's cost as much as its timeout admits.

let run: Run
beforeAll(async () => { await cryptoWaitReady(); run = await mlpRun() }, 120_000)

describe('a defender whose puppets fill its dispute queue', () => {
  it('an honest verifier can still dispute its wrong proof, and the cheat is not paid', async () => {
    const cheat = tamperOp(run, 10)
    const h = await taskOnChain(run, cheat, { verifiers: ['Dave', 'Eve'] })
    // the task as submit_task stores one of solve_timeout MaxTaskPeriod whose program's steps cost 2^24 / 10
    // blocks each at the reference speed (the heaviest that timeout admits for 5 steps): its re-runs are
    // priced at the submitter's pace, 2^24 blocks for steps 0..4, not less (TaskStepCost, millionths of a block)
    h.write('Arbitration', 'Tasks', 0, { ...taskOf(h), solveTimeout: 1 << 24 })
    h.write('Arbitration', 'TaskStepCost', 0, BigInt(1 << 24) * 100_000n)
    h.advance(2)
    expect(harnessAssignments(h)?.verifiers.map(v => v.verifier).sort()).toEqual([h.accounts.Dave, h.accounts.Eve].sort())
    const bob = worth(h, 'Bob')
    // Ferdie, the solver's puppet (a whistleblower), opens 255 disputes at the last step: 2^24 blocks of re-run each
    const flood: Array<[string, string, string, Record<string, unknown>]> = Array.from({ length: 255 }, () =>
      ['Ferdie', 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: 4 }])
    expect(h.block(flood).results.every(r => r.error === undefined)).toBe(true)
    // Dave replayed step 2, found it wrong: rejects and disputes it
    expect(h.run('Dave', 'Arbitration', 'submit_verdict', { taskId: 0, accept: false, checkedSteps: [] }).error).toBeUndefined()
    expect(h.run('Dave', 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: run.step }).error).toBeUndefined()
    expect(harnessAssignments(h)!.verifiers.find(v => v.verifier === h.accounts.Dave)!.backed).toBe(true)
    // Eve too, at the last step (its own re-run would pass the last block)
    expect(h.run('Eve', 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: 4 }).error).toBeUndefined()
    expect(h.read<number>('Arbitration', 'TapeQueue', h.accounts.Bob)).toBe(0xffff_ffff)
    h.advance(100)
    // the window is long over: the cheat is not paid while its disputes are open
    expect(taskOf(h).phase).toBe('Verifying')
    expect(worth(h, 'Bob')).toBe(bob)
  }, 120_000)
})
