import { beforeEach, describe, expect, it } from 'vitest'
import { u8aToHex } from '@polkadot/util'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import type { TaskInfo } from '../../devnet/chain/runtime/arbitration.js'
import * as reference from '../../protocols/reference/index.js'
import { STATE, STAKE, commitAvailabilityProof, serveParts } from '../helpers/availability-task.js'
import { CUSTOM_PROGRAM, DATASET_SERVER } from '../helpers/custom-dataset.js'
import type { DatasetChallenge } from '../../protocols/pallet-types.js'
import { assignedNames, harnessSample } from '../helpers/verdict-sample.js'
import { Harness } from '../unit/chain/harness.js'

// The deposit of an answered availability or dataset challenge stays reserved
// until the task ends, and goes to whoever served (the solver, the submitter)
// when its assigned challenger was served and then gave no verdict that
// stood: a stall the server is paid for. But an accept does not stand on a
// task that failed (the solver was caught elsewhere), though its verifier was
// served, replayed its sample (which missed the wrong step) and voted. So
// an honest verifier that had to challenge lost its deposit B on every task
// that failed: a checkpoint's to the very solver that was caught (a solver
// that withholds a checkpoint from an honest verifier, serves it at the
// deadline and is caught elsewhere gets B back of its slash), a dataset's to
// the submitter. Now an accept that was not slashed counts as a vote there.

const V = 100n * UNIT
const B = 100n * UNIT

let h: Harness
const task = (): TaskInfo => h.read<TaskInfo>('Arbitration', 'Tasks', 0)!
const worth = (n: string): bigint => h.free(n) + h.reserved(n)

beforeEach(async () => {
  h = await Harness.create({ reference })
  for (const [n, roles] of [['Bob', 2], ['Dave', 4], ['Eve', 4], ['Ferdie', 8]] as const) expect(h.run(n, 'Arbitration', 'register_node', h.registerArgs(n, roles, STAKE)).error).toBeUndefined()
  expect(h.run('Alice', 'Arbitration', 'submit_task', {
    programHash: CUSTOM_PROGRAM.programHash, program: CUSTOM_PROGRAM.programHex, datasetRoot: u8aToHex(DATASET_SERVER.root), skeletonRoot: '0x' + '03'.repeat(32),
    steps: 10, checkpointEvery: 5, escrow: 1000n * UNIT, solverReward: 600n * UNIT, verifierReward: V, verifierCount: 2, challengeWindow: 12, solveTimeout: 20
  }).error).toBeUndefined()
  h.advance(1)
  commitAvailabilityProof(h, 'Bob')
  h.advance(2)
  expect(assignedNames(h).sort()).toEqual(['Dave', 'Eve'])
})

/** Dave accepts; a whistleblower challenges the last checkpoint, which Bob cannot serve: the task fails. Plays to the end. */
function failElsewhere (): string[] {
  expect(h.run('Dave', 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: harnessSample(h, 'Dave') }).error).toBeUndefined()
  expect(h.run('Ferdie', 'Arbitration', 'challenge_availability', { taskId: 0, checkpointStep: 10 }).error).toBeUndefined()
  const id = (h.read<Array<[number, bigint]>>('Arbitration', 'OpenAvailability', 0 as never) ?? []).find(([s]) => s === 10)![1]
  const events: string[] = []
  for (let i = 0; i < 200 && task().phase === 'Verifying'; i++) {
    const c = h.read<{ status: string, deadline: number }>('Arbitration', 'AvailabilityChallenges', id)!
    if (c.status === 'Open' && h.number + 1 > c.deadline) {
      const r = h.run('Ferdie', 'Arbitration', 'availability_timeout', { challengeId: id })
      expect(r.error).toBeUndefined()
      events.push(...r.events)
    } else events.push(...h.advance(1))
  }
  expect(task().phase).toBe('Failed')
  return events
}

describe('an honest verifier was served, replayed and accepted; the task fails on another\'s evidence', () => {
  it('its checkpoint challenge\'s deposit comes back, not to the solver that was caught', () => {
    const eve = worth('Eve')
    const bob = worth('Bob')
    // Eve cannot fetch checkpoint 0 (Bob withholds it): she rejects and challenges; Bob serves at once
    expect(h.run('Eve', 'Arbitration', 'submit_verdict', { taskId: 0, accept: false, checkedSteps: [] }).error).toBeUndefined()
    expect(h.run('Eve', 'Arbitration', 'challenge_availability', { taskId: 0, checkpointStep: 0 }).error).toBeUndefined()
    for (const p of serveParts(STATE, undefined, 0)) expect(h.run('Bob', 'Arbitration', 'respond_availability', { challengeId: 0, response: u8aToHex(p) }).error).toBeUndefined()
    // served, she replays her sample (it misses the wrong step) and accepts
    expect(h.run('Eve', 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: harnessSample(h, 'Eve') }).error).toBeUndefined()
    const events = failElsewhere()
    expect(events).not.toContain('Arbitration.VerdictSlashed')
    // before: −B, to Bob
    expect(worth('Eve')).toBe(eve)
    expect(h.reserved('Eve')).toBe(STAKE)
    // the premise: Bob was slashed for the checkpoint he withheld from Ferdie
    expect(worth('Bob')).toBeLessThan(bob)
  })

  it('its dataset challenge\'s deposit comes back, not to the submitter', () => {
    const eve = worth('Eve')
    expect(h.run('Eve', 'Arbitration', 'submit_verdict', { taskId: 0, accept: false, checkedSteps: [] }).error).toBeUndefined()
    expect(h.run('Eve', 'Arbitration', 'challenge_dataset', { taskId: 0, program: CUSTOM_PROGRAM.programHex }).error).toBeUndefined()
    const c = h.read<DatasetChallenge>('Arbitration', 'DatasetChallenges', 0n)!
    for (const p of DATASET_SERVER.parts(c.steps)) expect(h.run('Alice', 'Arbitration', 'respond_dataset', { challengeId: 0, part: u8aToHex(p) }).error).toBeUndefined()
    expect(h.read<DatasetChallenge>('Arbitration', 'DatasetChallenges', 0n)!.status).toBe('Answered')
    expect(h.run('Eve', 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: harnessSample(h, 'Eve') }).error).toBeUndefined()
    failElsewhere()
    // before: −B, to Alice
    expect(worth('Eve')).toBe(eve)
    expect(h.reserved('Eve')).toBe(STAKE)
  })

  it('a challenger served and then silent still pays whoever served', () => {
    const eve = worth('Eve')
    expect(h.run('Eve', 'Arbitration', 'submit_verdict', { taskId: 0, accept: false, checkedSteps: [] }).error).toBeUndefined()
    expect(h.run('Eve', 'Arbitration', 'challenge_availability', { taskId: 0, checkpointStep: 0 }).error).toBeUndefined()
    for (const p of serveParts(STATE, undefined, 0)) expect(h.run('Bob', 'Arbitration', 'respond_availability', { challengeId: 0, response: u8aToHex(p) }).error).toBeUndefined()
    failElsewhere()
    expect(eve - worth('Eve')).toBe(B)
  })
})
