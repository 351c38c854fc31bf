import { beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import { TREASURY } from '../../devnet/chain/runtime/balances.js'
import type { Params, TaskInfo } from '../../devnet/chain/runtime/arbitration.js'
import { rentDeposit } from '../../devnet/chain/runtime/capacity-rent.js'
import { MAX_VERIFY_EXTENSIONS } from '../../devnet/chain/runtime/spec.js'
import { assignedNames, harnessAssignments, harnessSample } from '../helpers/verdict-sample.js'
import * as reference from '../../protocols/reference/index.js'
import { minWindow, taskProgram } from '../helpers/program.js'
import { Harness } from '../unit/chain/harness.js'
import { jackpotParts } from '../../devnet/chain/runtime/jackpot.js'
import { advanceRevealing, honest, playDispute, taskOf, taskOnChain, type Run, forcedTask, type ForcedRun } from '../unit/dispute/fixture.js'
import { revealOf, forcedSide } from '../unit/dispute/forced-fixture.js'

// Rational attackers around verification and its pay: a submitter or solver
// verifying its own task, a task paid though nobody verified it, a solver's
// puppet milking its forced error, a lazy verifier, a solver re-rolling its
// selection. Each test fails if the attacker ends up ahead.

const H = (b: number): string => '0x' + b.toString(16).padStart(2, '0').repeat(32)
const STAKE = 2000n * UNIT
const REWARD = 600n * UNIT

describe('who verifies, and whether anybody did', () => {
  let h: Harness
  const program = taskProgram({ steps: 100, checkpointEvery: 10 })
  // the shortest window the chain takes for it (one verifier)
  const WINDOW = minWindow(program, 1)
  const task = (o: Record<string, unknown> = {}): Record<string, unknown> => ({
    programHash: program.programHash, program: program.programHex, datasetRoot: H(2), skeletonRoot: H(3), steps: 100,
    checkpointEvery: 10, escrow: 1000n * UNIT, solverReward: REWARD, verifierReward: 100n * UNIT, verifierCount: 1,
    challengeWindow: WINDOW, solveTimeout: 20, ...o
  })
  const solverOf = (): string => Object.entries(h.accounts).find(([, v]) => v === taskOf(h).solver)![0]
  const verdict = (w: string): string | undefined => h.run(w, 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: harnessSample(h, w) }).error
  const worth = (w: string): bigint => h.free(w) + h.reserved(w)
  const advanceUntilFinal = (): string[] => {
    const ev: string[] = []
    for (let i = 0; i < 100 && taskOf(h).phase === 'Verifying'; i++) ev.push(...h.advance(1))
    return ev
  }

  beforeEach(async () => {
    h = await Harness.create({ reference })
    // Alice submits and is also a registered verifier; Bob is the only solver (and a verifier)
    expect(h.run('Alice', 'Arbitration', 'register_node', h.registerArgs('Alice', 1 | 4, STAKE, 'Alice')).error).toBeUndefined()
    expect(h.run('Bob', 'Arbitration', 'register_node', h.registerArgs('Bob', 2 | 4, STAKE, 'Bob')).error).toBeUndefined()
    expect(h.run('Dave', 'Arbitration', 'register_node', h.registerArgs('Dave', 4, STAKE, 'Dave')).error).toBeUndefined()
    expect(h.run('Alice', 'Arbitration', 'submit_task', task()).error).toBeUndefined()
    h.advance(1)
    expect(solverOf()).toBe('Bob')
    expect(h.run('Bob', 'Arbitration', 'commit_proof', { taskId: 0, proofRoot: H(9), finalStateRoot: H(8), stepCount: 100, checkpoints: [] }).error).toBeUndefined()
    // the randomness block, then the block that draws the verifiers from its hash
    h.advance(2)
  })

  it('neither the submitter nor the solver can vouch for the task, and neither is ever drawn', () => {
    expect(assignedNames(h)).toEqual(['Dave'])
    expect(verdict('Alice')).toBe('Arbitration.SubmitterCannotVerify')
    expect(verdict('Bob')).toBe('Arbitration.SolverCannotVerify')
    expect(taskOf(h).verdicts).toEqual([])
  })

  it('a task nobody verified is not paid: after the extensions the escrow goes back and the solver gets nothing (nor is slashed)', () => {
    const [alice, bob] = [h.free('Alice'), h.free('Bob')]
    const ev = advanceUntilFinal()
    expect(ev.filter(e => e === 'Arbitration.VerificationExtended')).toHaveLength(MAX_VERIFY_EXTENSIONS)
    expect(ev).toContain('Arbitration.TaskUnverified')
    expect(ev).not.toContain('Arbitration.TaskSettled')
    expect(taskOf(h).phase).toBe('Unverified')
    expect(h.free('Bob')).toBe(bob)
    expect(h.reserved('Bob')).toBe(STAKE)
    // the escrow back, and the rent deposit less the rent of the verifier stake the task held (docs/economics.md, "Capacity griefing")
    const deposit = rentDeposit(h.read<Params>('Arbitration', 'Params')!, taskOf(h))
    expect(h.rentPaid('Alice')).toBeGreaterThan(0n)
    expect(h.free('Alice') - alice).toBe(1000n * UNIT + deposit - h.rentPaid('Alice'))
    expect(h.reserved('Alice')).toBe(STAKE)
  })

  it('a silent assigned verifier is replaced at the extension; the replacement\'s verdict completes the quorum and the task is paid then', () => {
    const bob = h.free('Bob')
    expect(assignedNames(h)).toEqual(['Dave'])
    // Eve registers after the draw: she is not assigned, her verdict is refused
    expect(h.run('Eve', 'Arbitration', 'register_node', h.registerArgs('Eve', 4, STAKE, 'Eve')).error).toBeUndefined()
    expect(verdict('Eve')).toBe('Arbitration.NotAssigned')
    const dave = worth('Dave')
    // the round closes after challenge_end; the next block draws the replacement
    const ev = h.advance(WINDOW - 1)
    expect(taskOf(h).extensions).toBe(1)
    expect(ev).toContain('Arbitration.AssignmentLapsed')
    expect(ev).toContain('Arbitration.VerifiersAssigned')
    // Dave stayed silent: he cannot vote any more, and paid the silence penalty
    expect(assignedNames(h)).toEqual(['Eve'])
    expect(verdict('Dave')).toBe('Arbitration.NotAssigned')
    expect(worth('Dave')).toBeLessThan(dave)
    expect(verdict('Eve')).toBeUndefined()
    expect(advanceUntilFinal()).toContain('Arbitration.TaskSettled')
    expect(taskOf(h).phase).toBe('Settled')
    expect(h.free('Bob') - bob).toBe(REWARD)
    expect(worth('Dave')).toBeLessThan(dave)
  })

  it('a selected solver cannot re-roll the selection for free', () => {
    expect(h.run('Bob', 'Arbitration', 'register_node', h.registerArgs('Bob', 2, STAKE, 'Bob2')).error).toBe('Arbitration.AlreadyRegistered')
    expect(h.run('Alice', 'Arbitration', 'submit_task', task()).error).toBeUndefined()
    h.advance(1)
    const t1 = h.read<TaskInfo>('Arbitration', 'Tasks', 1)!
    expect(t1.solver).toBe(h.accounts.Bob)
    const [before, rent] = [h.read<{ stake: bigint }>('Arbitration', 'Nodes', h.accounts.Bob)!.stake, h.rentPaid('Bob')]
    const r = h.run('Bob', 'Arbitration', 'release_task', { taskId: 1 })
    expect(r.error).toBeUndefined()
    const after = h.read<{ stake: bigint }>('Arbitration', 'Nodes', h.accounts.Bob)!.stake
    const bond = h.read<{ disputeBond: bigint }>('Arbitration', 'Params')!.disputeBond
    // the bond, and the rent of the verifier stake its selection held for the block it took to hand it back
    expect(h.rentPaid('Bob') - rent).toBeGreaterThan(0n)
    expect(before - after).toBe(bond + h.rentPaid('Bob') - rent)
  })
})

