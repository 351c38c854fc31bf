import { u8aToHex } from '@polkadot/util'
import { cryptoWaitReady } from '@polkadot/util-crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { disputeDeadline, tapeAllowance } from '../../devnet/chain/runtime/disputes.js'
import { referenceCostOn } from '../helpers/rerun-cost.js'
import { REVEAL_WINDOW } from '../../devnet/chain/runtime/spec.js'
import { fromHex, merkleProof, merkleRoot, nodeHash, toHex } from '../../protocols/commit/merkle.js'
import { stateLeaves } from '../../protocols/commit/state.js'
import { MAX_SEQ, decodeMsg, encodeClaim, encodeSigned, judgeClaim, ClaimRejected, type Claim, type Divergence, type JudgeEnv } from '../../protocols/dispute/index.js'
import { committedSteps, proofDepth } from '../../protocols/pol/segments.js'
import { STATE_PSEUDO_KERNEL } from '../../protocols/tape/tape.js'
import type { Harness } from '../unit/chain/harness.js'
import { contextOn, gamesFor, honest, honestRun, playDispute, tamperOp, taskOf, taskOnChain, type Run, type Side } from '../unit/dispute/fixture.js'
import { dispute, mlpRun, nanRun, playOff, worth } from './setup.js'
import { bob, dave, playSegment, verify } from './segment-setup.js'

// Diverged proofs of a task with a root every m > 1 steps (docs/disputes.md
// "Segments" and "NaN: a NaN ends the run"). The proof of a run that diverged
// in step k commits the states after steps 0, m, 2m, …, k; the diverged step
// starts from the last leaf ⌈k / m⌉ and has no post-state, so it has no
// segment: open_dispute names it as disputed_step = ⌈k / m⌉ (one past the
// last segment) and it is a one-step dispute of step k whose pre-state is
// that leaf, proven at the depth proofDepth(k, m). Its segments are ordinary
// segment disputes. The task's TaskRootEvery is written as submit_task does
// from a program naming m (the fixtures' programs name none). Bob solves,
// Dave challenges.

const M = 2
let bad: Awaited<ReturnType<typeof nanRun>>
let clean: Run
let clean1: Run

beforeAll(async () => {
  await cryptoWaitReady()
  // learning rate 3e9: the run's first NaN is in step 2, so k = 2 (leaves: states 0 and 2)
  bad = await nanRun(3e9)
  clean = await mlpRun()
  clean1 = await honestRun(clean.program, clean.ds, 1)
}, 180_000)

const leavesOf = (d: Side, k: number): string[] => committedSteps(k, M).map(s => d.roots[s])

/** Task 0 with a root every M steps: Bob commits `d`'s states 0, M, …, k and a divergence point in step k. */
async function divergedTask (run: Run, d: Side, k: number, div: Divergence): Promise<Harness> {
  const h = await taskOnChain(run, d, { commit: false })
  h.write('Arbitration', 'TaskRootEvery', 0, M)
  const leaves = leavesOf(d, k)
  expect(h.run('Bob', 'Arbitration', 'commit_diverged', {
    taskId: 0, proofRoot: '0x' + toHex(merkleRoot(leaves.map(fromHex))), finalStateRoot: '0x' + leaves[leaves.length - 1], stepCount: k, checkpoints: [], ...div
  }).error).toBeUndefined()
  return h
}
const open = (h: Harness, disputedStep: number): string | undefined =>
  h.run('Dave', 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep }).error
/** ⌈k / m⌉: the diverged step's dispute, one past the proof's segments */
const divergedIndex = (k: number): number => Math.ceil(k / M)
const play = (k: number): { spacing: { rootEvery: number, steps: number } } => ({ spacing: { rootEvery: M, steps: k } })

