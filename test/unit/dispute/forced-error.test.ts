import { u8aToHex } from '@polkadot/util'
import { sr25519VrfVerify } from '@polkadot/util-crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { UNIT } from '../../../devnet/chain/dev-spec.js'
import { TREASURY } from '../../../devnet/chain/runtime/balances.js'
import { REVEAL_WINDOW } from '../../../devnet/chain/runtime/spec.js'
import { FORCED_ERRORS_PER_DRAW, FORCED_ERROR_VRF_CONTEXT, checkDrawReveal, checkForcedErrorReveal, forcedErrorFromOutput, forcedErrorRoom, forcedErrorTranscript, forcedErrorsFromOutputs } from '../../../protocols/dispute/forced-error.js'
import { jackpotParts } from '../../../devnet/chain/runtime/jackpot.js'
import { newProgram } from '../../../protocols/program/index.js'
import { initBackend } from '../../../node/train/backend.js'
import { datasetRef, syntheticDataset, type Dataset } from '../../../node/train/dataset.js'
import { harnessSample } from '../../helpers/verdict-sample.js'
import type { Harness } from '../chain/harness.js'
import { advanceRevealing, drawOn, forcedDrawOf, type DrawPick, honest, honestRun, nodeOf, pair, playDispute, taskOf, taskOnChain, tamperOp, type Run } from './fixture.js'
import { revealOf, forcedSide } from './forced-fixture.js'

// Truebit forced errors drawn privately (an sr25519 VRF of the solver's key
// over task id ‖ selection seed) and revealed by the solver after a dispute at
// that step is ruled against it; its jackpot, out of the solver's reward, shared by the drawn verifiers that caught it; verifiers that
// accepted a step ruled wrong lose stake.

const STAKE = 10_000n * UNIT
const JACKPOT = 200n * UNIT
let ds: Dataset
let base: Run
/** a run whose disputed step is Bob's forced step on the harness chain, and the draw */
let forced: { run: Run, step: number, steps: number[], output: string, proof: string, picks: DrawPick[] }

beforeAll(async () => {
  await initBackend('wasm')
  ds = syntheticDataset(7, 64, 8)
  const p = newProgram({ model: 'mlp', dataset: datasetRef(ds), steps: 5, optimizer: 'sgd', batchSize: 4, seed: 11, checkpointEvery: 5 })
  base = await honestRun(p, ds, 2)
  const d = await forcedDrawOf(base)
  expect(d.step).not.toBeNull()
  forced = { run: await honestRun(p, ds, d.step!), step: d.step!, steps: d.steps, output: d.output, proof: d.proof, picks: d.picks }
}, 120_000)

/** the forced error: the step trained honestly, its post-state leaf committed as forcedLeaf(root) */
const forcedOf = forcedSide
/** a solver's wrong proof that is no forced error: the first BatchMatMul of the step + 1, everything after it consistent */
const cheat = (run: Run) => tamperOp(run, run.entries.findIndex(e => e.kernel === 'BatchMatMul'))
/** the reveal with the proof of the honest forced error of `forced.run` */
const reveal = (h: Harness, who: string, output: string, proof: string, exactness = revealOf(forced.run, forcedOf(forced.run))): string | undefined =>
  h.run(who, 'Arbitration', 'reveal_forced_error', { taskId: 0, vrfOutput: output, vrfProof: proof, exactness }).error
const open = (h: Harness, who: string, step: number): string | undefined => h.run(who, 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: step }).error
const verdict = (h: Harness, who: string, accept: boolean, checkedSteps: number[]): string | undefined => h.run(who, 'Arbitration', 'submit_verdict', { taskId: 0, accept, checkedSteps }).error
/** advances until the task leaves Verifying; returns the on_initialize events on the way */
function settle (h: Harness): string[] {
  const ev: string[] = []
  for (let i = 0; i < 200 && taskOf(h).phase === 'Verifying'; i++) ev.push(...advanceRevealing(h))
  expect(taskOf(h).phase).not.toBe('Verifying')
  return ev
}

