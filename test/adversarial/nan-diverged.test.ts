import { cryptoWaitReady } from '@polkadot/util-crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import { REVEAL_WINDOW } from '../../devnet/chain/runtime/spec.js'
import { fromHex, merkleRoot, toHex } from '../../protocols/commit/merkle.js'
import { decodeMsg, type Divergence } from '../../protocols/dispute/index.js'
import { STATE_PSEUDO_KERNEL } from '../../protocols/tape/tape.js'
import { harnessSample } from '../helpers/verdict-sample.js'
import type { Harness } from '../unit/chain/harness.js'
import { gamesFor, honest, playDispute, tamperOp, taskOf, taskOnChain, type Run, type Side } from '../unit/dispute/fixture.js'
import { dispute, mlpRun, nanRun, worth } from './setup.js'

// Diverged proofs (commit_diverged): a run whose training produced a NaN ends
// at its first NaN op output (entry e, element f of step k's tape); the
// solver commits states 0..k and (e, f) and is paid solver_reward × k / steps.
// Attacks: a solver faking an early divergence to be paid without the work
// (it must lose, and every accept that vouched for step k with it), a
// challenger disputing an honest divergence (it must lose its bond).

let bad: Awaited<ReturnType<typeof nanRun>>
let clean: Run
const REWARD = 600n * UNIT; const VREWARD = 100n * UNIT; const ESCROW = 1000n * UNIT

beforeAll(async () => {
  await cryptoWaitReady()
  bad = await nanRun()
  clean = await mlpRun()
}, 120_000)

/** Dave and Eve are the task's verifiers (the chain draws both: verifier_count 2), Ferdie only whistleblows. */
const divergedAt = (stepCount: number, d: Divergence): { diverged: { stepCount: number, entry: number, flat: number }, verifiers: string[] } => ({ diverged: { stepCount, ...d }, verifiers: ['Dave', 'Eve'] })
const accept = (h: Harness, who: string, steps: number[]): string | undefined => h.run(who, 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: steps }).error
/** Runs blocks until task 0 is settled (or failed); bounded. */
function settle (h: Harness): void {
  for (let i = 0; i < 400 && !['Settled', 'Failed', 'Unverified'].includes(taskOf(h).phase); i++) h.advance(1)
}

describe('an honest diverged proof', () => {
  it('stands, and pays the solver reward × k / steps, the verifiers as usual, the rest back to the submitter', async () => {
    const h = await taskOnChain(bad.run, honest(bad.run), divergedAt(bad.k, bad.first))
    expect(taskOf(h).divergence).toEqual(bad.first)
    expect(taskOf(h).stepCount).toBe(bad.k)
    h.advance(2)
    const w0 = { alice: worth(h, 'Alice'), bob: worth(h, 'Bob'), dave: worth(h, 'Dave'), eve: worth(h, 'Eve') }
    for (const v of ['Dave', 'Eve']) {
      // every accept vouches for the diverged step
      expect(accept(h, v, harnessSample(h, v))).toBe('Arbitration.DivergenceNotChecked')
      expect(accept(h, v, [...harnessSample(h, v), bad.k])).toBeUndefined()
    }
    const events: string[] = []
    for (let i = 0; i < 400 && taskOf(h).phase === 'Verifying'; i++) events.push(...h.advance(1))
    expect(taskOf(h).phase).toBe('Settled')
    expect(events).toContain('Arbitration.TaskDiverged')
    const paid = REWARD * BigInt(bad.k) / BigInt(bad.program.steps)
    expect(worth(h, 'Bob') - w0.bob).toBe(paid)
    expect(worth(h, 'Dave') - w0.dave).toBe(VREWARD)
    expect(worth(h, 'Eve') - w0.eve).toBe(VREWARD)
    // and the capacity rent of the verifier stake its task held (docs/economics.md, "Capacity griefing")
    expect(w0.alice - worth(h, 'Alice')).toBe(paid + 2n * VREWARD + h.rentPaid('Alice'))
    expect(h.reserved('Alice')).toBe(0n)
    expect(paid).toBeLessThan(ESCROW)
  })

  it('a short proof needs a divergence point, and a divergence point a short proof', async () => {
    const h = await taskOnChain(bad.run, honest(bad.run), { commit: false })
    const roots = bad.run.roots.slice(0, bad.k + 1)
    const args = { taskId: 0, proofRoot: '0x' + toHex(merkleRoot(roots.map(fromHex))), finalStateRoot: '0x' + roots[bad.k], checkpoints: [] }
    expect(h.run('Bob', 'Arbitration', 'commit_proof', { ...args, stepCount: bad.k }).error).toBe('Arbitration.IncompleteProof')
    expect(h.run('Bob', 'Arbitration', 'commit_diverged', { ...args, stepCount: bad.program.steps, ...bad.first }).error).toBe('Arbitration.NotDiverged')
    expect(h.run('Eve', 'Arbitration', 'commit_diverged', { ...args, stepCount: bad.k, ...bad.first }).error).toBe('Arbitration.NotSelectedSolver')
    expect(h.run('Bob', 'Arbitration', 'commit_diverged', { ...args, stepCount: bad.k, ...bad.first }).error).toBeUndefined()
    expect(taskOf(h).phase).toBe('Verifying')
  })
})