describe('an honest diverged proof at m > 1', () => {
  it('the fixture diverges in step 2 of 5, so its leaves (states 0, 2) are not a per-step tree\'s', () => {
    expect(bad.k).toBe(2)
    expect(proofDepth(bad.k, M)).toBe(1)
  })

  it('its diverged step is disputed as disputed_step ⌈k / m⌉, a one-step dispute with the step\'s tape allowance; nothing past it', async () => {
    const h = await divergedTask(bad.run, honest(bad.run), bad.k, bad.first)
    // segment 0 (steps 0–1) and the diverged step: naming k itself (2) is past them
    expect(open(h, divergedIndex(bad.k) + 1)).toBe('Arbitration.InvalidStep')
    expect(open(h, divergedIndex(bad.k))).toBeUndefined()
    const d = dispute(h)
    const window = h.read<{ disputeClock: number }>('Arbitration', 'Params')!.disputeClock
    expect(d.deadline).toBe(disputeDeadline(d.openedAt, window, tapeAllowance(taskOf(h), bad.k, referenceCostOn(h)), MAX_SEQ))
  })

  it('the honest challenger finds nothing to claim', async () => {
    const h = await divergedTask(bad.run, honest(bad.run), bad.k, bad.first)
    expect(open(h, divergedIndex(bad.k))).toBeUndefined()
    const g = gamesFor(h, bad.run, honest(bad.run), honest(bad.run), { disputeId: 0, challengerName: 'Dave', disputedStep: bad.k, nan: { firstNan: bad.first, divergence: bad.first }, ...play(bad.k) })
    const c = g.D.commit()
    expect(decodeMsg(c.m)).toMatchObject({ t: 'commit', step: bad.k, seq: 0 })
    expect(g.C.onMessage(decodeMsg(c.m), c)).toHaveProperty('fail')
  })

  const laterNan = (): Divergence => {
    for (let j = bad.first.entry + 1; j < bad.run.values.length; j++) {
      const o = bad.run.values[j].outputs[0]
      const f = o === undefined ? -1 : (o.values as Float32Array).findIndex(v => Number.isNaN(v))
      if (f >= 0) return { entry: j, flat: f }
    }
    throw new Error('no NaN after the divergence point')
  }
  const lastOp = (): number => bad.run.entries.findLastIndex(e => e.kernel !== STATE_PSEUDO_KERNEL)
  const attacks: Array<[string, () => { firstNan?: Divergence, divergence?: Divergence }]> = [
    ['a nan claim on the divergence point\'s NaN', () => ({ firstNan: bad.first })],
    ['a nan claim on a NaN past the divergence point', () => ({ firstNan: laterNan() })],
    ['an element claim at an entry past the divergence point', () => ({ divergence: { entry: lastOp(), flat: 0 } })],
    ['a state claim (the diverged step has no post-state)', () => ({})]
  ]
  for (const [name, nan] of attacks) {
    it(`survives ${name}: the challenger loses its bond`, async () => {
      const h = await divergedTask(bad.run, honest(bad.run), bad.k, bad.first)
      expect(open(h, divergedIndex(bad.k))).toBeUndefined()
      const before = worth(h, 'Dave'); const bob0 = worth(h, 'Bob')
      const o = playDispute(h, bad.run, honest(bad.run), honest(bad.run), { disputeId: 0, challengerName: 'Dave', disputedStep: bad.k, nan: nan(), ...play(bad.k) })
      expect(o.error).toBeUndefined()
      expect(o.status).toBe('DefenderWon')
      expect(worth(h, 'Dave')).toBeLessThan(before)
      expect(worth(h, 'Bob')).toBeGreaterThan(bob0)
    })
  }

  it('a challenger that opens the diverged step with a pre-state other than the last leaf loses to the defender\'s badOpen at leaf ⌈k / m⌉', async () => {
    const h = await divergedTask(bad.run, honest(bad.run), bad.k, bad.first)
    expect(open(h, divergedIndex(bad.k))).toBeUndefined()
    const before = worth(h, 'Dave')
    const o = playDispute(h, bad.run, honest(bad.run), tamperOp(bad.run, 3), {
      disputeId: 0, challengerName: 'Dave', disputedStep: bad.k, challengerOpensWrongPre: true, nan: { divergence: bad.first }, ...play(bad.k)
    })
    expect(o.error).toBeUndefined()
    expect(o.claim?.kind).toBe('badOpen')
    expect((o.claim as Extract<Claim, { kind: 'badOpen' }>).prePath).toHaveLength(proofDepth(bad.k, M))
    expect(o.status).toBe('DefenderWon')
    expect(worth(h, 'Dave')).toBeLessThan(before)
  })
})

