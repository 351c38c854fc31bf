import { Keyring } from '@polkadot/keyring'
import { u8aToHex } from '@polkadot/util'
import { beforeAll, describe, expect, it } from 'vitest'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import { requiredSample, sampleHoldsTransition } from '../../protocols/verification/verdict.js'
import { harnessAssignments, harnessSample } from '../helpers/verdict-sample.js'
import type { Harness } from '../unit/chain/harness.js'
import { jackpotParts } from '../../devnet/chain/runtime/jackpot.js'
import { STAKE, advanceRevealing, drawOn, forcedTask, honest, honestRun, playDispute, taskOf, taskOnChain, type ForcedRun } from '../unit/dispute/fixture.js'
import { fromHex, merkleRoot, toHex } from '../../protocols/commit/merkle.js'
import { revealOf, forcedSide } from '../unit/dispute/forced-fixture.js'

// Copied disputes of a forced error. Once a verifier's open_dispute is
// included, its step is public; anyone registered can open its own dispute
// there, re-run that one step, win the same `state` claim and, before, take an
// equal share of the jackpot: n copies left the verifier that found it
// J/(n + 1), and a solver's puppet that opened at once (it knows the step from
// selection on) took the whole jackpot from an honest finder slower than the
// jackpot window. Now the jackpot goes only to challengers the chain drew as
// verifiers of the task whose own sample holds the forced step (its segment at
// m > 1). Each test fails if a copier is paid or the finder diluted; honest
// independent finders still share.

const JACKPOT = 200n * UNIT
const V = 100n * UNIT
let forced: ForcedRun
beforeAll(async () => { forced = await forcedTask() }, 120_000)

const worth = (h: Harness, n: string): bigint => h.free(n) + h.reserved(n)
const open = (h: Harness, who: string, f = forced): string | undefined =>
  h.run(who, 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: f.step }).error
const reject = (h: Harness, who: string, f = forced): string | undefined =>
  h.run(who, 'Arbitration', 'submit_verdict', { taskId: 0, accept: false, checkedSteps: [f.step] }).error
function play (h: Harness, who: string, disputeId: number, f = forced): void {
  const side = forcedSide(f.run)
  expect(playDispute(h, f.run, side, honest(f.run), { disputeId, challengerName: who, disputedStep: f.step }).status).toBe('ChallengerWon')
}
const reveal = (h: Harness, f = forced): string | undefined =>
  h.run('Bob', 'Arbitration', 'reveal_forced_error', { taskId: 0, vrfOutput: f.output, vrfProof: f.proof, exactness: revealOf(f.run, forcedSide(f.run)) }).error
function settle (h: Harness): string[] {
  const ev: string[] = []
  for (let i = 0; i < 300 && taskOf(h).phase === 'Verifying'; i++) ev.push(...advanceRevealing(h))
  expect(taskOf(h).phase).toBe('Settled')
  return ev
}
/** sybil accounts (whistleblower role only, never drawn), funded by Alice; the cost of each is a returned stake */
function sybils (h: Harness, n: number): string[] {
  const kr = new Keyring({ type: 'sr25519' })
  const out: string[] = []
  for (let i = 1; i <= n; i++) {
    const name = `Sybil${i}`
    h.accounts[name] = u8aToHex(kr.addFromUri(`//${name}`).publicKey)
    expect(h.run('Alice', 'Balances', 'transfer_keep_alive', { dest: { Id: h.accounts[name] }, value: 2n * STAKE }).error).toBeUndefined()
    expect(h.run(name, 'Arbitration', 'register_node', h.registerArgs(name, 8, STAKE)).error).toBeUndefined()
    out.push(name)
  }
  return out
}

