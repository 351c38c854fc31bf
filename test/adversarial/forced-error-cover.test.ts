import { beforeAll, describe, expect, it } from 'vitest'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import { toHex } from '../../protocols/commit/merkle.js'
import { stateRoot } from '../../protocols/commit/state.js'
import { commitTensor, type TensorData } from '../../protocols/commit/tensor.js'
import { encodeExactness, forcedState, proveExactness } from '../../protocols/dispute/forced-exact.js'
import { buildInitClaim, encodeClaim, firstInitMismatch } from '../../protocols/dispute/index.js'
import { initialState } from '../../protocols/program/init.js'
import { newProgram } from '../../protocols/program/index.js'
import type { TapeEntry } from '../../protocols/tape/tape.js'
import { datasetRef, syntheticDataset } from '../../node/train/dataset.js'
import { Trainer } from '../../node/train/trainer.js'
import { u8aToHex } from '@polkadot/util'
import type { Harness } from '../unit/chain/harness.js'
import { drawOn, honest, honestRun, nodeOf, playDispute, taskOf, taskOnChain, tamperOp, type Side, forcedTask, type ForcedRun } from '../unit/dispute/fixture.js'
import { coverSide, exactnessOf, forcedSide, honestPost } from '../unit/dispute/forced-fixture.js'

// A solver whose private VRF draw ordered a forced error at step f uses it as
// cover: at f it also changes other state (a second element, a whole tensor —
// a backdoor), or an op. An honest challenger's bisection stops at the first
// difference, and before, the reveal excused every ruling at f, so the cover
// was accepted and the solver paid. Now the reveal must prove the committed
// post-state differs from the honest one in the forced element only. Each
// test fails if the attacker's cover is excused: it must be slashed, its task
// failed and its reward unpaid; the honest forced error is still excused.

const STAKE = 10_000n * UNIT
const REWARD = 600n * UNIT
const JACKPOT = 200n * UNIT
let forced: ForcedRun

beforeAll(async () => { forced = await forcedTask() }, 120_000)

const total = (h: Harness, n: string): bigint => h.free(n) + h.reserved(n)
const reveal = (h: Harness, exactness: string): string | undefined =>
  h.run('Bob', 'Arbitration', 'reveal_forced_error', { taskId: 0, vrfOutput: forced.output, vrfProof: forced.proof, exactness }).error
function settle (h: Harness): string[] {
  const ev: string[] = []
  for (let i = 0; i < 300 && taskOf(h).phase === 'Verifying'; i++) ev.push(...h.advance(1))
  expect(taskOf(h).phase).not.toBe('Verifying')
  return ev
}

/** A task where Bob committed `side`; Dave, its assigned verifier, rejects and disputes the forced step, Bob defending with tape `defends`. */
async function caught (side: Side, defends: Side = side): Promise<{ h: Harness, bob: bigint }> {
  const { run, step } = forced
  const h = await taskOnChain(run, side, { forcedErrorPpm: 1_000_000, verifierCount: 1, disputeClock: 400, challengeWindow: 200, verifiers: ['Dave'] })
  const bob = total(h, 'Bob')
  h.advance(1)
  expect(h.run('Dave', 'Arbitration', 'submit_verdict', { taskId: 0, accept: false, checkedSteps: [step] }).error).toBeUndefined()
  expect(h.run('Dave', 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: step }).error).toBeUndefined()
  const o = playDispute(h, run, defends, honest(run), { disputeId: 0, challengerName: 'Dave', disputedStep: step })
  expect(o.status).toBe('ChallengerWon')
  return { h, bob }
}

/** The attacker ends up behind: slashed, task failed, reward unpaid, the cover not accepted. */
function expectPenalized (h: Harness, bobBefore: bigint, ev: string[]): void {
  expect(ev).toContain('Arbitration.SolverPenalized')
  expect(taskOf(h).phase).toBe('Failed')
  expect(nodeOf(h, 'Bob').stake).toBe(STAKE / 2n)
  expect(total(h, 'Bob') - bobBefore).toBe(-STAKE / 2n)
  expect(ev).not.toContain('Arbitration.JackpotPaid')
}

const set = (t: TensorData, i: number, v: number): void => { t.values[i] = v }

