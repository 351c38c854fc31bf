import { u8aToHex } from '@polkadot/util'
import { beforeAll, describe, expect, it } from 'vitest'
import { fromHex, merkleRoot, toHex } from '../../protocols/commit/merkle.js'
import { encodeClaim, firstNaNIndex, firstNaNOf, verifySigned, type Claim, type DisputeContext, type Divergence, type Ruling } from '../../protocols/dispute/index.js'
import { newProgram, type TaskProgram } from '../../protocols/program/index.js'
import { initBackend } from '../../node/train/backend.js'
import { datasetRef, syntheticDataset, type Dataset } from '../../node/train/dataset.js'
import type { Harness } from '../unit/chain/harness.js'
import { contextOn, honest, honestRun, taskOf, taskOnChain, type Run, type Side } from '../unit/dispute/fixture.js'
import { BOND, dispute, tx, worth } from './setup.js'
import { CTX, bob, judge, leavesOf, playSegment, segEnv, segmentChallenger, segmentDefender, verify } from './segment-setup.js'

// NaN-only segment disputes (docs/disputes.md "Segments", "NaN: a NaN ends
// the run"): with a root every m > 1 steps a solver that trains on through a
// NaN commits roots every honest replay agrees with, so no transition of its
// segment differs. The challenger may open the transition its replay found
// holding a NaN although its post-root agrees (`nanAt`); the one-step game's
// `nan` claims then decide. Opening an agreed transition that holds no NaN
// wins nothing: the honest defender keeps the challenger's bond.
// A 5-step MLP task at m = 4 (leaves: steps 0, 4, 5). Bob solves, Dave challenges.

const M = 4
const winner = (r: Ruling | string): string => typeof r === 'string' ? r : r.winner
let program: TaskProgram
let ds: Dataset
/** the step whose tape holds the first NaN (learning rate 1e30), and its first NaN op output */
let k: number
let first: Divergence
let bad: Run
/** the same run's last step (4, segment 1): its pre-state, leaf 1, holds NaNs */
let late: Run
let clean: Run

beforeAll(async () => {
  await initBackend('wasm')
  ds = syntheticDataset(7, 64, 8)
  program = newProgram({ model: 'mlp', dataset: datasetRef(ds), steps: 5, optimizer: 'sgd', learningRate: 1e30, batchSize: 4, seed: 11, checkpointEvery: 4 })
  for (k = 0; k < program.steps; k++) {
    bad = await honestRun(program, ds, k)
    const f = firstNaNOf(bad.values.map(v => v.outputs))
    if (f !== undefined) { first = { entry: f.entry, flat: f.flat }; break }
  }
  late = await honestRun(program, ds, 4)
  clean = await honestRun(newProgram({ model: 'mlp', dataset: datasetRef(ds), steps: 5, optimizer: 'sgd', batchSize: 4, seed: 11, checkpointEvery: 4 }), ds, 2)
}, 180_000)

/** A NaN in a run's pre-state (the first state tensor holding one). */
function preNan (run: Run): { which: 'pre', t: number, flat: number } {
  const t = run.before.findIndex(x => firstNaNIndex('float32', x.values) >= 0)
  if (t < 0) throw new Error('no NaN in the pre-state')
  return { which: 'pre', t, flat: firstNaNIndex('float32', run.before[t].values) }
}

describe('a complete m > 1 proof with a NaN inside a segment loses (pure players, judged by judgeClaim)', () => {
  it('every root agrees, so without the NaN rule the challenger had nothing to open', () => {
    expect(k).toBeLessThan(M) // inside segment 0
    const SD = segmentDefender(bad, honest(bad), M, 0)
    const seg = SD.segment()
    const plain = segmentChallenger(bad, honest(bad), bad.roots, M, 0)
    expect(plain.onSegment(verifySigned(seg, bob.publicKey, verify, CTX), seg)).toEqual({ fail: expect.stringMatching(/nothing to dispute/) })
  })

  it('the challenger opens the step that made the NaN and wins a nan claim on its first NaN op output, ruled at that step', () => {
    const r = playSegment(bad, honest(bad), honest(bad), M, 0, { nanAt: k, nan: { firstNan: first } })
    expect(r.step).toBe(k)
    expect(r.by).toBe('challenger')
    expect(r.claim.kind).toBe('nan')
    const ruling = judge(segEnv(bad, bad.roots, M, 0, 'challenger'), r.claim)
    expect(winner(ruling)).toBe('challenger')
    expect((ruling as Ruling).step).toBe(k)
  })

  it('a NaN carried into a later segment: its first transition is opened and the NaN of the committed leaf it starts from loses', () => {
    const r = playSegment(late, honest(late), honest(late), M, 1, { nanAt: 4, nan: { stateNan: preNan(late) } })
    expect(r.step).toBe(4)
    expect(r.claim.kind).toBe('nan')
    expect(winner(judge(segEnv(late, late.roots, M, 1, 'challenger'), r.claim))).toBe('challenger')
  })

  it('a root that differs before the NaN step is opened first (an ordinary segment dispute)', () => {
    expect(k).toBeGreaterThan(0)
    const own = [...bad.roots]
    own[k] = toHex(new Uint8Array(32).fill(3))
    const SD = segmentDefender(bad, honest(bad), M, 0)
    const seg = SD.segment()
    const o = segmentChallenger(bad, honest(bad), own, M, 0, CTX, k).onSegment(verifySigned(seg, bob.publicKey, verify, CTX), seg)
    expect(o).toHaveProperty('step', k - 1)
  })

  it('a NaN step outside the segment is refused when the player is built', () => {
    expect(() => segmentChallenger(bad, honest(bad), bad.roots, M, 0, CTX, M)).toThrow(/not inside segment 0/)
  })
})

