import { beforeAll, describe, expect, it } from 'vitest'
import { honest, nodeOf, taskOf, type Run } from '../unit/dispute/fixture.js'
import { BOND, dispute, force, mlpRun, opened, tx, until, worth } from './setup.js'

// Cheap timeouts: a timeout used to slash the loser at once with the winner
// taking a quarter of its stake, which dwarfs a 100-unit bond, so disputing
// honest solvers en masse and hoping for a brief outage paid. Now a griefer
// that wins only by an honest solver's silence gains at most the bond it
// risked, and loses that bond whenever the solver answers: for any outage
// probability below one half the griefing loses money. The test fails if the
// outage pays the griefer more than its bond.

let run: Run
beforeAll(async () => { run = await mlpRun() }, 120_000)

describe('a griefer hoping for an honest solver\'s outage', () => {
  it('wins at most its bond when the solver is offline through the whole response window', async () => {
    const { h } = await opened(run, honest(run))
    const dave = worth(h, 'Dave')
    // the griefer demands the commit; the honest solver is offline and does not answer in time
    expect(force(h, 'Dave', undefined, undefined)).toBeUndefined()
    until(h, dispute(h).force!.due)
    h.advance(1)
    expect(tx(h, 'Eve', 'claim_timeout')).toBeUndefined()
    expect(dispute(h).status).toBe('ChallengerWon')
    const gain = worth(h, 'Dave') - dave
    expect(gain).toBeGreaterThan(0n)
    expect(gain).toBeLessThanOrEqual(BOND)
    // silence is not cheaper than a lost claim for a cheater: the solver still loses half its stake (to the treasury)
    expect(taskOf(h).solverFailed).toBe(true)
    expect(nodeOf(h, 'Bob').stake).toBeLessThan(10_000n * 10n ** 12n)
    // against an online solver the same griefer loses BOND (griefer.test.ts): E = o·gain − (1 − o)·BOND < 0 for o < 1/2
    const o = 0.4
    expect(o * Number(gain) - (1 - o) * Number(BOND)).toBeLessThan(0)
  }, 60_000)
})