describe('a forced error cannot cover another change at its step', () => {
  it('the honest forced error (exactly one element) is still excused: no slash, paid its reward less the jackpot', async () => {
    const side = forcedSide(forced.run)
    const { h, bob } = await caught(side)
    expect(taskOf(h).rulings.map(r => r.claimKind)).toEqual(['State'])
    expect(reveal(h, exactnessOf(forced.run, side))).toBeUndefined()
    const ev = settle(h)
    expect(ev).not.toContain('Arbitration.SolverPenalized')
    expect(taskOf(h).phase).toBe('Settled')
    expect(nodeOf(h, 'Bob').stake).toBe(STAKE)
    expect(total(h, 'Bob') - bob).toBe(REWARD - JACKPOT)
  })

  const covers: Array<[string, (post: TensorData[]) => TensorData[]]> = [
    ['a second element of tensor 0, next to the forced one', post => { set(post[0], 1, post[0].values[1] + 0.5); return post }],
    ['a second element of tensor 0, far from the forced one', post => { const n = post[0].values.length; set(post[0], n - 1, 3); return post }],
    ['one element of another tensor', post => { set(post[2], 0, post[2].values[0] - 1); return post }],
    ['a whole tensor (a backdoored layer)', post => post.map((t, k) => k === 2 ? { ...t, values: t.values.map((_, i) => (i % 7) / 7) } : t)],
    ['the forced element\'s value (v + 2, not |v| + 1)', post => { set(post[0], 0, honestPost(forced.run)[0].values[0] + 2); return post }]
  ]
  for (const [what, cover] of covers) {
    it(`also changing ${what}: the reveal is refused and the solver penalized`, async () => {
      const side = coverSide(forced.run, cover)
      const { h, bob } = await caught(side)
      // the tapes agree (the change is after the step): a state ruling, on the honest post-state
      expect(taskOf(h).rulings.map(r => [r.claimKind, r.honestPost])).toEqual([['State', '0x' + forced.run.roots[forced.step + 1]]])
      expect(reveal(h, exactnessOf(forced.run, side))).toBe('Arbitration.NotExactForcedError')
      // nor does the proof of the honest forced error (it is not this run's committed state)
      expect(reveal(h, exactnessOf(forced.run, forcedSide(forced.run)))).toBe('Arbitration.NotExactForcedError')
      expect(taskOf(h).revealedForcedError).toBeNull()
      expectPenalized(h, bob, settle(h))
    })
  }

  it('also corrupting an op of the step: the ruling is an element claim, which no reveal excuses', async () => {
    const { run } = forced
    const t = tamperOp(run, run.entries.findIndex(e => e.kernel === 'BatchMatMul'))
    const backdoor = t.values[t.values.length - 1].inputs
    const committed = forcedState(backdoor)
    const root = toHex(stateRoot(committed, run.step + 1))
    const side: Side = { ...t, roots: [...run.roots.slice(0, run.step + 1), root, ...run.roots.slice(run.step + 2).map(() => root)] }
    const { h, bob } = await caught(side)
    expect(taskOf(h).rulings.map(r => [r.claimKind, r.honestPost])).toEqual([['Element', null]])
    // a proof that its committed state is its own (corrupted) tape's post-state plus the forced element
    expect(reveal(h, u8aToHex(encodeExactness(proveExactness(backdoor, committed, run.step, side.roots))))).toBe('Arbitration.RulingNotExcusable')
    expectPenalized(h, bob, settle(h))
  })

  for (const second of ['the fake tape', 'its honest tape'] as const) {
    it(`a puppet's state ruling on a fake @state entry is excused, the honest challenger's (Bob signs ${second}) is not`, async () => {
      const { run, step } = forced
      const side = coverSide(run, post => post.map((t, k) => k === 2 ? { ...t, values: t.values.map(() => 0.25) } : t))
      // the fake @state: the committed post-state with the forced element restored, so the committed one is it plus exactly the forced element
      const fakePost = side.post.map((t, k) => k === 0 ? { ...t, values: t.values.map((v, i) => i === 0 ? honestPost(run)[0].values[0] : v) } : t)
      const last = run.entries.length - 1
      const entries: TapeEntry[] = run.entries.map(
        (e, i) => i !== last ? e : { ...e, inputs: e.inputs.map((x, k) => ({ ...x, commitment: toHex(commitTensor(fakePost[k]).root) })) }
      )
      const fake: Side = { entries, values: run.values.map((v, i) => i !== last ? v : { inputs: fakePost, outputs: [] }), roots: side.roots }
      const h = await taskOnChain(run, side, { forcedErrorPpm: 1_000_000, verifierCount: 1, disputeClock: 400, challengeWindow: 200, verifiers: ['Dave'] })
      const bob = total(h, 'Bob')
      // Ferdie, Bob's puppet, plays the fake tape too: the tapes agree, a state claim on the fake post-state
      expect(h.run('Ferdie', 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: step }).error).toBeUndefined()
      expect(playDispute(h, run, fake, fake, { disputeId: 0, challengerName: 'Ferdie', disputedStep: step }).status).toBe('ChallengerWon')
      expect(reveal(h, u8aToHex(encodeExactness(proveExactness(fakePost, side.post, step, side.roots))))).toBeUndefined()
      expect(taskOf(h).rulings.map(r => r.outcome)).toEqual(['ForcedError'])
      // Dave, honest, replays the step and disputes it
      expect(h.run('Dave', 'Arbitration', 'submit_verdict', { taskId: 0, accept: false, checkedSteps: [step] }).error).toBeUndefined()
      expect(h.run('Dave', 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: step }).error).toBeUndefined()
      expect(playDispute(h, run, second === 'the fake tape' ? fake : side, honest(run), { disputeId: 1, challengerName: 'Dave', disputedStep: step }).status).toBe('ChallengerWon')
      const daves = taskOf(h).rulings[1]
      expect(daves.outcome).toBe('AwaitingReveal') // not excused by the puppet's reveal
      if (second === 'the fake tape') {
        expect(daves.claimKind).toBe('Input') // the fake @state is not what the ops output
        expect(reveal(h, exactnessOf(run, side))).toBe('Arbitration.RulingNotExcusable')
      } else {
        expect([daves.claimKind, daves.honestPost]).toEqual(['State', '0x' + run.roots[step + 1]])
        expect(reveal(h, exactnessOf(run, side))).toBe('Arbitration.NotExactForcedError')
      }
      const ev = settle(h)
      expect(ev.filter(e => e === 'Arbitration.SolverPenalized')).toHaveLength(1)
      expect(taskOf(h).phase).toBe('Failed')
      expect(nodeOf(h, 'Bob').stake).toBe(STAKE / 2n)
      // the coalition loses: Bob's slash is not made up by Ferdie (no jackpot on a failed task)
      expect(total(h, 'Bob') - bob).toBe(-STAKE / 2n)
      expect(ev).not.toContain('Arbitration.JackpotPaid')
    })
  }

  it('an invented initial state when the forced step is 0: the init ruling is not excused', async () => {
    // one step: the draw can only order step 0
    const ds = syntheticDataset(7, 64, 8)
    const program = newProgram({ model: 'mlp', dataset: datasetRef(ds), steps: 1, optimizer: 'sgd', batchSize: 4, seed: 11, checkpointEvery: 1 })
    const run = await honestRun(program, ds, 0)
    const invented = initialState(program).map((t, i) => i === 1 ? { ...t, values: t.values.map(v => v + 0.5) } : t)
    const trainer = await Trainer.create(program, ds)
    trainer.loadState(invented, 0)
    const roots = [toHex(trainer.stateRoot())]
    trainer.runStep(); roots.push(toHex(trainer.stateRoot())); trainer.dispose()
    const h = await taskOnChain(run, { entries: run.entries, values: run.values, roots }, { forcedErrorPpm: 1_000_000, verifierCount: 1 })
    const draw = drawOn(h)
    expect(draw.step).toBe(0)
    const bob = total(h, 'Bob')
    expect(h.run('Dave', 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: 0 }).error).toBeUndefined()
    const init = buildInitClaim({ program: run.programBytes, stateRoots: roots.map(r => Uint8Array.from(Buffer.from(r, 'hex'))), state: invented, ...firstInitMismatch(program, invented)! })
    expect(h.run('Dave', 'Arbitration', 'adjudicate', { disputeId: 0, claim: u8aToHex(encodeClaim(init)) }).error).toBeUndefined()
    expect(taskOf(h).rulings.map(r => [r.claimKind, r.outcome])).toEqual([['Init', 'AwaitingReveal']])
    const exactness = u8aToHex(encodeExactness(proveExactness(invented, forcedState(invented), 0, roots)))
    expect(h.run('Bob', 'Arbitration', 'reveal_forced_error', { taskId: 0, vrfOutput: draw.output, vrfProof: draw.proof, exactness }).error).toBe('Arbitration.RulingNotExcusable')
    expectPenalized(h, bob, settle(h))
  })
})