describe('a challenger opening an agreed NaN-free transition loses (pure)', () => {
  it('the honest defender commits its tape, every claim the challenger has loses', () => {
    const r = playSegment(clean, honest(clean), honest(clean), M, 0, { nanAt: 2 })
    expect(r.step).toBe(2)
    expect(r.claim.kind).toBe('state')
    expect(winner(judge(segEnv(clean, clean.roots, M, 0, 'challenger'), r.claim))).toBe('defender')
  })

  it('nor does a nan claim on an element that is no NaN', () => {
    const r = playSegment(clean, honest(clean), honest(clean), M, 0, { nanAt: 2, nan: { firstNan: { entry: 1, flat: 0 } } })
    expect(r.claim.kind).toBe('nan')
    expect(winner(judge(segEnv(clean, clean.roots, M, 0, 'challenger'), r.claim))).toBe('defender')
  })
})

// ---------------------------------------------------------------- pallet

/** Task 0 of `run`'s program at m = 4: Bob commits `d`'s leaves as a complete proof and Dave opens segment `j`. */
async function segmentTask (run: Run, d: Side, j: number): Promise<{ h: Harness, ctx: DisputeContext }> {
  const h = await taskOnChain(run, d, { commit: false })
  h.write('Arbitration', 'TaskRootEvery', 0, M)
  const leaves = leavesOf(d.roots, run.program.steps, M)
  expect(h.run('Bob', 'Arbitration', 'commit_proof', {
    taskId: 0, proofRoot: '0x' + toHex(merkleRoot(leaves.map(fromHex))), finalStateRoot: '0x' + leaves[leaves.length - 1], stepCount: run.program.steps, checkpoints: []
  }).error).toBeUndefined()
  expect(h.run('Dave', 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: j }).error).toBeUndefined()
  return { h, ctx: { ...contextOn(h, 0), segmented: true } }
}

const adjudicate = (h: Harness, claim: Claim): string | undefined => tx(h, 'Dave', 'adjudicate', { claim: u8aToHex(encodeClaim(claim)) })

describe('NaN-only segment disputes on the pallet', () => {
  it('a solver that trained on through a NaN is ruled against at the step that made it', async () => {
    const { h, ctx } = await segmentTask(bad, honest(bad), 0)
    const r = playSegment(bad, honest(bad), honest(bad), M, 0, { ctx, nanAt: k, nan: { firstNan: first } })
    expect(adjudicate(h, r.claim)).toBeUndefined()
    expect(dispute(h).status).toBe('ChallengerWon')
    expect(taskOf(h).rulings.map(x => x.step)).toEqual([k])
  })

  it('and in a later segment, on the NaN of the leaf it starts from', async () => {
    const { h, ctx } = await segmentTask(late, honest(late), 1)
    const r = playSegment(late, honest(late), honest(late), M, 1, { ctx, nanAt: 4, nan: { stateNan: preNan(late) } })
    expect(adjudicate(h, r.claim)).toBeUndefined()
    expect(dispute(h).status).toBe('ChallengerWon')
  })

  it('a challenger that opens an agreed NaN-free transition loses its bond to the honest solver', async () => {
    for (const nan of [{}, { firstNan: { entry: 1, flat: 0 } }]) {
      const { h, ctx } = await segmentTask(clean, honest(clean), 0)
      const daveBefore = worth(h, 'Dave')
      const bobBefore = worth(h, 'Bob')
      const r = playSegment(clean, honest(clean), honest(clean), M, 0, { ctx, nanAt: 2, nan })
      expect(adjudicate(h, r.claim)).toBeUndefined()
      expect(dispute(h).status).toBe('DefenderWon')
      expect(worth(h, 'Dave')).toBe(daveBefore - BOND)
      expect(worth(h, 'Bob')).toBeGreaterThanOrEqual(bobBefore)
    }
  })
})