describe('copied disputes do not dilute a forced error\'s jackpot', () => {
  it('copies of the finders\' disputes by sybils get nothing; the two drawn verifiers that found it share the whole jackpot', async () => {
    const { run } = forced
    // Dave and Eve are the two verifiers drawn; Ferdie and three sybils only watch the chain
    const h = await taskOnChain(run, forcedSide(run), { forcedErrorPpm: 1_000_000, verifierCount: 2, disputeClock: 400, challengeWindow: 200, verifiers: ['Dave', 'Eve'] })
    const copiers = ['Ferdie', ...sybils(h, 3)]
    h.advance(1)
    // on this 5-step task every sample is the whole run: both drawn verifiers had to check the forced step
    for (const v of ['Dave', 'Eve']) expect(harnessSample(h, v)).toContain(forced.step)
    const before = Object.fromEntries(['Bob', 'Dave', 'Eve', ...copiers].map(n => [n, worth(h, n)]))
    expect(reject(h, 'Dave')).toBeUndefined()
    expect(open(h, 'Dave')).toBeUndefined()
    // DisputeOpened names the step: each copier opens its own dispute there at once and wins the same claim
    copiers.forEach(c => expect(open(h, c)).toBeUndefined())
    play(h, 'Dave', 0)
    copiers.forEach((c, i) => play(h, c, i + 1))
    expect(reveal(h)).toBeUndefined()
    // Eve's replay was slower: she opens later, within the challenge window
    h.advance(60)
    expect(reject(h, 'Eve')).toBeUndefined()
    expect(open(h, 'Eve')).toBeUndefined()
    play(h, 'Eve', copiers.length + 1)
    expect(taskOf(h).rulings.every(r => r.outcome === 'ForcedError')).toBe(true)
    const ev = settle(h)
    const gain = (n: string): bigint => worth(h, n) - before[n]
    expect(ev.filter(e => e === 'Arbitration.JackpotPaid')).toHaveLength(2)
    // the finders: half the forced error's part of the jackpot each (before: a sixth each, or nothing for the slower one) and their verdicts' reward
    const part = jackpotParts(JACKPOT, forced.steps).get(forced.step)!
    expect(gain('Dave')).toBe(part / 2n + V)
    expect(gain('Eve')).toBe(part / 2n + V)
    // the copiers won their claims: bond back, nothing more
    for (const c of copiers) expect(gain(c)).toBe(0n)
    expect(gain('Bob')).toBe(600n * UNIT - JACKPOT)
  }, 120_000)

  it('the solver\'s puppet opening at its forced step right after the commit takes nothing from the verifier that finds it later', async () => {
    const { run } = forced
    const h = await taskOnChain(run, forcedSide(run), { forcedErrorPpm: 1_000_000, verifierCount: 1, disputeClock: 400, challengeWindow: 200, verifiers: ['Dave'] })
    const before = { coalition: worth(h, 'Bob') + worth(h, 'Ferdie'), dave: worth(h, 'Dave') }
    // Ferdie, Bob's puppet, knows the step from selection on: it opens in the block after the commit, before any verifier is drawn
    expect(open(h, 'Ferdie')).toBeUndefined()
    play(h, 'Ferdie', 0)
    expect(reveal(h)).toBeUndefined()
    // Dave, drawn in the next block, replays and finds it long after (60 blocks: past the old 50-block jackpot window)
    h.advance(60)
    expect(reject(h, 'Dave')).toBeUndefined()
    expect(open(h, 'Dave')).toBeUndefined()
    play(h, 'Dave', 1)
    const ev = settle(h)
    expect(ev.filter(e => e === 'Arbitration.JackpotPaid')).toHaveLength(1)
    expect(worth(h, 'Dave') - before.dave).toBe(jackpotParts(JACKPOT, forced.steps).get(forced.step)! + V)
    // the coalition pays the premium as an honest solver would: it gets its reward less the jackpot
    expect(worth(h, 'Bob') + worth(h, 'Ferdie') - before.coalition).toBe(600n * UNIT - JACKPOT)
  }, 120_000)

  it('a drawn verifier whose own sample missed the forced step gets no share for copying it; one whose sample held it does', async () => {
    const { run } = forced
    // 44 verifiers on the 5-step task: one sampled step each. Their registrations move the selection's block,
    // so Bob's draw on this chain is another step: the proof is committed with the forced error where it falls
    const h = await taskOnChain(run, forcedSide(run), {
      forcedErrorPpm: 1_000_000, verifierCount: 44, verifierReward: 5n * UNIT, extraVerifiers: 41, disputeClock: 400, challengeWindow: 200, commit: false
    })
    const draw = drawOn(h)
    expect(draw.step).not.toBeNull()
    const f: ForcedRun = { ...draw, run: await honestRun(run.program, run.ds, draw.step!), step: draw.step! }
    const roots = forcedSide(f.run).roots
    expect(h.run('Bob', 'Arbitration', 'commit_proof', { taskId: 0, proofRoot: '0x' + toHex(merkleRoot(roots.map(fromHex))), finalStateRoot: '0x' + roots[roots.length - 1], stepCount: 5, checkpoints: [] }).error).toBeUndefined()
    // the randomness block, then the block that draws the verifiers
    h.advance(2)
    const drawn = harnessAssignments(h)!.verifiers.map(v => Object.entries(h.accounts).find(([, a]) => a === v.verifier)![0])
    const finders = drawn.filter(n => harnessSample(h, n).includes(f.step))
    const copier = drawn.find(n => !harnessSample(h, n).includes(f.step))
    expect(finders.length).toBeGreaterThan(0)
    expect(copier).toBeDefined()
    const before = Object.fromEntries(drawn.map(n => [n, worth(h, n)]))
    // every verifier whose sample holds the forced step replays it and disputes; one whose sample missed it copies them
    for (const [i, n] of [...finders, copier!].entries()) {
      expect(reject(h, n, f)).toBeUndefined()
      expect(open(h, n, f)).toBeUndefined()
      play(h, n, i, f)
      // revealed within the first ruling's window (each game takes blocks); later rulings on the same honest post-state are excused at once
      if (i === 0) expect(reveal(h, f)).toBeUndefined()
    }
    // the rest accept their samples, which missed it: a quorum of standing verdicts
    for (const n of drawn.filter(x => !finders.includes(x) && x !== copier)) {
      expect(h.run(n, 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: harnessSample(h, n) }).error).toBeUndefined()
    }
    const ev = settle(h)
    expect(ev.filter(e => e === 'Arbitration.JackpotPaid')).toHaveLength(finders.length)
    for (const n of finders) expect(worth(h, n) - before[n]).toBe(jackpotParts(JACKPOT, f.steps).get(f.step)! / BigInt(finders.length) + 5n * UNIT)
    // its reject was right (the step does not replay), so it is paid as a verdict, but no jackpot share
    expect(worth(h, copier!) - before[copier!]).toBe(5n * UNIT)
  }, 120_000)
})

