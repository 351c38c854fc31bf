import { cryptoWaitReady } from '@polkadot/util-crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import { honest, nodeOf, playDispute, taskOf, taskOnChain, tamperOp, type Run } from '../unit/dispute/fixture.js'
import { mlpRun, worth } from './setup.js'

// A dispute the defender throws. Every claim but `init` (and `nan` on a
// committed state) is a fact about the defender's signed tape of the step,
// which the defender writes: a solver that committed a correct proof can sign
// a tape with one wrong op output in the game and lose an `element` claim at
// will. The chain cannot tell that from a real cheat. Before, a ruling slashed
// every accept that listed the step a fifth of its stake, half to the
// challenger: a coalition of a minimum-stake puppet solver and a puppet
// challenger, disputing a correct proof at a step two honest 10,000-stake
// verifiers had replayed and accepted, lost the solver's 500 (250 of it back
// to the puppet) and took 2 × 1,000 of the verifiers' slashes: +1,750, the
// honest verifiers −2,000 each. Now a dispute ruling slashes the solver and no
// verdict (its accepts do not stand: the task failed); the coalition loses.

const V = 100n * UNIT
let run: Run
beforeAll(async () => {
  await cryptoWaitReady()
  run = await mlpRun()
}, 120_000)

describe('a puppet solver throws the dispute of its own correct proof', () => {
  it('the honest accepts of the disputed step are not slashed, and the coalition does not profit', async () => {
    // the solver's proof is honest; in the game it signs a tape with op 10's output changed, and the state roots it committed
    const thrown = { ...tamperOp(run, 10), roots: run.roots }
    const h = await taskOnChain(run, honest(run), { verifiers: ['Dave', 'Eve'], solverStake: 1000n * UNIT })
    h.advance(2)
    const all = Array.from({ length: run.program.steps }, (_, i) => i)
    // Dave and Eve replayed the correct proof and accept it
    for (const v of ['Dave', 'Eve']) expect(h.run(v, 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: all }).error).toBeUndefined()
    const stakes = (): bigint[] => [nodeOf(h, 'Dave').stake, nodeOf(h, 'Eve').stake]
    const before = stakes()
    // the coalition: Alice (submitter), Bob (solver), Ferdie (a whistleblower, the challenger)
    const coalition = (): bigint => worth(h, 'Alice') + worth(h, 'Bob') + worth(h, 'Ferdie')
    const start = coalition()
    expect(h.run('Ferdie', 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: run.step }).error).toBeUndefined()
    const o = playDispute(h, run, thrown, honest(run), { disputeId: 0, challengerName: 'Ferdie', disputedStep: run.step })
    expect(o.status).toBe('ChallengerWon')
    // no forced-error reveal: the solver is penalized at the reveal deadline, and the task fails
    for (let i = 0; i < 400 && taskOf(h).phase === 'Verifying'; i++) h.advance(1)
    expect(taskOf(h).phase).toBe('Failed')
    expect(taskOf(h).rulings[0].outcome).toBe('SolverPenalized')
    // the honest verifiers vouched for a correct step: nothing of their stake is taken
    expect(stakes()).toEqual(before)
    // honest play costs the coalition the verifiers' rewards (Alice pays R + 2V, Bob earns R); the attack more
    const gained = coalition() - start
    expect(gained).toBeLessThan(-2n * V)
  }, 120_000)
})
