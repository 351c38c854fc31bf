import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Keyring } from '@polkadot/keyring'
import { cryptoWaitReady } from '@polkadot/util-crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isDivergedStepDispute } from '../../../devnet/chain/runtime/segments.js'
import { fromHex, merkleRoot, sha256 } from '../../../protocols/commit/merkle.js'
import {
  ClaimRejected, datasetRootOf, judgeClaim, signAfter, skeletonLeaves, skeletonRootOf, verifySigned,
  type ChallengerGame, type Claim, type DefenderGame, type DisputeContext, type JudgeEnv, type Ruling
} from '../../../protocols/dispute/index.js'
import { rootAtStep, type ProofOfLearning } from '../../../protocols/pol/proof.js'
import { segmentCount } from '../../../protocols/pol/segments.js'
import { newProgram, type TaskProgram } from '../../../protocols/program/index.js'
import * as reference from '../../../protocols/reference/index.js'
import { verify } from '../../../node/dispute/dispute-context.js'
import { disputeOfStep, disputeShapeOf } from '../../../node/dispute/dispute-shape.js'
import { makeChallenger, makeDefender, nanFacts, programBytesOf } from '../../../node/dispute/players.js'
import { nanStepOf, segmentChallengerOf, segmentDisputeError, segmentEndAgrees, segmentPlanOf } from '../../../node/dispute/segment-challenge.js'
import { SegmentRuns, segmentDefenderOf } from '../../../node/dispute/segment-defence.js'
import { readTapeFile, type TapeFile } from '../../../node/engine/tape-file.js'
import { tapeForDispute } from '../../../node/engine/tape-job.js'
import { initBackend } from '../../../node/train/backend.js'
import { datasetRef, syntheticDataset } from '../../../node/train/dataset.js'
import { trainTask } from '../../../node/train/run.js'
import { segmentRoots } from '../../../node/train/segment-roots.js'
import { readProof } from '../../../node/train/store.js'

// The node's play of the last two kinds of m > 1 disputes (docs/disputes.md
// "Segments"), on real runs written by the trainer, tapes from the engine's
// tape job and the node's players, judged by the chain's rule:
// - a diverged proof's last step k: disputed_step ⌈k / m⌉, a one-step dispute
//   whose players read the proof's leaves (a solver faking a divergence at
//   m = 2 loses; an honest divergence gives the challenger nothing to open);
// - a NaN-only segment dispute: a solver that trained on through a NaN at
//   m = 4 commits roots every replay agrees with; the challenger opens the
//   step its tape shows holding the NaN and wins a `nan` claim.
// Bob defends, Dave challenges.

const ds = syntheticDataset(7, 64, 8)
const kr = new Keyring({ type: 'sr25519' })
const dirs: string[] = []
const tmp = (): string => { const d = mkdtempSync(join(tmpdir(), 'segment-nan-node-')); dirs.push(d); return d }
const prog = (lr: number, m: number, steps: number, checkpointEvery: number): TaskProgram =>
  newProgram({ model: 'mlp', dataset: datasetRef(ds), steps, optimizer: 'sgd', learningRate: lr, batchSize: 4, checkpointEvery, rootEvery: m, seed: 11 })
const GENESIS = new Uint8Array(32).fill(0x33)
const ctxOf = (segmented: boolean): DisputeContext => ({ genesis: GENESIS, taskId: 0, disputeId: 0, ...(segmented ? { segmented: true } : {}) })

interface RunDir { dir: string, program: TaskProgram, proof: ProofOfLearning }
async function train (program: TaskProgram, o: { fakeDivergence?: number, haltOnNaN?: boolean } = {}): Promise<RunDir> {
  const dir = tmp()
  await trainTask({ program, outDir: dir, dataset: ds, evaluate: false, hashWorker: false, ...o })
  return { dir, program, proof: readProof(dir, program.rootEvery) }
}
async function tapeOf (r: RunDir, step: number): Promise<TapeFile> {
  const out = join(r.dir, `tape-${step}.cbor`)
  await tapeForDispute({ runDir: r.dir, step, out, datasetProofs: true })
  return readTapeFile(out)
}

let bob: ReturnType<Keyring['addFromUri']>
let dave: ReturnType<Keyring['addFromUri']>
/** m = 2: a solver that fakes a divergence in step 3 (k = 2) of a NaN-free run, and an honest run diverging in step 3 */
let faked: RunDir
let diverged: RunDir
/** m = 4, 5 steps: trained on through its NaNs (leaves: states 0, 4, 5) */
let through: RunDir

beforeAll(async () => {
  await cryptoWaitReady()
  bob = kr.addFromUri('//Bob'); dave = kr.addFromUri('//Dave')
  await initBackend('wasm')
  faked = await train(prog(0.05, 2, 6, 2), { fakeDivergence: 3 })
  diverged = await train(prog(3e9, 2, 6, 2))
  through = await train(prog(1e30, 4, 5, 4), { haltOnNaN: false })
}, 180_000)
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }) })