describe('the forced-error draw (protocols/dispute/forced-error.ts)', () => {
  it('is the solver\'s VRF, one per pick: deterministic output, verifiable, bound to the key, the task and the pick', () => {
    const seed = new Uint8Array(32).fill(7)
    const bob = pair('Bob')
    const a = bob.vrfSign(forcedErrorTranscript(3, seed, 2), FORCED_ERROR_VRF_CONTEXT)
    const b = bob.vrfSign(forcedErrorTranscript(3, seed, 2), FORCED_ERROR_VRF_CONTEXT)
    expect(u8aToHex(a.slice(0, 32))).toBe(u8aToHex(b.slice(0, 32))) // one output per key and transcript
    expect(u8aToHex(bob.vrfSign(forcedErrorTranscript(3, seed, 3), FORCED_ERROR_VRF_CONTEXT).slice(0, 32))).not.toBe(u8aToHex(a.slice(0, 32)))
    const verify = (m: Uint8Array, op: Uint8Array, pub: Uint8Array, c: Uint8Array): boolean => sr25519VrfVerify(m, op, pub, c)
    const check = (taskId: number, pub: Uint8Array, out = a.slice(0, 32)) => checkForcedErrorReveal(
      { publicKey: pub, taskId, selectionSeed: seed, steps: 100, ppm: 1_000_000, rootEvery: 1, checkpointEvery: 10, output: out, proof: a.slice(32) }, verify
    )
    const ok = check(3, bob.publicKey)
    expect(ok).toEqual({ ok: true, pick: 2, step: forcedErrorFromOutput(a.slice(0, 32), 100, 1_000_000, 1, 10) })
    expect(check(4, bob.publicKey)).toEqual({ ok: false, reason: 'InvalidVrfProof' }) // another task
    expect(check(3, pair('Charlie').publicKey)).toEqual({ ok: false, reason: 'InvalidVrfProof' }) // another key
    const other = a.slice(0, 32); other[5] ^= 1
    expect(check(3, bob.publicKey, other).ok).toBe(false) // another output
    expect(() => forcedErrorTranscript(3, seed, 0)).toThrow(/pick/)
    expect(() => forcedErrorTranscript(3, seed, FORCED_ERRORS_PER_DRAW + 1)).toThrow(/pick/)
    // the whole draw: every pick, in order
    const vrfs = Array.from({ length: FORCED_ERRORS_PER_DRAW }, (_, j) => bob.vrfSign(forcedErrorTranscript(3, seed, j + 1), FORCED_ERROR_VRF_CONTEXT))
    const task = { publicKey: bob.publicKey, taskId: 3, selectionSeed: seed, steps: 100, ppm: 1_000_000, rootEvery: 1, checkpointEvery: 10 }
    const draw = (v: Uint8Array[]) => checkDrawReveal({ ...task, outputs: v.map(x => x.slice(0, 32)), proofs: v.map(x => x.slice(32)) }, verify)
    expect(draw(vrfs)).toEqual({ ok: true, steps: forcedErrorsFromOutputs(vrfs.map(x => x.slice(0, 32)), 100, 1_000_000, 1, 10) })
    expect(draw([vrfs[1], vrfs[0], vrfs[2], vrfs[3]])).toEqual({ ok: false, reason: 'InvalidVrfProof' }) // out of order
    expect(draw(vrfs.slice(1))).toEqual({ ok: false, reason: 'InvalidVrfProof' }) // a pick left out
    // probability and range
    let hits = 0
    for (let i = 0; i < 2000; i++) {
      const out = new Uint8Array(32); new DataView(out.buffer).setUint32(0, i * 2654435761 >>> 0); out[31] = i & 0xff
      const s = forcedErrorFromOutput(out, 7, 250_000, 1, 7)
      // never the last step (its post-state is a checkpoint)
      if (s !== null) { hits++; expect(s).toBeGreaterThanOrEqual(0); expect(s).toBeLessThan(6) }
    }
    expect(hits).toBeGreaterThan(400)
    expect(hits).toBeLessThan(600)
    expect(forcedErrorFromOutput(a.slice(0, 32), 100, 0, 1, 10)).toBeNull()
  })

  it('a pick marks a committed leaf that is not a checkpoint, uniformly; none when every committed leaf is one', () => {
    const seen = new Map<number, number>()
    for (let i = 0; i < 3000; i++) {
      const out = new Uint8Array(32); new DataView(out.buffer).setUint32(0, i * 2654435761 >>> 0); out[31] = i & 0xff
      const f = forcedErrorFromOutput(out, 20, 1_000_000, 2, 6)!
      seen.set(f + 1, (seen.get(f + 1) ?? 0) + 1)
    }
    // committed states 2, 4, … 18 below 20, less the checkpoints 6, 12, 18
    expect([...seen.keys()].sort((x, y) => x - y)).toEqual([2, 4, 8, 10, 14, 16])
    for (const n of seen.values()) expect(n).toBeGreaterThan(400)
    expect(forcedErrorRoom(20, 2, 6)).toBe(6)
    expect(forcedErrorRoom(20, 2, 2)).toBe(0)
    expect(forcedErrorRoom(1, 1, 1)).toBe(0)
    expect(forcedErrorFromOutput(new Uint8Array(32), 20, 1_000_000, 4, 4)).toBeNull()
  })
})

