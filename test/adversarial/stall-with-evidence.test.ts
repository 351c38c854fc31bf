import { beforeAll, describe, expect, it } from 'vitest'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import { gamesFor, honest, taskOf, taskOnChain, type Run } from '../unit/dispute/fixture.js'
import { assignedNames, harnessAssignments } from '../helpers/verdict-sample.js'
import { BOND, dispute, force, mlpRun, tx, until, worth } from './setup.js'

// A submitter gains from its task ending Unverified: the escrow comes back
// and the solver's work is published. Its puppet, drawn as the verifier,
// rejects and backs the reject with a dispute it then loses: before, that
// released the puppet with no penalty beyond the dispute bond B, and with no
// other verifier to draw the task ended Unverified after one failed slot, so
// the coalition paid B instead of the reward R. Each test fails if the
// coalition ends better off than by honest play.

const R = 600n * UNIT // taskOnChain's solver reward (verifier reward V = 100)
let run: Run
beforeAll(async () => { run = await mlpRun() }, 120_000)

describe('a submitter\'s puppet stalls with evidence it knows will fail', () => {
  it('a reject backed by a dispute the puppet loses costs more than the reward the stall withholds, even with no verifier left to draw', async () => {
    // Dave is the only verifier (Eve and Ferdie are whistleblowers only): the pool is as thin as it gets
    const h = await taskOnChain(run, honest(run), { verifierCount: 1, verifiers: ['Dave'] })
    const coalition = (): bigint => worth(h, 'Alice') + worth(h, 'Dave')
    const start = coalition()
    const bob = worth(h, 'Bob')
    for (let i = 0; i < 10 && !assignedNames(h).includes('Dave'); i++) h.advance(1)
    expect(assignedNames(h)).toEqual(['Dave'])
    // the puppet rejects, opens a dispute of the honest proof, and never plays it
    expect(h.run('Dave', 'Arbitration', 'submit_verdict', { taskId: 0, accept: false, checkedSteps: [] }).error).toBeUndefined()
    expect(h.run('Dave', 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: run.step }).error).toBeUndefined()
    expect(harnessAssignments(h)!.verifiers[0].backed).toBe(true)
    const g = gamesFor(h, run, honest(run), honest(run), { disputeId: 0, challengerName: 'Dave', disputedStep: run.step })
    expect(force(h, 'Bob', undefined, g.D.commit())).toBeUndefined()
    until(h, dispute(h).force!.due + 1)
    expect(tx(h, 'Eve', 'claim_timeout')).toBeUndefined()
    expect(dispute(h).status).toBe('DefenderWon')
    const ev: string[] = []
    for (let i = 0; i < 400 && taskOf(h).phase === 'Verifying'; i++) ev.push(...h.advance(1))
    expect(ev).toContain('Arbitration.AssignmentLapsed')
    expect(harnessAssignments(h)!.verifiers.find(v => v.verifier === h.accounts.Dave)!.status).toBe('Lapsed')
    // honest play: the submitter pays R + V and its puppet earns V back: the coalition is down R
    const stalled = coalition() - start
    expect(stalled).toBeLessThan(-R)
    // the honest solver is not slashed; it gets half the lost bond
    expect(worth(h, 'Bob') - bob).toBe(BOND / 2n)
  }, 120_000)
})