function env (r: RunDir, tape: TapeFile, o: Partial<JudgeEnv>): JudgeEnv {
  return {
    ...ctxOf(false),
    step: r.proof.steps,
    challenger: dave.publicKey,
    defender: bob.publicKey,
    caller: 'challenger',
    programHash: sha256(programBytesOf(r.program)),
    datasetRoot: datasetRootOf(tape.dataset!.xRoot, tape.dataset!.yRoot),
    skeletonRoot: skeletonRootOf(skeletonLeaves(tape.entries)),
    proofRoot: merkleRoot(r.proof.stateRoots.map(fromHex)),
    stepCount: r.proof.steps,
    reference,
    verify,
    ...o
  }
}
function judge (e: JudgeEnv, c: Claim): Ruling | string {
  try { return judgeClaim(e, c) } catch (x) { if (x instanceof ClaimRejected) return x.reason; throw x }
}

/** Plays the step game off chain from the defender's commit to the challenger's claim. */
function play (D: DefenderGame, C: ChallengerGame, ctx: DisputeContext): Claim {
  let dm = D.commit()
  for (let round = 0; round < 200; round++) {
    const next = C.onMessage(verifySigned(dm, bob.publicKey, verify, ctx), dm)
    if ('claim' in next) return next.claim
    if ('fail' in next) throw new Error(next.fail)
    if ('demand' in next) throw new Error(`the challenger demands ${next.demand}`)
    const a = D.respond(verifySigned(next.send, dave.publicKey, verify, ctx), next.send)
    if (a.claim !== undefined) throw new Error(`the defender claimed ${a.claim.kind}`)
    dm = a.reply!
  }
  throw new Error('no claim in 200 rounds')
}

describe('what a dispute of an m > 1 task is about (node/dispute/dispute-shape.ts)', () => {
  it('the node names the disputes the chain plays: a segment, or a diverged proof\'s last step one past the segments', () => {
    for (const m of [1, 2, 3, 4]) {
      for (let k = 1; k <= 9; k++) {
        for (const divergence of [null, { entry: 0, flat: 0 }]) {
          const task = { stepCount: k, divergence }
          const last = segmentCount(k, m) + (divergence === null ? 0 : 1)
          for (let d = 0; d < (m === 1 ? k + (divergence === null ? 0 : 1) : last); d++) {
            const shape = disputeShapeOf(task, m, d)
            expect(shape.kind === 'step').toBe(m === 1 || isDivergedStepDispute(task, m, d))
            if (shape.kind === 'step' && m > 1) expect(shape).toEqual({ kind: 'step', step: k, spacing: { rootEvery: m, steps: k } })
          }
          // every 1-based step of the proof (and the diverged one) maps to the dispute holding it
          for (let s = 1; s <= k + (divergence === null ? 0 : 1); s++) {
            const { disputedStep, shape } = disputeOfStep(task, m, s)
            expect(shape).toEqual(disputeShapeOf(task, m, disputedStep))
            if (shape.kind === 'segment') expect(disputedStep).toBe(Math.floor((s - 1) / m))
            else expect(shape.step).toBe(m === 1 ? s - 1 : k)
          }
        }
      }
    }
    expect(disputeOfStep({ stepCount: 2, divergence: { entry: 1, flat: 0 } }, 2, 3)).toEqual({ disputedStep: 1, shape: { kind: 'step', step: 2, spacing: { rootEvery: 2, steps: 2 } } })
  })
})

describe('a diverged m = 2 proof\'s last step on the node', () => {
  it('a faked divergence: the node\'s players with the proof\'s leaves narrow it to its divergence point, which holds no NaN', async () => {
    const { proof } = faked
    expect(proof).toMatchObject({ steps: 2, rootEvery: 2 })
    const div = proof.divergence!
    const shape = disputeShapeOf({ stepCount: 2, divergence: div }, 2, 1)
    if (shape.kind !== 'step') throw new Error('not a one-step dispute')
    const tape = await tapeOf(faked, 3)
    // the challenger's rule: the pre-state is the last leaf, and the step does not diverge where the proof says
    expect(tape.stateRootBefore).toBe(rootAtStep(proof, 2))
    const nan = nanFacts(tape, div)
    expect(nan.wrong).toBe(true)
    const ctx = ctxOf(false)
    const D = makeDefender({ disputeId: 0, ctx, tape, stateRoots: proof.stateRoots, pair: bob, program: faked.program, spacing: shape.spacing })
    const C = makeChallenger({
      disputeId: 0, ctx, tape, stateRoots: proof.stateRoots, pair: dave, defender: bob.publicKey, program: faked.program, nan, spacing: shape.spacing
    })
    const claim = play(D, C, ctx)
    const e = env(faked, tape, { rootEvery: 2, divergence: div })
    const ruling = judge(e, claim)
    expect(ruling).toMatchObject({ winner: 'challenger', reason: expect.stringMatching(/holds no NaN/) })
  }, 60_000)

  it('an honest divergence: the challenger\'s tape diverges where the proof says, so the node opens nothing', async () => {
    const { proof } = diverged
    expect(proof).toMatchObject({ steps: 2, rootEvery: 2 })
    const tape = await tapeOf(diverged, 3)
    expect(tape.stateRootBefore).toBe(rootAtStep(proof, 2))
    expect(nanFacts(tape, proof.divergence).wrong).toBe(false)
    // a challenger that opens it from another pre-state loses to the defender node's badOpen, which proves leaf 1 (state 2)
    const ctx = ctxOf(false)
    const D = makeDefender({ disputeId: 0, ctx, tape, stateRoots: proof.stateRoots, pair: bob, program: diverged.program, spacing: { rootEvery: 2, steps: 2 } })
    const commit = D.commit()
    const open = signAfter({ ...ctx, account: dave.publicKey, sign: x => dave.sign(x) }, { t: 'open', d: 0, step: 2, pre: new Uint8Array(32).fill(0xab), post: new Uint8Array(32) }, commit, 0)
    const r = D.respond(verifySigned(open, dave.publicKey, verify, ctx), open)
    expect(r.claim?.kind).toBe('badOpen')
    const e = env(diverged, tape, { rootEvery: 2, divergence: proof.divergence, caller: 'defender' })
    expect(judge(e, r.claim!)).toMatchObject({ winner: 'defender' })
    // a defender built without the proof's spacing reads the per-step leaf 2, which this proof does not have
    const perStep = makeDefender({ disputeId: 0, ctx, tape, stateRoots: proof.stateRoots, pair: bob, program: diverged.program })
    expect(() => perStep.respond(verifySigned(open, dave.publicKey, verify, ctx), open)).toThrow()
  }, 60_000)
})

