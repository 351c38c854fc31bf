import { writeFileSync } from 'node:fs'
import { beforeAll, describe, expect, it } from 'vitest'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import { VERIFIER_SLASH_PPM } from '../../devnet/chain/runtime/spec.js'
import { createHash } from 'node:crypto'
import { drawWeighted } from '../../devnet/chain/runtime/randomness.js'
import { sampleSteps } from '../../protocols/verification/sample.js'
import { requiredSampleCount } from '../../protocols/verification/verdict.js'
import { FORCED_ERRORS_PER_DRAW } from '../../protocols/dispute/forced-error.js'
import { newProgram } from '../../protocols/program/index.js'
import { initBackend } from '../../node/train/backend.js'
import { datasetRef, syntheticDataset } from '../../node/train/dataset.js'
import { harnessSample } from '../helpers/verdict-sample.js'
import type { Harness } from '../unit/chain/harness.js'
import { forcedDrawOf, honest, honestRun, playDispute, taskOf, taskOnChain, tamperOp, type Run } from '../unit/dispute/fixture.js'
import { revealOf, forcedSide } from '../unit/dispute/forced-fixture.js'

// The expected profit of each rational deviation, against honest play, at the
// devnet's parameters. Every payoff is measured on the real runtime (a task
// run to its end on the pure chain, with real claims on a real tape); the
// probabilities that weigh them come from the protocol's own sampling
// (protocols/verification). A deviation whose expected profit is not negative
// fails the test. ECONOMICS_DRAWS sets the Monte-Carlo draws (the bench uses
// more); ECONOMICS_FIGURES names a file for the table (npm run bench -- economics).

const DRAWS = Number(process.env.ECONOMICS_DRAWS ?? 400)
const STAKE = 10_000n * UNIT // taskOnChain's stakes
const REWARD = 600n * UNIT
const VREWARD = 100n * UNIT
const JACKPOT = 200n * UNIT
const BOND = 100n * UNIT
const u = (x: bigint): number => Number(x) / Number(UNIT)

let run: Run
let forced: { run: Run, step: number, output: string, proof: string }
const cheat = (r: Run) => tamperOp(r, r.entries.findIndex(e => e.kernel === 'BatchMatMul'))
const total = (h: Harness, n: string): bigint => h.free(n) + h.reserved(n)
function toTheEnd (h: Harness): void { for (let i = 0; i < 300 && taskOf(h).phase === 'Verifying'; i++) h.advance(1) }

beforeAll(async () => {
  await initBackend('wasm')
  const ds = syntheticDataset(7, 64, 8)
  const p = newProgram({ model: 'mlp', dataset: datasetRef(ds), steps: 5, optimizer: 'sgd', batchSize: 4, seed: 11, checkpointEvery: 5 })
  run = await honestRun(p, ds, 2)
  const d = await forcedDrawOf(run)
  forced = { run: await honestRun(p, ds, d.step!), step: d.step!, output: d.output, proof: d.proof }
}, 120_000)

/** P(a contiguous block of `fraction` of `steps` escapes every verifier's sample), over random seeds; `perVerifier`: each one's sample size (default: its share of `verifiers`). */
function escapeProbability (steps: number, fraction: number, verifiers: number, perVerifier = requiredSampleCount(verifiers)): number {
  const n = perVerifier
  const len = Math.max(1, Math.round(steps * fraction))
  let escaped = 0
  for (let i = 0; i < DRAWS; i++) {
    const seed = '0x' + (i * 2654435761 >>> 0).toString(16).padStart(8, '0').repeat(8)
    const start = 1 + (i * 7919) % (steps - len + 1)
    const hit = Array.from({ length: verifiers }, (_, v) => sampleSteps(seed, '0x' + (v + 1).toString(16).padStart(64, '0'), steps, n)).some(s => s.some(x => x >= start && x < start + len))
    if (!hit) escaped++
  }
  return escaped / DRAWS
}

interface Row { deviation: string, honest: number, deviant: number, expected: number, note: string }
const rows: Row[] = []
/** the solver's payoffs measured by the first test: paid honestly, and caught faking */
const solverPayoffs: { honest?: bigint, caught?: bigint } = {}