describe('forced errors on chain', () => {
  it('the task does not show the forced step; after the ruling the solver reveals its VRF: no slash, the jackpot out of its reward', async () => {
    const { run, step } = forced
    const side = forcedOf(run)
    // Dave is the task's one assigned verifier (blind accepts: test/adversarial/verification-pay.test.ts)
    const h = await taskOnChain(run, side, { forcedErrorPpm: 1_000_000, verifierCount: 1, verifiers: ['Dave'] })
    const t0 = taskOf(h) as unknown as Record<string, unknown>
    expect(t0.revealedForcedError).toBeNull()
    expect('forcedError' in t0).toBe(false)
    expect(drawOn(h)).toMatchObject({ step, steps: forced.steps, output: forced.output, proof: expect.any(String) })
    // nobody gives a verdict before the chain draws the verifiers, in the block after the randomness block
    expect(verdict(h, 'Dave', false, [step])).toBe('Arbitration.NotAssigned')
    // Dave rejects (and disputes); Eve, a whistleblower, cannot give a verdict
    expect(verdict(h, 'Dave', false, [step])).toBeUndefined()
    expect(verdict(h, 'Eve', true, harnessSample(h, 'Eve'))).toBe('Arbitration.NotVerifier')
    // nothing to reveal before a ruling at that step
    expect(reveal(h, 'Bob', forced.output, forced.proof)).toBe('Arbitration.NoRulingAtForcedStep')
    expect(open(h, 'Dave', step)).toBeUndefined()
    const o = playDispute(h, run, side, honest(run), { disputeId: 0, challengerName: 'Dave', disputedStep: step })
    expect(o.error).toBeUndefined()
    expect(o.status).toBe('ChallengerWon')
    expect(o.events).not.toContain('Arbitration.Slashed')
    expect(o.events).not.toContain('Arbitration.JackpotPaid')
    expect(h.reserved('Dave')).toBe(STAKE) // the bond is back at once, whatever the solver does
    expect(taskOf(h).rulings.map(r => [r.outcome, r.claimKind])).toEqual([['AwaitingReveal', 'State']])
    expect(o.claim?.kind).toBe('state') // tapes agree: one move, no bisection
    expect(taskOf(h).rulings[0].honestPost).toBe('0x' + run.roots[step + 1]) // the honest post-state its @state entry hashes to
    // forged reveals are refused with a clear module error
    const charlie = drawOn(h, 'Charlie')
    expect(reveal(h, 'Bob', charlie.output, charlie.proof)).toBe('Arbitration.InvalidVrfProof')
    const bad = forced.proof.slice(0, 10) + (forced.proof[10] === '0' ? '1' : '0') + forced.proof.slice(11)
    expect(reveal(h, 'Bob', forced.output, bad)).toBe('Arbitration.InvalidVrfProof')
    expect(reveal(h, 'Dave', forced.output, forced.proof)).toBe('Arbitration.NotSelectedSolver')
    // the real one
    const fresh = drawOn(h) // a new (randomized) proof of the same output verifies too
    // the VRF alone no longer excuses: the committed post-state must be shown to differ in the forced element only
    expect(reveal(h, 'Bob', fresh.output, fresh.proof, '0x')).toBe('Arbitration.NotExactForcedError')
    const r = h.run('Bob', 'Arbitration', 'reveal_forced_error', { taskId: 0, vrfOutput: fresh.output, vrfProof: fresh.proof, exactness: revealOf(run, side) })
    expect(r.error).toBeUndefined()
    expect(r.events).toContain('Arbitration.ForcedErrorRevealed')
    expect(taskOf(h).revealedForcedError).toBe(step)
    expect(taskOf(h).rulings.map(x => x.outcome)).toEqual(['ForcedError'])
    expect(reveal(h, 'Bob', fresh.output, fresh.proof)).toBe('Arbitration.AlreadyRevealed')
    const [daveFree, bobFree, treasury, rent] = [h.free('Dave'), h.free('Bob'), h.free(TREASURY), h.rentPaid('Alice')]
    const ev = settle(h)
    expect(ev.filter(e => e === 'Arbitration.JackpotPaid')).toHaveLength(1)
    expect(ev).not.toContain('Arbitration.SolverPenalized')
    expect(taskOf(h).phase).toBe('Settled')
    expect(nodeOf(h, 'Bob').stake).toBe(STAKE)
    // the jackpot comes out of the solver's reward, not the treasury: a puppet catching it gains the coalition nothing
    expect(h.free('Bob') - bobFree).toBe(600n * UNIT - JACKPOT)
    // the caught forced error's part of the jackpot, and the reward of the verdict that rejected a wrong step
    const part = jackpotParts(JACKPOT, forced.steps).get(step)!
    expect(h.free('Dave') - daveFree).toBe(part + 100n * UNIT)
    // the treasury pays nothing; it receives the submitter's capacity rent (docs/economics.md, "Capacity griefing") and the uncaught forced errors' parts
    expect(h.free(TREASURY)).toBe(treasury + h.rentPaid('Alice') - rent + JACKPOT - part)
  })

  it('two challengers of one forced error within the jackpot window share it; both bonds are refunded', async () => {
    const { run, step } = forced
    const side = forcedOf(run)
    // clocks long enough for one game to wait while the other is played
    const h = await taskOnChain(run, side, { forcedErrorPpm: 1_000_000, disputeClock: 400, challengeWindow: 200, verifiers: ['Dave', 'Eve'] })
    h.advance(1)
    expect(verdict(h, 'Dave', false, [step])).toBeUndefined()
    expect(verdict(h, 'Eve', false, [step])).toBeUndefined()
    expect(open(h, 'Dave', step)).toBeUndefined() // dispute 0
    expect(open(h, 'Eve', step)).toBeUndefined() // dispute 1
    expect(h.reserved('Eve')).toBe(STAKE + 100n * UNIT)
    // Eve's game ends first: adjudication order is the solver's pace, it does not decide the jackpot
    expect(playDispute(h, run, side, honest(run), { disputeId: 1, challengerName: 'Eve', disputedStep: step }).status).toBe('ChallengerWon')
    expect(playDispute(h, run, side, honest(run), { disputeId: 0, challengerName: 'Dave', disputedStep: step }).status).toBe('ChallengerWon')
    expect(reveal(h, 'Bob', forced.output, forced.proof)).toBeUndefined()
    const [dave, eve, bob, treasury, rent] = [h.free('Dave'), h.free('Eve'), h.free('Bob'), h.free(TREASURY), h.rentPaid('Alice')]
    const ev = settle(h)
    expect(taskOf(h).phase).toBe('Settled')
    expect(ev.filter(e => e === 'Arbitration.JackpotPaid')).toHaveLength(2)
    // half the forced error's part of the jackpot each, plus the reward of a rejecting verdict that caught the error
    const part = jackpotParts(JACKPOT, forced.steps).get(step)!
    expect(h.free('Dave') - dave).toBe(part / 2n + 100n * UNIT)
    expect(h.free('Eve') - eve).toBe(part / 2n + 100n * UNIT)
    expect(h.reserved('Eve')).toBe(STAKE)
    expect(h.free(TREASURY)).toBe(treasury + h.rentPaid('Alice') - rent + JACKPOT - part)
    expect(h.free('Bob') - bob).toBe(600n * UNIT - JACKPOT)
    expect(nodeOf(h, 'Bob').stake).toBe(STAKE)
  })

  it('a forced error not revealed in time costs the solver like any lost dispute; a late reveal is refused', async () => {
    const { run, step } = forced
    const side = forcedOf(run)
    const h = await taskOnChain(run, side, { forcedErrorPpm: 1_000_000, challengeWindow: 200 })
    expect(open(h, 'Dave', step)).toBeUndefined()
    expect(playDispute(h, run, side, honest(run), { disputeId: 0, challengerName: 'Dave', disputedStep: step }).status).toBe('ChallengerWon')
    expect(h.advance(REVEAL_WINDOW)).not.toContain('Arbitration.SolverPenalized') // the deadline block still allows a reveal
    const ev = h.advance(1)
    expect(ev).toContain('Arbitration.SolverPenalized')
    expect(nodeOf(h, 'Bob').stake).toBe(STAKE / 2n)
    expect(reveal(h, 'Bob', forced.output, forced.proof)).toBe('Arbitration.RevealTooLate')
    expect(settle(h)).not.toContain('Arbitration.JackpotPaid')
    expect(taskOf(h).phase).toBe('Failed')
  })
})