describe('who had to check a forced step (sampleHoldsTransition)', () => {
  it('at m > 1 a sample holds every transition of the segments it names, and a diverged proof\'s last step is every verifier\'s', () => {
    const seed = '0x' + '11'.repeat(32)
    const account = '0x' + '22'.repeat(32)
    const [steps, m] = [4000, 4]
    // one verifier of 4: a sample of its share of the segments (named by their last step)
    const sample = requiredSample(seed, account, steps, 4, m)
    const segments = new Set(sample.map(s => Math.floor((s - 1) / m)))
    expect(segments.size).toBeGreaterThan(0)
    expect(segments.size).toBeLessThan(steps / m)
    for (let f = 0; f < steps; f++) expect(sampleHoldsTransition(sample, f, steps, false, m)).toBe(segments.has(Math.floor(f / m)))
    // at m = 1, the transition itself
    const one = requiredSample(seed, account, steps, 4)
    for (let f = 0; f < steps; f++) expect(sampleHoldsTransition(one, f, steps, false, 1)).toBe(one.includes(f + 1))
    // a diverged proof of 37 steps: its last step (transition 37, one past its segments) is every accept's, sampled or not
    expect(sampleHoldsTransition([], 37, 37, true, m)).toBe(true)
    expect(sampleHoldsTransition([], 37, 37, false, m)).toBe(false)
  })
})