describe('economics: every deviation loses money in expectation (devnet parameters)', () => {
  it('a solver faking 10% of a 1000-step task\'s steps', async () => {
    // payoffs on the runtime: honest settle, and a cheat caught by a verifier's claim
    const h1 = await taskOnChain(run, honest(run), { verifierCount: 1, verifiers: ['Eve'] })
    h1.advance(1)
    const b1 = total(h1, 'Bob')
    expect(h1.run('Eve', 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: harnessSample(h1, 'Eve') }).error).toBeUndefined()
    toTheEnd(h1)
    const honestGain = total(h1, 'Bob') - b1
    expect(honestGain).toBe(REWARD)
    const side = cheat(run)
    const h2 = await taskOnChain(run, side, { verifierCount: 1 })
    const b2 = total(h2, 'Bob')
    expect(h2.run('Dave', 'Arbitration', 'open_dispute', { taskId: 0, defender: h2.accounts.Bob, kind: 'SolverProof', disputedStep: run.step }).error).toBeUndefined()
    expect(playDispute(h2, run, side, honest(run), { disputeId: 0, challengerName: 'Dave', disputedStep: run.step }).status).toBe('ChallengerWon')
    toTheEnd(h2)
    const caughtGain = total(h2, 'Bob') - b2
    expect(caughtGain).toBeLessThan(0n)
    // an undetected cheat is paid like honest work (and saves 10% of the training, priced at 0 here)
    solverPayoffs.honest = honestGain
    solverPayoffs.caught = caughtGain
    const escape = escapeProbability(1000, 0.1, 2)
    const expected = escape * u(honestGain) + (1 - escape) * u(caughtGain) - u(honestGain)
    rows.push({ deviation: 'solver fakes 10% of the steps', honest: u(honestGain), deviant: u(caughtGain), expected, note: `caught with ${(100 * (1 - escape)).toFixed(1)}% (${DRAWS} draws, 2 verifiers × ${requiredSampleCount(2)} steps)` })
    expect(expected).toBeLessThan(0)
  }, 60_000)

  it('a solver faking 10% of the steps whose puppets hold half the verifier stake', () => {
    // the chain draws the 2 verifiers stake-weighted from a hash that did not exist at commit: the
    // cheat passes unreplayed only when both are puppets; any honest verifier drawn replays its own
    // sample of 22 steps (the whistleblower is not counted: a lower bound on the solver's risk)
    const { honest: honestGain, caught: caughtGain } = solverPayoffs
    expect(honestGain).toBeDefined()
    const pool = Array.from({ length: 8 }, (_, i) => ({ account: '0x' + (i + 1).toString(16).padStart(64, '0'), stake: 1000n * UNIT }))
    const puppets = new Set(pool.slice(0, 4).map(x => x.account))
    let allPuppets = 0
    for (let i = 0; i < DRAWS * 4; i++) {
      const seed = '0x' + createHash('sha256').update(`economics-draw-${i}`).digest('hex')
      if (drawWeighted(seed, 0n, 0, 2, pool).every(a => puppets.has(a))) allPuppets++
    }
    const pAll = allPuppets / (DRAWS * 4)
    const escape1 = escapeProbability(1000, 0.1, 1, requiredSampleCount(2))
    const deviant = pAll * u(honestGain!) + (1 - pAll) * (escape1 * u(honestGain!) + (1 - escape1) * u(caughtGain!))
    const expected = deviant - u(honestGain!)
    rows.push({ deviation: 'solver fakes 10% of the steps, puppets hold ½ of the verifier stake', honest: u(honestGain!), deviant, expected, note: `both verifiers puppets with ${(100 * pAll).toFixed(1)}% (${DRAWS * 4} draws; ½ · ³⁄₇ without replacement); one honest verifier catches it with ${(100 * (1 - escape1)).toFixed(1)}%` })
    expect(pAll).toBeLessThan(0.25)
    expect(expected).toBeLessThan(0)
  })

  it('a submitter keeping its escrow by its puppets\' silence', async () => {
    // worst case: Dave, Eve and Ferdie, the only verifiers, are all Alice's puppets; whoever is
    // drawn stays silent, round after round, until the task ends Unverified
    const h = await taskOnChain(run, honest(run), { verifierCount: 1 })
    const coalition = (): bigint => ['Alice', 'Dave', 'Eve', 'Ferdie'].reduce((x, n) => x + total(h, n), 0n)
    const start = coalition()
    toTheEnd(h)
    expect(taskOf(h).phase).toBe('Unverified')
    const deviant = u(coalition() - start)
    // honest play: Alice pays R + V and the drawn puppet earns V back
    const honestPlay = -u(REWARD)
    const expected = deviant - honestPlay
    rows.push({ deviation: 'submitter\'s puppets stay silent to end the task Unverified', honest: honestPlay, deviant, expected, note: 'puppets hold all the verifier stake (worst case): one is drawn and silent in each of the 3 rounds, each paying B + R (one alone already costs more than R)' })
    expect(expected).toBeLessThan(0)
  }, 60_000)

  it('a lazy verifier accepting its sample without replaying', async () => {
    const { run: r, step } = forced
    const side = forcedSide(r)
    const h = await taskOnChain(r, side, { forcedErrorPpm: 1_000_000, verifierCount: 2, verifiers: ['Dave', 'Eve'] })
    h.advance(1)
    const before = total(h, 'Eve')
    expect(h.run('Eve', 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: harnessSample(h, 'Eve') }).error).toBeUndefined()
    expect(h.run('Dave', 'Arbitration', 'submit_verdict', { taskId: 0, accept: false, checkedSteps: [step] }).error).toBeUndefined()
    expect(h.run('Dave', 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: step }).error).toBeUndefined()
    expect(playDispute(h, r, side, honest(r), { disputeId: 0, challengerName: 'Dave', disputedStep: step }).status).toBe('ChallengerWon')
    expect(h.run('Bob', 'Arbitration', 'reveal_forced_error', { taskId: 0, vrfOutput: forced.output, vrfProof: forced.proof, exactness: revealOf(r, side) }).error).toBeUndefined()
    toTheEnd(h)
    const caught = total(h, 'Eve') - before
    expect(caught).toBe(-STAKE * BigInt(VERIFIER_SLASH_PPM) / 1_000_000n)
    // on the devnet's task each of the draw's picks orders a forced error (ppm 10⁶); the lazy accept is caught
    // when one of them falls in its sample: q_n = 1 − (1 − p·q)^picks
    const q = requiredSampleCount(2) / 1000
    const p = 1
    const qn = 1 - (1 - p * q) ** FORCED_ERRORS_PER_DRAW
    const expected = -qn * (u(VREWARD) - u(caught)) // against honest play, whose replay cost is not counted
    rows.push({ deviation: 'verifier accepts without replaying', honest: u(VREWARD), deviant: u(caught), expected, note: `a forced step in its sample with q_n = 1 − (1 − p·q)^${FORCED_ERRORS_PER_DRAW} = ${qn.toFixed(3)}; unprofitable while a replay costs less than ${(-expected).toFixed(1)} units` })
    expect(expected).toBeLessThan(0)
  }, 60_000)

  it('a solver\'s puppet catching its own forced error', async () => {
    const { run: r, step } = forced
    const side = forcedSide(r)
    const scenario = async (puppet: boolean): Promise<bigint> => {
      const h = await taskOnChain(r, side, { forcedErrorPpm: 1_000_000, verifierCount: 1, disputeClock: 400, challengeWindow: 200, verifiers: ['Dave'] })
      const start = total(h, 'Bob') + total(h, 'Ferdie')
      let id = 0
      h.advance(1)
      if (puppet) {
        expect(h.run('Ferdie', 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: step }).error).toBeUndefined()
        expect(playDispute(h, r, side, honest(r), { disputeId: id++, challengerName: 'Ferdie', disputedStep: step }).status).toBe('ChallengerWon')
      }
      expect(h.run('Dave', 'Arbitration', 'submit_verdict', { taskId: 0, accept: false, checkedSteps: [step] }).error).toBeUndefined()
      expect(h.run('Dave', 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: step }).error).toBeUndefined()
      expect(playDispute(h, r, side, honest(r), { disputeId: id, challengerName: 'Dave', disputedStep: step }).status).toBe('ChallengerWon')
      expect(h.run('Bob', 'Arbitration', 'reveal_forced_error', { taskId: 0, vrfOutput: forced.output, vrfProof: forced.proof, exactness: revealOf(r, side) }).error).toBeUndefined()
      toTheEnd(h)
      return total(h, 'Bob') + total(h, 'Ferdie') - start
    }
    const honestCoalition = await scenario(false)
    const puppetCoalition = await scenario(true)
    // against what the solver has without any forced error, the puppet never gains
    const expected = u(puppetCoalition) - u(REWARD)
    rows.push({ deviation: 'puppet catches its solver\'s forced error', honest: u(honestCoalition), deviant: u(puppetCoalition), expected, note: `jackpot ${u(JACKPOT)} out of the solver's reward, only to drawn verifiers whose sample holds the step` })
    expect(expected).toBeLessThan(0)
  }, 120_000)

  it('a griefer disputing an honest solver', async () => {
    const h = await taskOnChain(run, honest(run), { verifierCount: 1 })
    const before = total(h, 'Dave')
    expect(h.run('Dave', 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: run.step }).error).toBeUndefined()
    expect(playDispute(h, run, honest(run), cheat(run), { disputeId: 0, challengerName: 'Dave', disputedStep: run.step }).status).toBe('DefenderWon')
    const gain = total(h, 'Dave') - before
    expect(gain).toBe(-BOND)
    rows.push({ deviation: 'griefer disputes an honest solver', honest: 0, deviant: u(gain), expected: u(gain), note: 'the claim is decided on one element: the honest defender always wins' })
    expect(u(gain)).toBeLessThan(0)
  }, 60_000)

  it('a solver faking an early divergence to skip the rest of its steps', async () => {
    // commit_diverged at step 2 of 5, a divergence point where the honest tape holds no NaN: paid 2/5 of R if it stood
    const fake = { stepCount: run.step, entry: run.entries.findIndex(e => e.kernel === 'BatchMatMul'), flat: 0 }
    const h = await taskOnChain(run, honest(run), { verifierCount: 1, diverged: fake })
    const before = total(h, 'Bob')
    // every verifier replays the diverged step: detection is certain
    expect(h.run('Dave', 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: run.step }).error).toBeUndefined()
    expect(playDispute(h, run, honest(run), honest(run), { disputeId: 0, challengerName: 'Dave', disputedStep: run.step, nan: { divergence: { entry: fake.entry, flat: fake.flat } } }).status).toBe('ChallengerWon')
    toTheEnd(h)
    const caught = total(h, 'Bob') - before
    expect(caught).toBeLessThan(0n)
    const expected = u(caught) - u(REWARD)
    rows.push({ deviation: 'solver fakes an early divergence', honest: u(REWARD), deviant: u(caught), expected, note: `would be paid ${u(REWARD * BigInt(run.step) / BigInt(run.program.steps))} for ${run.step} of ${run.program.steps} steps; every accept must list the diverged step, so every verifier replays it` })
    expect(expected).toBeLessThan(0)
  }, 60_000)

  it('prints the table', () => {
    expect(rows.length).toBe(7)
    const table = rows.map(r => `| ${r.deviation} | ${r.honest.toFixed(1)} | ${r.deviant.toFixed(1)} | **${r.expected.toFixed(1)}** | ${r.note} |`).join('\n')
    process.stdout.write(`ECONOMICS-FIGURES ${JSON.stringify(rows)}\n`)
    if (process.env.ECONOMICS_FIGURES !== undefined) writeFileSync(process.env.ECONOMICS_FIGURES, table + '\n')
    for (const r of rows) expect(r.expected).toBeLessThan(0)
  })
})