describe('a solver faking a divergence at m > 1 loses', () => {
  const op = (): number => clean.entries.findIndex(e => e.kernel === '_FusedMatMul' || e.kernel === 'BatchMatMul')
  const fakes: Array<[string, () => Side]> = [
    ['with an honest tape of the step it claims diverged', () => honest(clean)],
    ['with a tape that shows a made-up NaN there', () => tamperOp(clean, op(), 0, undefined, Number.NaN)]
  ]
  for (const [name, side] of fakes) {
    it(name, async () => {
      const fake: Divergence = { entry: op(), flat: 0 }
      const defender = side()
      const h = await divergedTask(clean, defender, clean.step, fake)
      const bob0 = worth(h, 'Bob')
      expect(open(h, divergedIndex(clean.step))).toBeUndefined()
      const o = playDispute(h, clean, defender, honest(clean), { disputeId: 0, challengerName: 'Dave', disputedStep: clean.step, nan: { divergence: fake }, ...play(clean.step) })
      expect(o.error).toBeUndefined()
      expect(dispute(h).status).toBe('ChallengerWon')
      // the ruling is at the diverged step k, not at disputed_step ⌈k / m⌉: accepts listing k answer for it
      expect(taskOf(h).rulings.map(r => r.step)).toEqual([clean.step])
      h.advance(REVEAL_WINDOW + 1)
      expect(taskOf(h).solverFailed).toBe(true)
      expect(worth(h, 'Bob')).toBeLessThan(bob0)
    })
  }

  it('a silent faker is forced for its one-step commit of step k (with that step\'s allowance) and slashed at the timeout', async () => {
    const k = clean.step
    const fake: Divergence = { entry: op(), flat: 0 }
    const h = await divergedTask(clean, honest(clean), k, fake)
    expect(open(h, divergedIndex(k))).toBeUndefined()
    const bob0 = worth(h, 'Bob')
    expect(h.run('Dave', 'Arbitration', 'force_move', { disputeId: 0, theirs: '0x', mine: '0x' }).error).toBeUndefined()
    const window = h.read<{ disputeClock: number }>('Arbitration', 'Params')!.disputeClock
    const f = dispute(h).force!
    expect(f).toMatchObject({ to: 'Defender', seq: 0, due: f.at + window + tapeAllowance(taskOf(h), k, referenceCostOn(h)) })
    // a commit of another step than k does not answer it
    const g = gamesFor(h, clean, honest(clean), honest(clean), { disputeId: 0, challengerName: 'Dave', disputedStep: k - 1, ...play(k) })
    expect(h.run('Bob', 'Arbitration', 'answer_move', { disputeId: 0, answer: u8aToHex(encodeSigned(g.D.commit())) }).error).toBe('Arbitration.InvalidMove')
    h.advance(f.due - h.number)
    expect(h.run('Alice', 'Arbitration', 'claim_timeout', { disputeId: 0 }).error).toBeUndefined()
    expect(dispute(h).status).toBe('ChallengerWon')
    expect(worth(h, 'Bob')).toBeLessThan(bob0)
  })

  it('its badOpen with a node inside its last state root (one level below leaf ⌈k / m⌉, the per-step depth) is refused', async () => {
    const k = clean.step
    const defender = tamperOp(clean, op(), 0, undefined, Number.NaN)
    const fake: Divergence = { entry: op(), flat: 0 }
    const h = await divergedTask(clean, defender, k, fake)
    expect(open(h, divergedIndex(k))).toBeUndefined()
    const g = gamesFor(h, clean, defender, honest(clean), { disputeId: 0, challengerName: 'Dave', disputedStep: k, nan: { divergence: fake }, ...play(k) })
    const c = g.D.commit()
    const opening = g.C.onMessage(decodeMsg(c.m), c)
    if (!('send' in opening)) throw new Error('the challenger did not open the step')
    expect(decodeMsg(opening.send.m)).toMatchObject({ t: 'open', step: k })
    // the left child of state root k: with leaves [S0, Sk] at the per-step depth 2 it verifies as "leaf k"
    const sl = stateLeaves(clean.before, k)
    const half = 2 ** (Math.ceil(Math.log2(sl.length)) - 1)
    // the right child is leaf 0's last sibling (merkleRoot pads each level with the zero hash)
    const left = merkleRoot(sl.slice(0, half)); const right = merkleProof(sl, 0).at(-1)!
    const leaves = leavesOf(defender, k).map(fromHex)
    expect(nodeHash(left, right)).toEqual(leaves[1])
    const badOpen: Claim = { v: 1, kind: 'badOpen', open: opening.send, pre: left, prePath: [right, ...merkleProof(leaves, 1)] }
    const env: JudgeEnv = {
      ...contextOn(h, 0), step: k, challenger: dave.publicKey, defender: bob.publicKey, caller: 'defender', programHash: new Uint8Array(32),
      datasetRoot: new Uint8Array(32), skeletonRoot: new Uint8Array(32), proofRoot: merkleRoot(leaves), stepCount: k, divergence: fake, verify
    }
    // the per-step rule (leaf k, depth ⌈log2(k + 1)⌉) takes it: the attack
    expect(judgeClaim(env, badOpen).winner).toBe('defender')
    expect(() => judgeClaim({ ...env, rootEvery: M }, badOpen)).toThrow(ClaimRejected)
    expect(h.run('Bob', 'Arbitration', 'adjudicate', { disputeId: 0, claim: u8aToHex(encodeClaim(badOpen)) }).error).toBe('Arbitration.InvalidProof')
    expect(dispute(h).status).toBe('Open')
  })

  it('a claim on its diverged step proves the pre-state at leaf ⌈k / m⌉: the per-step leaf k, or another leaf, is refused', async () => {
    const k = clean.step
    // the solver's tape of the diverged step reads a weight that is not its committed state k's
    const i = clean.entries.findIndex(e => e.kernel !== STATE_PSEUDO_KERNEL && e.inputs.some(x => x.ref.kind === 'state'))
    const input = clean.entries[i].inputs.findIndex(x => x.ref.kind === 'state')
    const defender = tamperOp(clean, i, 0, input)
    const fake: Divergence = { entry: i, flat: 0 }
    const h = await divergedTask(clean, defender, k, fake)
    expect(open(h, divergedIndex(k))).toBeUndefined()
    const g = gamesFor(h, clean, defender, honest(clean), { disputeId: 0, challengerName: 'Dave', disputedStep: k, nan: { divergence: fake }, ...play(k) })
    const { claim } = playOff(g, bob.publicKey, dave.publicKey, verify)
    if (claim.kind !== 'input' || !('pre' in claim.prov)) throw new Error(`expected an input claim on a state tensor, got ${claim.kind}`)
    const leaves = leavesOf(defender, k).map(fromHex)
    expect(claim.prov.prePath).toEqual(merkleProof(leaves, 1))
    const adjudicate = (c: Claim): string | undefined => h.run('Dave', 'Arbitration', 'adjudicate', { disputeId: 0, claim: u8aToHex(encodeClaim(c)) }).error
    const perStep = defender.roots.slice(0, k + 1).map(fromHex)
    expect(adjudicate({ ...claim, prov: { ...claim.prov, prePath: merkleProof(perStep, k) } })).toBe('Arbitration.InvalidProof')
    expect(adjudicate({ ...claim, prov: { ...claim.prov, pre: leaves[0], prePath: merkleProof(leaves, 0) } })).toBe('Arbitration.InvalidProof')
    expect(dispute(h).status).toBe('Open')
    expect(adjudicate(claim)).toBeUndefined()
    expect(dispute(h).status).toBe('ChallengerWon')
    expect(taskOf(h).rulings.map(r => r.step)).toEqual([k])
  })
})

