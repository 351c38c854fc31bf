import { beforeEach, describe, expect, it } from 'vitest'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import { TREASURY } from '../../devnet/chain/runtime/balances.js'
import type { DrawRequest } from '../../devnet/chain/runtime/draw-reveal.js'
import { REVEAL_WINDOW } from '../../devnet/chain/runtime/spec.js'
import { VERIFIED_REWARD, VERIFIED_WINDOW, verifiedTask } from '../helpers/verified-task.js'
import type { Harness } from '../unit/chain/harness.js'
import { drawArgs, drawOn, taskOf } from '../unit/dispute/fixture.js'

// A solver whose private draw ordered a forced error at step f commits the
// honest state there instead (it omits the forced error). Nothing on chain
// saw the draw, so it looked like a solver drawn nothing and kept the whole
// reward, where one whose forced error was caught paid the jackpot J' out of
// it: omitting gained it J' times the chance of being caught, at no risk, and
// tested no verifier. Now the solver reveals its draw at settlement and pays
// J' whenever it was drawn, caught or not; an unrevealed draw counts as one.
// Each test fails if a drawn solver is paid more than R − J'.

const REWARD = VERIFIED_REWARD
const JACKPOT = 200n * UNIT
const WINDOW = VERIFIED_WINDOW

const total = (h: Harness, n: string): bigint => h.free(n) + h.reserved(n)
/** The treasury's balance less the capacity rent the submitter paid into it so far. */
const treasuryLessRent = (h: Harness): bigint => h.free(TREASURY) - h.rentPaid('Alice')
const revealDraw = (h: Harness, signer = 'Bob', who = 'Bob'): string | undefined => {
  const d = drawOn(h, signer)
  return h.run(who, 'Arbitration', 'reveal_draw', { taskId: 0, ...drawArgs(d) }).error
}
const request = (h: Harness): DrawRequest | undefined => h.read<DrawRequest>('Arbitration', 'DrawRequests', 0)
/** Blocks until the challenge window has closed and the chain asks for the draw (or settles). */
function untilDrawRequested (h: Harness): string[] {
  const ev: string[] = []
  for (let i = 0; i < 3 * WINDOW && taskOf(h).phase === 'Verifying' && request(h) === undefined; i++) ev.push(...h.advance(1))
  return ev
}
function settle (h: Harness): string[] {
  const ev: string[] = []
  for (let i = 0; i < 3 * WINDOW && taskOf(h).phase === 'Verifying'; i++) ev.push(...h.advance(1))
  expect(taskOf(h).phase).toBe('Settled')
  return ev
}

describe('a solver drawn a forced error pays the jackpot whether or not it commits it', () => {
  let h: Harness
  let bob: bigint
  let treasury: bigint
  beforeEach(async () => {
    h = await verifiedTask(1_000_000)
    // at ppm = 1e6 every draw orders a forced error
    expect(drawOn(h).step).not.toBeNull()
    bob = total(h, 'Bob')
    treasury = treasuryLessRent(h)
  })

  it('omitting it (nobody can catch it) and revealing the draw at settlement: paid R − J\', the jackpot to the treasury', () => {
    const ev = untilDrawRequested(h)
    expect(ev).toContain('Arbitration.DrawRequested')
    expect(ev).not.toContain('Arbitration.TaskSettled')
    expect(revealDraw(h)).toBeUndefined()
    expect(request(h)).toMatchObject({ revealed: true, forcedStep: drawOn(h).step })
    const after = settle(h)
    expect(after).toContain('Arbitration.JackpotForfeited')
    // before: R, a gain of J' over the solver whose forced error was caught (R − J', forced-error-cover.test.ts)
    expect(total(h, 'Bob') - bob).toBe(REWARD - JACKPOT)
    expect(treasuryLessRent(h) - treasury).toBe(JACKPOT)
    expect(request(h)).toBeUndefined()
  })

  it('not revealing the draw costs the same J\' as a drawn one: the task settles after the window', () => {
    untilDrawRequested(h)
    const deadline = request(h)!.deadline
    expect(deadline).toBe(h.number + REVEAL_WINDOW)
    const ev = settle(h)
    expect(h.number).toBeGreaterThan(deadline)
    expect(ev).toContain('Arbitration.JackpotForfeited')
    expect(total(h, 'Bob') - bob).toBe(REWARD - JACKPOT)
    expect(treasuryLessRent(h) - treasury).toBe(JACKPOT)
    // too late now
    expect(revealDraw(h)).toBe('Arbitration.DrawNotRequested')
  })

  it('the draw cannot be revealed during the challenge window (a verifier still to come must not learn f), by anybody else, or with another key\'s VRF', () => {
    expect(revealDraw(h)).toBe('Arbitration.DrawNotRequested')
    h.advance(WINDOW - 5)
    expect(taskOf(h).phase).toBe('Verifying')
    expect(revealDraw(h)).toBe('Arbitration.DrawNotRequested')
    untilDrawRequested(h)
    expect(revealDraw(h, 'Bob', 'Dave')).toBe('Arbitration.NotSelectedSolver')
    expect(revealDraw(h, 'Dave', 'Bob')).toBe('Arbitration.InvalidVrfProof')
    expect(revealDraw(h)).toBeUndefined()
    expect(revealDraw(h)).toBe('Arbitration.DrawNotRequested')
  })
})

describe('a solver whose draw ordered nothing, and chains without forced errors', () => {
  it('a draw of no forced error, revealed at settlement: paid R in full', async () => {
    // at 1 ppm this task's draw orders nothing
    const h = await verifiedTask(1)
    expect(drawOn(h).step).toBeNull()
    const [bob, treasury] = [total(h, 'Bob'), treasuryLessRent(h)]
    expect(untilDrawRequested(h)).toContain('Arbitration.DrawRequested')
    expect(revealDraw(h)).toBeUndefined()
    const ev = settle(h)
    expect(ev).not.toContain('Arbitration.JackpotForfeited')
    expect(total(h, 'Bob') - bob).toBe(REWARD)
    expect(treasuryLessRent(h)).toBe(treasury)
  })

  it('forced_error_ppm = 0: no draw is asked for, the task settles at the window\'s end and pays R', async () => {
    const h = await verifiedTask(0)
    const bob = total(h, 'Bob')
    const ev = settle(h)
    expect(ev).not.toContain('Arbitration.DrawRequested')
    expect(total(h, 'Bob') - bob).toBe(REWARD)
  })
})

describe('a diverged proof', () => {
  it('owes the jackpot for a drawn step it committed, not for one past its end', async () => {
    for (const past of [true, false]) {
      // Bob's run diverged at k: right at his drawn step f (f not committed) or just after it
      const h = await verifiedTask(1_000_000, { divergedAt: h => drawOn(h).step! + (past ? 0 : 1) })
      const k = taskOf(h).stepCount
      const bob = total(h, 'Bob')
      untilDrawRequested(h)
      expect(revealDraw(h)).toBeUndefined()
      const ev = settle(h)
      const earned = REWARD * BigInt(k) / 100n
      const owed = past ? 0n : (JACKPOT < earned ? JACKPOT : earned)
      expect(ev.includes('Arbitration.JackpotForfeited')).toBe(!past)
      expect(total(h, 'Bob') - bob).toBe(earned - owed)
    }
  })
})
