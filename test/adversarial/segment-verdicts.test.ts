import { beforeEach, describe, expect, it } from 'vitest'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import { listsForcedStep, type ProofRuling, type TaskInfo, type Verdict } from '../../devnet/chain/runtime/arbitration.js'
import { sampleSteps } from '../../protocols/verification/sample.js'
import { checkedUnitOf, requiredSample, requiredSampleCount } from '../../protocols/verification/verdict.js'
import * as reference from '../../protocols/reference/index.js'
import { minWindow, taskProgram } from '../helpers/program.js'
import { assignedNames, harnessAssignments } from '../helpers/verdict-sample.js'
import { Harness } from '../unit/chain/harness.js'

// Verdicts on a task with state roots every m = 4 steps (docs/training.md
// "State roots every m steps"): a verifier's sample is segments, and an
// accepting verdict's checked_steps names them by segment index j
// (protocols/verification/verdict.ts checkedUnitOf). Each test fails if the
// attacker gains: a verifier accepting with a list that is not its own
// sample of segments (the per-step sample of an m = 1 task, a part of it,
// another verifier's), or naming units the proof does not have; a verifier
// who vouched for a segment escaping the slash when the forced error inside
// it is revealed.

const H = (b: number): string => '0x' + b.toString(16).padStart(2, '0').repeat(32)
const STAKE = 2000n * UNIT
const REWARD = 600n * UNIT
const VREWARD = 100n * UNIT
const M = 4
const STEPS = 400
const PROGRAM = taskProgram({ steps: STEPS, checkpointEvery: 20, rootEvery: M })

let h: Harness
const task = (id = 0): TaskInfo => h.read<TaskInfo>('Arbitration', 'Tasks', id as never)!
const register = (who: string, roles: number): void => { expect(h.run(who, 'Arbitration', 'register_node', h.registerArgs(who, roles, STAKE)).error).toBeUndefined() }
const verdict = (who: string, accept: boolean, checkedSteps: number[]): string | undefined =>
  h.run(who, 'Arbitration', 'submit_verdict', { taskId: 0, accept, checkedSteps }).error
/** The randomness seeding `who`'s sample. */
function seedOf (who: string): string {
  const block = harnessAssignments(h)!.verifiers.find(v => v.verifier === h.accounts[who])!.seedBlock
  return h.read<string>('Randomness', 'ByBlock', block as never)!
}
/** `who`'s required sample as the chain's units: segment indices. */
const segmentsOf = (who: string): number[] => requiredSample(seedOf(who), h.accounts[who], STEPS, 2, M).map(s => checkedUnitOf(s, STEPS, M))

beforeEach(async () => {
  h = await Harness.create({ reference, maxRootEvery: M })
  register('Bob', 2)
  for (const n of ['Charlie', 'Dave']) register(n, 4)
  expect(h.run('Alice', 'Arbitration', 'submit_task', {
    programHash: PROGRAM.programHash, program: PROGRAM.programHex, datasetRoot: H(2), skeletonRoot: H(3), steps: STEPS, checkpointEvery: 20,
    escrow: REWARD + VREWARD * 2n, solverReward: REWARD, verifierReward: VREWARD, verifierCount: 2, challengeWindow: minWindow(PROGRAM, 2), solveTimeout: 80
  }).error).toBeUndefined()
  h.advance(1)
  expect(h.run('Bob', 'Arbitration', 'commit_proof', { taskId: 0, proofRoot: H(9), finalStateRoot: H(8), stepCount: STEPS, checkpoints: [] }).error).toBeUndefined()
  h.advance(2)
  expect(assignedNames(h).sort()).toEqual(['Charlie', 'Dave'])
})

describe('verdicts on a task with roots every 4 steps list segments', () => {
  it('the sample is segments: 22 distinct segment indices of the 100, and an accept listing exactly them stands', () => {
    const mine = segmentsOf('Charlie')
    expect(mine).toHaveLength(requiredSampleCount(2))
    expect(new Set(mine).size).toBe(mine.length)
    expect(mine.every(j => Number.isInteger(j) && j >= 0 && j < STEPS / M)).toBe(true)
    expect(verdict('Charlie', true, mine)).toBeUndefined()
    expect(task().verdicts[0].checkedSteps).toEqual(mine)
  })

  it('an accept listing the per-step sample of an m = 1 task (steps it never compared with a committed root) is SampleNotChecked', () => {
    const steps = sampleSteps(seedOf('Charlie'), h.accounts.Charlie, STEPS, requiredSampleCount(2)).map(s => s - 1)
    expect(steps.some(s => s >= STEPS / M)).toBe(true)
    expect(verdict('Charlie', true, steps)).toBe('Arbitration.InvalidStep')
    expect(verdict('Charlie', true, steps.filter(s => s < STEPS / M))).toBe('Arbitration.SampleNotChecked')
  })

  it('an accept missing one of its segments, or listing another verifier\'s, is SampleNotChecked', () => {
    const mine = segmentsOf('Charlie')
    expect(verdict('Charlie', true, mine.slice(1))).toBe('Arbitration.SampleNotChecked')
    expect(verdict('Charlie', true, segmentsOf('Dave'))).toBe('Arbitration.SampleNotChecked')
    expect(verdict('Charlie', true, mine)).toBeUndefined()
  })

  it('a unit past the last segment is InvalidStep (the proof has 100 segments, not 400 steps)', () => {
    expect(verdict('Dave', false, [STEPS / M])).toBe('Arbitration.InvalidStep')
    expect(verdict('Dave', true, [...segmentsOf('Dave'), 150])).toBe('Arbitration.InvalidStep')
  })

  it('a revealed forced error inside a listed segment makes that accept a blind one (slashed at settlement)', () => {
    // the forced error is the last transition of segment 7: step 31 (0-based)
    const ruling: ProofRuling = { disputeId: 0n, challenger: h.accounts.Dave, step: 31, revealDeadline: 0, outcome: 'ForcedError', claimKind: 'State', honestPost: '0x' + '00'.repeat(32) }
    const t = { ...task(), revealedForcedError: 31, rulings: [ruling] }
    const v = (checked: number[]): Verdict => ({ verifier: h.accounts.Charlie, accept: true, checkedSteps: checked, void: false })
    expect(listsForcedStep(t, v([7]), M)).toBe(true)
    expect(listsForcedStep(t, v([6, 8]), M)).toBe(false)
    // not the transition's own index: that is segment 31, another segment
    expect(listsForcedStep(t, v([31]), M)).toBe(false)
  })
})