describe('the segments of a diverged proof are ordinary segment disputes', () => {
  it('a cheat inside segment 0 of a proof diverged in step 2 is ruled at its step', async () => {
    // the last op before the @state entry: its output is a weight of state 2
    const cheat = tamperOp(clean1, clean1.entries.findLastIndex(e => e.kernel !== STATE_PSEUDO_KERNEL))
    expect(cheat.roots[2]).not.toBe(clean1.roots[2])
    const k = 2
    const h = await divergedTask(clean1, cheat, k, { entry: 0, flat: 0 })
    expect(open(h, 0)).toBeUndefined()
    // the proof covers k = 2 steps: the players' leaves are its states 0 and 2
    const proofRun = { ...clean1, program: { ...clean1.program, steps: k } }
    const r = playSegment(proofRun, cheat, honest(clean1), M, 0, { ctx: { ...contextOn(h, 0), segmented: true } })
    expect(r.by).toBe('challenger')
    expect(h.run('Dave', 'Arbitration', 'adjudicate', { disputeId: 0, claim: u8aToHex(encodeClaim(r.claim)) }).error).toBeUndefined()
    expect(dispute(h).status).toBe('ChallengerWon')
    expect(taskOf(h).rulings.map(x => x.step)).toEqual([clean1.step])
  })
})