describe('forced errors that cannot be milked', () => {
  const JACKPOT = 200n * UNIT
  let forced: ForcedRun
  beforeAll(async () => { forced = await forcedTask() }, 120_000)
  /** the solver's forced error: the leaf after the step committed as the forced mark of its honest root */
  const cheat = (run: Run) => forcedSide(run)
  const settle = (h: Harness): string[] => {
    const ev: string[] = []
    for (let i = 0; i < 200 && taskOf(h).phase === 'Verifying'; i++) ev.push(...advanceRevealing(h))
    return ev
  }

  /** Bob solves with Ferdie as his puppet; Dave is an honest verifier. Returns each one's gain. */
  async function scenario (puppet: boolean): Promise<{ coalition: bigint, dave: bigint, treasury: bigint }> {
    const { run, step } = forced
    const side = cheat(run)
    // Dave is the task's only verifier, so the chain assigns him; Ferdie is a whistleblower
    const h = await taskOnChain(run, side, { forcedErrorPpm: 1_000_000, verifierCount: 1, disputeClock: 400, challengeWindow: 200, verifiers: ['Dave'] })
    const total = (n: string): bigint => h.free(n) + h.reserved(n)
    const start: Record<string, bigint> = { Bob: total('Bob'), Ferdie: total('Ferdie'), Dave: total('Dave') }
    const treasury = h.free(TREASURY)
    let id = 0
    // the randomness block: verifiers are drawn in the next one
    h.advance(1)
    if (puppet) {
      // the puppet opens first, in the block right after the commit: Bob told it the step
      expect(h.run('Ferdie', 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: step }).error).toBeUndefined()
      expect(playDispute(h, run, side, honest(run), { disputeId: id++, challengerName: 'Ferdie', disputedStep: step }).status).toBe('ChallengerWon')
      expect(h.run('Bob', 'Arbitration', 'reveal_forced_error', { taskId: 0, vrfOutput: forced.output, vrfProof: forced.proof, exactness: revealOf(run, side) }).error).toBeUndefined()
    }
    // Dave replays, finds the step and disputes within the jackpot window
    expect(h.run('Dave', 'Arbitration', 'submit_verdict', { taskId: 0, accept: false, checkedSteps: [step] }).error).toBeUndefined()
    expect(h.run('Dave', 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: step }).error).toBeUndefined()
    expect(playDispute(h, run, side, honest(run), { disputeId: id, challengerName: 'Dave', disputedStep: step }).status).toBe('ChallengerWon')
    if (!puppet) expect(h.run('Bob', 'Arbitration', 'reveal_forced_error', { taskId: 0, vrfOutput: forced.output, vrfProof: forced.proof, exactness: revealOf(run, side) }).error).toBeUndefined()
    settle(h)
    expect(taskOf(h).phase).toBe('Settled')
    const gain = (n: string): bigint => total(n) - start[n]
    return { coalition: gain('Bob') + gain('Ferdie'), dave: gain('Dave'), treasury: h.free(TREASURY) - treasury }
  }

  it('a puppet that catches its own solver\'s forced error first gains the coalition nothing and the treasury pays nothing', async () => {
    const honestCase = await scenario(false)
    const puppetCase = await scenario(true)
    // the most a coalition can take from a forced error is the reward it would have had without one
    expect(puppetCase.coalition).toBeLessThanOrEqual(REWARD)
    expect(honestCase.coalition).toBeLessThanOrEqual(REWARD)
    expect(puppetCase.treasury).toBeGreaterThanOrEqual(0n)
    expect(honestCase.treasury).toBeGreaterThanOrEqual(0n)
    // the honest verifier who found it is paid its part of the jackpot (not zero, as first-opened was; the puppet takes no share: test/adversarial/jackpot-copies.test.ts)
    expect(puppetCase.dave).toBeGreaterThan(100n * UNIT)
    expect(honestCase.dave).toBe(jackpotParts(JACKPOT, forced.steps).get(forced.step)! + 100n * UNIT)
  }, 120_000)

  it('a lazy verifier that accepts a sample containing the forced step loses stake and is not paid', async () => {
    const { run, step } = forced
    const side = cheat(run)
    // Dave and Eve are the two verifiers the task asks for; nobody else can replace a lapsed one
    const h = await taskOnChain(run, side, { forcedErrorPpm: 1_000_000, verifierCount: 2, verifiers: ['Dave', 'Eve'] })
    h.advance(1)
    // on this 5-step task every sample is the whole run, so Eve's accept lists the forced step
    const eve = harnessSample(h, 'Eve')
    expect(eve).toContain(step)
    expect(h.run('Eve', 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: eve }).error).toBeUndefined()
    expect(h.run('Dave', 'Arbitration', 'submit_verdict', { taskId: 0, accept: false, checkedSteps: [step] }).error).toBeUndefined()
    expect(h.run('Dave', 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: step }).error).toBeUndefined()
    expect(playDispute(h, run, side, honest(run), { disputeId: 0, challengerName: 'Dave', disputedStep: step }).status).toBe('ChallengerWon')
    expect(h.run('Bob', 'Arbitration', 'reveal_forced_error', { taskId: 0, vrfOutput: forced.output, vrfProof: forced.proof, exactness: revealOf(run, side) }).error).toBeUndefined()
    const eveBefore = h.free('Eve') + h.reserved('Eve')
    const ev = settle(h)
    expect(ev).toContain('Arbitration.VerdictSlashed')
    expect(h.free('Eve') + h.reserved('Eve')).toBeLessThan(eveBefore)
    // her slot did not stand and there is no other verifier to draw: no quorum, the solver is not paid
    expect(harnessAssignments(h)!.verifiers.find(v => v.verifier === h.accounts.Eve)!.status).toBe('Released')
    expect(taskOf(h).phase).toBe('Unverified')
  }, 60_000)
})
