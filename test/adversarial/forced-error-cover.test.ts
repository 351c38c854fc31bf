import { beforeAll, describe, expect, it } from 'vitest'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import { fromHex, toHex } from '../../protocols/commit/merkle.js'
import { stateRoot } from '../../protocols/commit/state.js'
import { commitTensor, type TensorData } from '../../protocols/commit/tensor.js'
import { forcedLeaf } from '../../protocols/dispute/forced-leaf.js'
import { buildInitClaim, encodeClaim, firstInitMismatch } from '../../protocols/dispute/index.js'
import { initialState } from '../../protocols/program/init.js'
import { newProgram } from '../../protocols/program/index.js'
import type { TapeEntry } from '../../protocols/tape/tape.js'
import { datasetRef, syntheticDataset } from '../../node/train/dataset.js'
import { Trainer } from '../../node/train/trainer.js'
import { u8aToHex } from '@polkadot/util'
import type { Harness } from '../unit/chain/harness.js'
import { advanceRevealing, drawOn, honest, honestRun, nodeOf, playDispute, taskOf, taskOnChain, tamperOp, type Side, forcedTask, type ForcedRun } from '../unit/dispute/fixture.js'
import { coverSide, revealOf, forcedSide } from '../unit/dispute/forced-fixture.js'

// A solver whose private VRF draw ordered a forced error at step f uses it as
// cover: at f it changes the state (an element, a whole tensor — a backdoor),
// or an op, marks the changed state's leaf and continues from it. An honest
// challenger's bisection stops at the first difference; the reveal must prove
// the committed leaf is the forced mark of the HONEST post-state (the one the
// defender's signed @state entry hashes to). Each test fails if the
// attacker's cover is excused: it must be slashed, its task failed and its
// reward unpaid; the honest forced error is still excused.

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
  for (let i = 0; i < 300 && taskOf(h).phase === 'Verifying'; i++) ev.push(...advanceRevealing(h))
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
  it('the honest forced error (the honest state, its leaf marked) is still excused: no slash, paid its reward less the jackpot', async () => {
    const side = forcedSide(forced.run)
    const { h, bob } = await caught(side)
    expect(taskOf(h).rulings.map(r => r.claimKind)).toEqual(['State'])
    expect(reveal(h, revealOf(forced.run, side))).toBeUndefined()
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
    ['element 0 of tensor 0 to |v| + 1 (what a forced error used to commit)', post => { set(post[0], 0, Math.fround(Math.abs(post[0].values[0]) + 1)); return post }]
  ]
  for (const [what, cover] of covers) {
    it(`changing ${what}: the reveal is refused and the solver penalized`, async () => {
      const side = coverSide(forced.run, cover)
      const { h, bob } = await caught(side)
      // the tapes agree (the change is after the step): a state ruling, on the honest post-state
      expect(taskOf(h).rulings.map(r => [r.claimKind, r.honestPost])).toEqual([['State', '0x' + forced.run.roots[forced.step + 1]]])
      expect(reveal(h, revealOf(forced.run, side))).toBe('Arbitration.NotExactForcedError')
      // nor does the proof of the honest forced error (it is not this run's committed leaf)
      expect(reveal(h, revealOf(forced.run, forcedSide(forced.run)))).toBe('Arbitration.NotExactForcedError')
      expect(taskOf(h).revealedForcedError).toBeNull()
      expectPenalized(h, bob, settle(h))
    })
  }

  it('also corrupting an op of the step: the ruling is an element claim, which no reveal excuses', async () => {
    const { run } = forced
    const t = tamperOp(run, run.entries.findIndex(e => e.kernel === 'BatchMatMul'))
    const backdoor = t.values[t.values.length - 1].inputs
    const root = toHex(stateRoot(backdoor, run.step + 1))
    const marked = toHex(forcedLeaf(fromHex(root)))
    const side: Side = { ...t, roots: [...run.roots.slice(0, run.step + 1), marked, ...run.roots.slice(run.step + 2).map(() => root)] }
    const { h, bob } = await caught(side)
    expect(taskOf(h).rulings.map(r => [r.claimKind, r.honestPost])).toEqual([['Element', null]])
    // a proof that its committed leaf is the mark of its own (corrupted) tape's post-state
    expect(reveal(h, revealOf(run, side))).toBe('Arbitration.RulingNotExcusable')
    expectPenalized(h, bob, settle(h))
  })

  for (const second of ['the fake tape', 'its honest tape'] as const) {
    it(`a puppet's state ruling on a fake @state entry is excused, the honest challenger's (Bob signs ${second}) is not`, async () => {
      const { run, step } = forced
      const side = coverSide(run, post => post.map((t, k) => k === 2 ? { ...t, values: t.values.map(() => 0.25) } : t))
      // the fake @state: the backdoored post-state, whose mark is the committed leaf
      const fakePost = side.post
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
      expect(reveal(h, revealOf(run, side))).toBeUndefined()
      expect(taskOf(h).rulings.map(r => r.outcome)).toEqual(['ForcedError'])
      // Dave, honest, replays the step and disputes it
      expect(h.run('Dave', 'Arbitration', 'submit_verdict', { taskId: 0, accept: false, checkedSteps: [step] }).error).toBeUndefined()
      expect(h.run('Dave', 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: step }).error).toBeUndefined()
      expect(playDispute(h, run, second === 'the fake tape' ? fake : side, honest(run), { disputeId: 1, challengerName: 'Dave', disputedStep: step }).status).toBe('ChallengerWon')
      const daves = taskOf(h).rulings[1]
      expect(daves.outcome).toBe('AwaitingReveal') // not excused by the puppet's reveal
      if (second === 'the fake tape') {
        expect(daves.claimKind).toBe('Input') // the fake @state is not what the ops output
        expect(reveal(h, revealOf(run, side))).toBe('Arbitration.RulingNotExcusable')
      } else {
        expect([daves.claimKind, daves.honestPost]).toEqual(['State', '0x' + run.roots[step + 1]])
        expect(reveal(h, revealOf(run, side))).toBe('Arbitration.NotExactForcedError')
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
    // two steps, a checkpoint at 2: the draw can only mark state 1 (step 0)
    const ds = syntheticDataset(7, 64, 8)
    const program = newProgram({ model: 'mlp', dataset: datasetRef(ds), steps: 2, optimizer: 'sgd', batchSize: 4, seed: 11, checkpointEvery: 2 })
    const run = await honestRun(program, ds, 0)
    const invented = initialState(program).map((t, i) => i === 1 ? { ...t, values: t.values.map(v => v + 0.5) } : t)
    const trainer = await Trainer.create(program, ds)
    trainer.loadState(invented, 0)
    const roots = [toHex(trainer.stateRoot())]
    trainer.runStep(); roots.push(toHex(forcedLeaf(trainer.stateRoot())))
    trainer.runStep(); roots.push(toHex(trainer.stateRoot())); trainer.dispose()
    const h = await taskOnChain(run, { entries: run.entries, values: run.values, roots }, { forcedErrorPpm: 1_000_000, verifierCount: 1 })
    const draw = drawOn(h)
    expect(draw.step).toBe(0)
    const bob = total(h, 'Bob')
    expect(h.run('Dave', 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: 0 }).error).toBeUndefined()
    const init = buildInitClaim({ program: run.programBytes, stateRoots: roots.map(r => Uint8Array.from(Buffer.from(r, 'hex'))), state: invented, ...firstInitMismatch(program, invented)! })
    expect(h.run('Dave', 'Arbitration', 'adjudicate', { disputeId: 0, claim: u8aToHex(encodeClaim(init)) }).error).toBeUndefined()
    expect(taskOf(h).rulings.map(r => [r.claimKind, r.outcome])).toEqual([['Init', 'AwaitingReveal']])
    const exactness = revealOf(run, { roots }, 0)
    expect(h.run('Bob', 'Arbitration', 'reveal_forced_error', { taskId: 0, vrfOutput: draw.output, vrfProof: draw.proof, exactness }).error).toBe('Arbitration.RulingNotExcusable')
    expectPenalized(h, bob, settle(h))
  })
})