describe('disputing an honest divergence loses the challenger its bond', () => {
  async function openedAtK (): Promise<Harness> {
    const h = await taskOnChain(bad.run, honest(bad.run), divergedAt(bad.k, bad.first))
    expect(h.run('Dave', 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: bad.k }).error).toBeUndefined()
    return h
  }
  const laterNan = (): Divergence => {
    for (let j = bad.first.entry + 1; j < bad.run.values.length; j++) {
      const o = bad.run.values[j].outputs[0]
      const f = o === undefined ? -1 : (o.values as Float32Array).findIndex(v => Number.isNaN(v))
      if (f >= 0) return { entry: j, flat: f }
    }
    throw new Error('no NaN after the divergence point')
  }
  const lastOp = (): number => bad.run.entries.findLastIndex(e => e.kernel !== STATE_PSEUDO_KERNEL)

  it('the honest challenger finds nothing to claim', async () => {
    const h = await openedAtK()
    const g = gamesFor(h, bad.run, honest(bad.run), honest(bad.run), { disputeId: 0, challengerName: 'Dave', disputedStep: bad.k, nan: { firstNan: bad.first, divergence: bad.first } })
    const c = g.D.commit()
    expect(g.C.onMessage(decodeMsg(c.m), c)).toHaveProperty('fail')
  })

  const attacks: Array<[string, () => { firstNan?: Divergence, divergence?: Divergence }]> = [
    ['a nan claim on the divergence point\'s NaN', () => ({ firstNan: bad.first })],
    ['a nan claim on a NaN past the divergence point', () => ({ firstNan: laterNan() })],
    ['an element claim at the divergence entry, past its first NaN', () => ({ divergence: { entry: bad.first.entry, flat: bad.first.flat + 1 } })],
    ['an element claim at an entry past the divergence point', () => ({ divergence: { entry: lastOp(), flat: 0 } })],
    ['a state claim (the diverged step has no post-state)', () => ({})]
  ]
  for (const [name, nan] of attacks) {
    it(name, async () => {
      const h = await openedAtK()
      const before = worth(h, 'Dave')
      const o = playDispute(h, bad.run, honest(bad.run), honest(bad.run), { disputeId: 0, challengerName: 'Dave', disputedStep: bad.k, nan: nan() })
      expect(o.error).toBeUndefined()
      expect(o.status).toBe('DefenderWon')
      expect(worth(h, 'Dave')).toBeLessThan(before)
    })
  }

  it('a solver naming a later divergence point than its run\'s first NaN loses: the challenger points at the earlier NaN', async () => {
    const later = laterNan()
    const h = await taskOnChain(bad.run, honest(bad.run), divergedAt(bad.k, later))
    expect(h.run('Dave', 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: bad.k }).error).toBeUndefined()
    const o = playDispute(h, bad.run, honest(bad.run), honest(bad.run), { disputeId: 0, challengerName: 'Dave', disputedStep: bad.k, nan: { firstNan: bad.first, divergence: later } })
    expect(o.error).toBeUndefined()
    expect(o.claim?.kind).toBe('nan')
    expect(o.status).toBe('ChallengerWon')
  })

  it('a step past the diverged one cannot be disputed', async () => {
    const h = await taskOnChain(bad.run, honest(bad.run), divergedAt(bad.k, bad.first))
    expect(h.run('Dave', 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: bad.k + 1 }).error).toBe('Arbitration.InvalidStep')
  })
})

describe('a solver faking an early divergence to be paid without the work loses', () => {
  const op = (): number => clean.entries.findIndex(e => e.kernel === '_FusedMatMul' || e.kernel === 'BatchMatMul')
  const fakes: Array<[string, () => Side]> = [
    ['with an honest tape of the step it claims diverged', () => honest(clean)],
    ['with a tape that shows a made-up NaN there', () => tamperOp(clean, op(), 0, undefined, Number.NaN)]
  ]
  for (const [name, side] of fakes) {
    it(name, async () => {
      const fake: Divergence = { entry: op(), flat: 0 }
      const defender = side()
      const h = await taskOnChain(clean, defender, divergedAt(clean.step, fake))
      h.advance(2)
      const bob0 = worth(h, 'Bob'); const eve0 = worth(h, 'Eve')
      // a verifier that accepted the diverged step without replaying it
      expect(accept(h, 'Eve', [...harnessSample(h, 'Eve'), clean.step])).toBeUndefined()
      expect(h.run('Dave', 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: clean.step }).error).toBeUndefined()
      // the honest verifier replayed step k: no NaN there
      const o = playDispute(h, clean, defender, honest(clean), { disputeId: 0, challengerName: 'Dave', disputedStep: clean.step, nan: { divergence: fake } })
      expect(o.error).toBeUndefined()
      expect(dispute(h).status).toBe('ChallengerWon')
      h.advance(REVEAL_WINDOW + 1)
      settle(h)
      expect(taskOf(h).phase).toBe('Failed')
      // the faker is slashed and unpaid: less than nothing for the steps it skipped
      expect(worth(h, 'Bob')).toBeLessThan(bob0)
      // the accept that listed step k earns nothing (a ruling slashes no verdict: docs/economics.md "Thrown disputes")
      expect(worth(h, 'Eve')).toBe(eve0)
    })
  }
})
