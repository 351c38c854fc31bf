import { cryptoWaitReady } from '@polkadot/util-crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { REVEAL_WINDOW } from '../../devnet/chain/runtime/spec.js'
import { sizeOf } from '../../protocols/commit/tensor.js'
import { decodeMsg, type Divergence } from '../../protocols/dispute/index.js'
import { STATE_PSEUDO_KERNEL } from '../../protocols/tape/tape.js'
import { harnessSample } from '../helpers/verdict-sample.js'
import type { Harness } from '../unit/chain/harness.js'
import { gamesFor, honest, playDispute, taskOf, taskOnChain, type Run } from '../unit/dispute/fixture.js'
import { dispute, mlpRun, worth } from './setup.js'

// A diverged proof names its divergence point (entry e, element f of step k's
// tape) in commit_diverged, and the chain cannot check it there (it knows
// neither the tape's length nor its shapes). The judge counts step k up to
// (e, f): entries before e are normal, past e the run has ended. A point that
// names no float32 element of an op's output — f past the output of entry e,
// e the @state entry, e past the tape's end — has no element "at f" for a
// claim to find without a NaN, so before these rules an honest tape of step k
// (no NaN anywhere) answered every claim: a solver could stop after k steps of
// its choosing, commit a bogus divergence point, be paid R·k/steps instead of
// being slashed for a missed deadline, and every honest verifier that rejected
// lost its dispute bond. Now such a point loses for the defender.

let clean: Run

beforeAll(async () => {
  await cryptoWaitReady()
  clean = await mlpRun()
}, 120_000)

const accept = (h: Harness, who: string, steps: number[]): string | undefined => h.run(who, 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: steps }).error
function settle (h: Harness): void {
  for (let i = 0; i < 400 && !['Settled', 'Failed', 'Unverified'].includes(taskOf(h).phase); i++) h.advance(1)
}

describe('a bogus divergence point on an honest tape loses for the solver', () => {
  const op = (): number => clean.entries.findIndex(e => e.kernel === '_FusedMatMul' || e.kernel === 'BatchMatMul')
  const stateEntry = (): number => clean.entries.findIndex(e => e.kernel === STATE_PSEUDO_KERNEL)
  const fakes: Array<[string, () => Divergence]> = [
    ['an element past the end of the entry\'s output', () => ({ entry: op(), flat: sizeOf(clean.entries[op()].outputs[0].shape) })],
    ['a far element (u32 max) of the entry\'s output', () => ({ entry: op(), flat: 0xffff_ffff })],
    ['the @state entry', () => ({ entry: stateEntry(), flat: 0 })],
    ['an entry past the tape\'s end', () => ({ entry: clean.entries.length + 7, flat: 0 })]
  ]
  for (const [name, point] of fakes) {
    it(name, async () => {
      const fake = point()
      const h = await taskOnChain(clean, honest(clean), { diverged: { stepCount: clean.step, ...fake }, verifiers: ['Dave', 'Eve'] })
      h.advance(2)
      const bob0 = worth(h, 'Bob'); const dave0 = worth(h, 'Dave'); const eve0 = worth(h, 'Eve')
      // a verifier that accepted the diverged step without replaying it
      expect(accept(h, 'Eve', [...harnessSample(h, 'Eve'), clean.step])).toBeUndefined()
      expect(h.run('Dave', 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: clean.step }).error).toBeUndefined()
      // the honest verifier replayed step k: the point names no NaN its run has
      const o = playDispute(h, clean, honest(clean), honest(clean), { disputeId: 0, challengerName: 'Dave', disputedStep: clean.step, nan: { divergence: fake } })
      expect(o.error).toBeUndefined()
      expect(dispute(h).status).toBe('ChallengerWon')
      h.advance(REVEAL_WINDOW + 1)
      settle(h)
      expect(taskOf(h).phase).toBe('Failed')
      // the solver is slashed and unpaid; the challenger gains; the blind accept earns nothing
      expect(worth(h, 'Bob')).toBeLessThan(bob0)
      expect(worth(h, 'Dave')).toBeGreaterThan(dave0)
      expect(worth(h, 'Eve')).toBe(eve0)
    })
  }

  it('a well-formed point is still claimed at its own element (f), not at another one', async () => {
    // an element of the first MatMul's output: in range, float32, before the @state entry
    const real: Divergence = { entry: op(), flat: 3 }
    const h = await taskOnChain(clean, honest(clean), { diverged: { stepCount: clean.step, ...real }, verifiers: ['Dave', 'Eve'] })
    expect(h.run('Dave', 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: clean.step }).error).toBeUndefined()
    const g = gamesFor(h, clean, honest(clean), honest(clean), { disputeId: 0, challengerName: 'Dave', disputedStep: clean.step, nan: { divergence: real } })
    const c = g.D.commit()
    // the point is well formed: the claim is the element one at (e, f), where the honest run has no NaN
    const step = g.C.onMessage(decodeMsg(c.m), c)
    expect(step).toHaveProperty('claim')
    expect((step as { claim: { kind: string, flat?: number } }).claim.kind).toBe('element')
    expect((step as { claim: { kind: string, flat?: number } }).claim.flat).toBe(3)
  })
})