describe('wrong verdicts cost', () => {
  it('a proof ruled wrong (no forced error): the solver is slashed after the reveal window; the accepts go unpaid, none is slashed (a ruling is about the defender\'s tape)', async () => {
    const run = base
    const side = cheat(run)
    // forced errors off: the solver has nothing to reveal; 44 verifiers: one sampled step each of the 5
    const h = await taskOnChain(run, side, { verifierCount: 44, verifierReward: 5n * UNIT, extraVerifiers: 41 })
    expect(verdict(h, 'Eve', true, [run.step])).toBe('Arbitration.NotAssigned') // the block after the commit: nobody is drawn yet
    const [eveSample, ferdieSample] = [harnessSample(h, 'Eve'), harnessSample(h, 'Ferdie')]
    expect(ferdieSample).toHaveLength(1)
    expect(ferdieSample).not.toContain(run.step)
    expect(verdict(h, 'Eve', true, [...new Set([...eveSample, run.step])])).toBeUndefined() // checked the bad step and accepted it
    expect(verdict(h, 'Ferdie', true, [0, 1, 2, 3, 4].filter(s => s !== run.step && !ferdieSample.includes(s)))).toBe('Arbitration.SampleNotChecked')
    expect(verdict(h, 'Ferdie', true, ferdieSample)).toBeUndefined() // checked its sample, not the bad step
    expect(open(h, 'Dave', run.step)).toBeUndefined()
    const o = playDispute(h, run, side, honest(run), { disputeId: 0, challengerName: 'Dave', disputedStep: run.step })
    expect(o.status).toBe('ChallengerWon')
    expect(nodeOf(h, 'Bob').stake).toBe(STAKE)
    const mine = drawOn(h)
    expect(mine.step).toBeNull()
    expect(reveal(h, 'Bob', mine.output, mine.proof)).toBe('Arbitration.NoForcedError')
    const dave = h.free('Dave')
    const ev = h.advance(REVEAL_WINDOW + 1)
    expect(ev).toContain('Arbitration.SolverPenalized')
    // a solver can lose a dispute of a correct step on purpose: the ruling slashes no verdict (docs/economics.md "Thrown disputes")
    expect(ev).not.toContain('Arbitration.VerdictSlashed')
    expect(nodeOf(h, 'Bob').stake).toBe(STAKE / 2n)
    expect(nodeOf(h, 'Eve').stake).toBe(STAKE)
    expect(nodeOf(h, 'Ferdie').stake).toBe(STAKE)
    // the challenger gets the winner's share of the solver's slash (winner_share_ppm = 50 %)
    expect(h.free('Dave') - dave).toBe(STAKE / 4n)
    const [eve, ferdie] = [h.free('Eve'), h.free('Ferdie')]
    settle(h)
    expect(taskOf(h).phase).toBe('Failed')
    // neither accepting verdict stood: no reward
    expect(h.free('Eve')).toBe(eve)
    expect(h.free('Ferdie')).toBe(ferdie)
  })
})
