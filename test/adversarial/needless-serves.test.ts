import { u8aToHex } from '@polkadot/util'
import { beforeEach, describe, expect, it } from 'vitest'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import type { TaskInfo } from '../../devnet/chain/runtime/arbitration.js'
import type { AvailabilityChallenge } from '../../devnet/chain/runtime/availability.js'
import { buildServeParts } from '../../protocols/availability/index.js'
import { merkleRoot, stateRoot } from '../../protocols/commit/index.js'
import * as reference from '../../protocols/reference/index.js'
import { STAKE, STATE } from '../helpers/availability-task.js'
import { minRewards, minWindow, taskProgram } from '../helpers/program.js'
import { assignedNames, harnessAssignments, harnessSample } from '../helpers/verdict-sample.js'
import { Harness } from '../unit/chain/harness.js'

// Availability challenges an assigned verifier's sample does not need
// (docs/economics.md "Selective serving", "Needless serves"). The chain knows
// each assigned verifier's required sample and the checkpoint spacing, so it
// knows which checkpoints that sample's replay may start from. Before, an
// assigned verifier could challenge any checkpoint of the run: a puppet made an
// honest solver serve every checkpoint on chain and then accepted (its deposit
// back, nothing lost); a challenge of a checkpoint it did not need still
// reopened its verdict past challenge_end (serve's block + challenge_window),
// time to vote after seeing the others; and a verifier that had accepted
// (vouching that it replayed from its checkpoints) could still make the solver
// serve them. Each test fails if the attacker gets what it should not.

const STEPS = 40
// a checkpoint after every step: the run has 41, a required sample of 22 steps starts from at most 23 of them
const PROGRAM = taskProgram({ steps: STEPS, checkpointEvery: 1 })
const ROOTS = Array.from({ length: STEPS + 1 }, (_, s) => stateRoot(STATE, s))
const ALL = Array.from({ length: STEPS + 1 }, (_, s) => s)
const B = 100n * UNIT
const V = 100n * UNIT

let h: Harness
const task = (): TaskInfo => h.read<TaskInfo>('Arbitration', 'Tasks', 0)!
const worth = (n: string): bigint => h.free(n) + h.reserved(n)
const challenge = (id: bigint): AvailabilityChallenge => h.read<AvailabilityChallenge>('Arbitration', 'AvailabilityChallenges', id)!
const openChallenges = (): Array<[number, bigint]> => h.read<Array<[number, bigint]>>('Arbitration', 'OpenAvailability', 0) ?? []
const deadlineOf = (n: string): number => harnessAssignments(h)!.verifiers.find(v => v.verifier === h.accounts[n])!.deadline
/** what `n`'s required sample replays from, computed here from its sample: step u (0-based) starts at state u; checkpoint 0 for an initial-state claim */
const needs = (n: string): number[] => [...new Set([0, ...harnessSample(h, n)])].sort((a, b) => a - b)

beforeEach(async () => {
  h = await Harness.create({ reference })
  for (const [n, roles] of [['Bob', 2], ['Dave', 4], ['Eve', 4]] as const) expect(h.run(n, 'Arbitration', 'register_node', h.registerArgs(n, roles, STAKE)).error).toBeUndefined()
  // rewards above the chain's floors for this program
  const floor = minRewards(PROGRAM, 2)
  expect(floor.solverReward <= 600n * UNIT && floor.verifierReward <= V).toBe(true)
  expect(h.run('Alice', 'Arbitration', 'submit_task', {
    programHash: PROGRAM.programHash, program: PROGRAM.programHex, datasetRoot: '0x' + '02'.repeat(32), skeletonRoot: '0x' + '03'.repeat(32),
    steps: STEPS, checkpointEvery: 1, escrow: 1000n * UNIT, solverReward: 600n * UNIT, verifierReward: V,
    verifierCount: 2, challengeWindow: Math.max(40, minWindow(PROGRAM, 2)), solveTimeout: 40
  }).error).toBeUndefined()
  h.advance(1)
  expect(task().solver).toBe(h.accounts.Bob)
  expect(h.run('Bob', 'Arbitration', 'commit_proof', { taskId: 0, proofRoot: u8aToHex(merkleRoot(ROOTS)), finalStateRoot: u8aToHex(ROOTS[STEPS]), stepCount: STEPS, checkpoints: ['0x01'] }).error).toBeUndefined()
  h.advance(2)
  expect(assignedNames(h).sort()).toEqual(['Dave', 'Eve'])
  // registered after the draw: Ferdie stands for a whistleblower
  expect(h.run('Ferdie', 'Arbitration', 'register_node', h.registerArgs('Ferdie', 4, STAKE)).error).toBeUndefined()
})

/** The honest solver serves every open challenge on chain in one block (it holds every checkpoint); returns the checkpoints it served and the events. */
function serveAll (): { served: number[], events: string[] } {
  const open = openChallenges().filter(([, id]) => challenge(id).status === 'Open')
  type Call = [string, string, string, Record<string, unknown>]
  const calls = open.flatMap(([step, id]) => buildServeParts(STATE, step, ROOTS).map((p): Call => ['Bob', 'Arbitration', 'respond_availability', { challengeId: id, response: u8aToHex(p) }]))
  if (calls.length === 0) return { served: [], events: [] }
  const { results } = h.block(calls)
  expect(results.map(r => r.error).filter(e => e !== undefined)).toEqual([])
  return { served: open.map(([s]) => s), events: results.flatMap(r => r.events) }
}