describe('a NaN-only segment dispute on the node (m = 4, a complete proof trained on through its NaNs)', () => {
  it('every root replays, the tape of the NaN step shows the NaN, the node opens that step and wins a nan claim', async () => {
    const { proof } = through
    expect(proof).toMatchObject({ steps: 5, rootEvery: 4 })
    expect(proof.divergence).toBeUndefined()
    // the first step whose tape holds a NaN (what a verifier's replay reports as nanStep)
    let step = 0
    let tape: TapeFile | undefined
    for (let s = 1; s <= 5 && tape === undefined; s++) {
      const t = await tapeOf(through, s)
      if (nanFacts(t).wrong) { step = s; tape = t }
    }
    if (tape === undefined) throw new Error('no NaN in the run')
    expect(step).toBeLessThanOrEqual(4)
    const plan = segmentPlanOf(proof, step)
    expect(plan).toEqual({ j: 0, first: 0, length: 4 })
    const own = (await segmentRoots({ proofDir: through.dir, first: plan.first, length: plan.length })).roots
    // the roots all agree: without the NaN there is nothing to dispute
    expect(segmentEndAgrees(plan, proof, own)).toBe(true)
    expect(segmentDisputeError(plan, proof, own)).toMatch(/nothing to dispute/)
    const nanAt = nanStepOf(tape, plan, own)
    expect(nanAt).toBe(step - 1)
    expect(segmentDisputeError(plan, proof, own, nanAt)).toBeUndefined()
    // the defender's node signs its re-run of the segment; the challenger's opens the NaN step
    const ctx = ctxOf(true)
    const runs = new SegmentRuns({ segmentRoots: async (dir, first, length, faults) => (await segmentRoots({ proofDir: dir, first, length, faults })).roots })
    const inside = await runs.inside(0, through.dir, proof, 0, { ops: [], weights: [] })
    const SD = segmentDefenderOf({ disputeId: 0, ctx, pair: bob, j: 0, proof, inside, program: through.program })
    const SC = segmentChallengerOf({ disputeId: 0, ctx, pair: dave, defender: bob.publicKey, plan, proof, own, nanAt })
    const seg = SD.segment()
    const opened = SC.onSegment(verifySigned(seg, bob.publicKey, verify, ctx), seg)
    if ('fail' in opened) throw new Error(opened.fail)
    expect(opened.step).toBe(nanAt)
    const r = SD.onOpen(verifySigned(opened.send, dave.publicKey, verify, ctx), opened.send)
    if (!('opening' in r)) throw new Error('the defender refused the opening')
    const D = makeDefender({ disputeId: 0, ctx, tape, stateRoots: proof.stateRoots, pair: bob, program: through.program, opening: r.opening })
    const C = makeChallenger({
      disputeId: 0, ctx, tape, stateRoots: proof.stateRoots, pair: dave, defender: bob.publicKey, program: through.program,
      nan: nanFacts(tape), segment: opened.segment
    })
    const claim = play(D, C, ctx)
    expect(claim.kind).toBe('nan')
    const ruling = judge(env(through, tape, { ...ctx, step: -1, segment: { j: 0, rootEvery: 4 } }), claim)
    expect(ruling).toMatchObject({ winner: 'challenger', step: nanAt })
  }, 90_000)

  it('a NaN-free tape gives the node no NaN step to open', async () => {
    const plan = segmentPlanOf(faked.proof, 1)
    const own = (await segmentRoots({ proofDir: faked.dir, first: plan.first, length: plan.length })).roots
    expect(segmentEndAgrees(plan, faked.proof, own)).toBe(true)
    expect(nanStepOf(await tapeOf(faked, 1), plan, own)).toBeUndefined()
  }, 60_000)
})