/** `who` challenges as many of `steps` as the chain takes: all in one call, else one call each, in one block. */
function challengeWhatItCan (who: string, steps: number[]): number[] {
  if (h.run(who, 'Arbitration', 'challenge_availability_many', { taskId: 0, checkpointSteps: steps }).error === undefined) return steps
  const { results } = h.block(steps.map(s => [who, 'Arbitration', 'challenge_availability', { taskId: 0, checkpointStep: s }]))
  return steps.filter((_, i) => results[i].error === undefined)
}

/** Advances until the task leaves Verifying (bounded). */
function finish (): void {
  for (let i = 0; i < 400 && task().phase === 'Verifying'; i++) h.advance(1)
}

describe('availability challenges bounded by what the challenger needs', () => {
  it('a puppet verifier cannot make the honest solver serve checkpoints its sample does not need, and then accept', () => {
    const [puppet] = assignedNames(h)
    const needed = needs(puppet)
    // the premise: most of the run's checkpoints are needed by no replay of this sample
    expect(ALL.length - needed.length).toBeGreaterThan(10)
    expect(h.run(puppet, 'Arbitration', 'submit_verdict', { taskId: 0, accept: false, checkedSteps: [] }).error).toBeUndefined()
    const opened = challengeWhatItCan(puppet, ALL)
    h.advance(1)
    const { served } = serveAll()
    // before: all 41 checkpoints opened and served; the puppet then accepted and lost nothing
    expect(served.filter(s => !needed.includes(s))).toEqual([])
    expect(opened.filter(s => !needed.includes(s))).toEqual([])
  })

  it('an honest verifier still challenges every checkpoint its sample needs at once', () => {
    const [, honest] = assignedNames(h)
    expect(h.run(honest, 'Arbitration', 'submit_verdict', { taskId: 0, accept: false, checkedSteps: [] }).error).toBeUndefined()
    expect(h.run(honest, 'Arbitration', 'challenge_availability_many', { taskId: 0, checkpointSteps: needs(honest) }).error).toBeUndefined()
    expect(openChallenges().map(([s]) => s).sort((a, b) => a - b)).toEqual(needs(honest))
    // served, it votes again; its accept is taken and it is paid
    h.advance(1)
    expect(serveAll().events).toContain('Arbitration.VerdictReopened')
    const before = worth(honest)
    expect(h.run(honest, 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: harnessSample(h, honest) }).error).toBeUndefined()
    const [other] = assignedNames(h).filter(n => n !== honest)
    expect(h.run(other, 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: harnessSample(h, other) }).error).toBeUndefined()
    finish()
    expect(task().phase).toBe('Settled')
    expect(worth(honest) - before).toBe(V)
  })

  it('a challenge of a checkpoint its sample does not need buys a verifier no time past the window', () => {
    const [first, late] = assignedNames(h)
    const unneeded = ALL.find(s => !needs(late).includes(s))!
    expect(h.run(first, 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: harnessSample(h, first) }).error).toBeUndefined()
    // at the window's last block, without a verdict: the challenge would be its excuse to vote later
    h.advance(task().challengeEnd - h.number - 1)
    const end = task().challengeEnd
    const error = h.run(late, 'Arbitration', 'challenge_availability', { taskId: 0, checkpointStep: unneeded }).error
    // the honest solver serves whatever it is asked: before, its serve reopened the verdict until the serve's block + challenge_window
    h.advance(1)
    expect(serveAll().events).not.toContain('Arbitration.VerdictReopened')
    expect(deadlineOf(late)).toBeLessThanOrEqual(end)
    // past the window, having seen the other's accept, it can no longer vote
    expect(h.run(late, 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: harnessSample(h, late) }).error).toBeDefined()
    expect(error).toBe('Arbitration.CheckpointNotNeeded')
  })

  it('a verifier that accepted (it vouched that it replayed from its checkpoints) cannot make the solver serve them', () => {
    const [v] = assignedNames(h)
    expect(h.run(v, 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: harnessSample(h, v) }).error).toBeUndefined()
    // before: taken, served, and its deposit came back with its standing accept
    const error = h.run(v, 'Arbitration', 'challenge_availability_many', { taskId: 0, checkpointSteps: needs(v) }).error
    h.advance(1)
    expect(serveAll().served).toEqual([])
    expect(error).toBe('Arbitration.ChallengeAfterAccept')
  })

  it('a whistleblower may challenge any checkpoint, and pays the solver B for each needless one on a task verified anyway', () => {
    const [a, b] = assignedNames(h)
    const unneeded = ALL.filter(s => !needs(a).includes(s) && !needs(b).includes(s)).slice(0, 3)
    expect(unneeded.length).toBe(3)
    const wb = worth('Ferdie')
    const solver = worth('Bob')
    expect(h.run('Ferdie', 'Arbitration', 'challenge_availability_many', { taskId: 0, checkpointSteps: unneeded }).error).toBeUndefined()
    h.advance(1)
    expect(serveAll().served).toEqual(unneeded)
    for (const n of [a, b]) expect(h.run(n, 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: harnessSample(h, n) }).error).toBeUndefined()
    finish()
    expect(task().phase).toBe('Settled')
    expect(worth('Ferdie') - wb).toBe(-3n * B)
    // the solver: its reward and the three deposits (less no jackpot: the harness draws no forced error)
    expect(worth('Bob') - solver).toBeGreaterThanOrEqual(3n * B)
  })
})
