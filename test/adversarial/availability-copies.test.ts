import { hexToU8a, u8aToHex } from '@polkadot/util'
import { beforeEach, describe, expect, it } from 'vitest'
import type { AvailabilityChallenge } from '../../devnet/chain/runtime/availability.js'
import type { TaskInfo } from '../../devnet/chain/runtime/arbitration.js'
import { availabilitySeed } from '../../protocols/availability/index.js'
import * as reference from '../../protocols/reference/index.js'
import { STAKE, STEP, availabilityAnswer, commitAvailabilityProof, submitAvailabilityTask } from '../helpers/availability-task.js'
import { assignedNames } from '../helpers/verdict-sample.js'
import { Harness } from '../unit/chain/harness.js'

// A front-run availability challenge. One challenge per checkpoint may be
// open, and the pool is public: the solver's puppet copies an assigned
// verifier's pending challenge_availability and has it included first. The
// solver answers the copy on chain (it holds the data) and serves nobody off
// chain. Before, the verifier's own challenge was refused
// (AvailabilityAlreadyOpen): its reject had no evidence of its own, and its
// slot lapsed with the silence penalty B + R, for a task nobody could verify.
// Now an assigned verifier whose reject is not yet backed opens its own
// challenge of the same checkpoint; the solver must answer it too, and the
// verifier is released like any whose challenge was answered. The test fails
// if the verifier pays anything.

let h: Harness
let solver: string
let puppet: string
const task = (): TaskInfo => h.read<TaskInfo>('Arbitration', 'Tasks', 0) as TaskInfo
const worth = (n: string): bigint => h.free(n) + h.reserved(n)
const challengeOf = (who: string): [string, string, string, Record<string, unknown>] => [who, 'Arbitration', 'challenge_availability', { taskId: 0, checkpointStep: STEP }]
/** the solver answers challenge `id` with the sampled rows (it holds the state) */
function answer (id: number): void {
  const c = h.read<AvailabilityChallenge>('Arbitration', 'AvailabilityChallenges', id)!
  const seed = availabilitySeed(hexToU8a(h.randomness(c.openedAt)), id)
  const bytes = availabilityAnswer(seed)
  expect(h.run(solver, 'Arbitration', 'respond_availability', { challengeId: id, response: u8aToHex(bytes) }).error).toBeUndefined()
}

beforeEach(async () => {
  h = await Harness.create({ reference })
  // Bob and Charlie can solve (whichever is not selected is the solver's puppet); Dave and Eve are the verifiers
  for (const [n, roles] of [['Bob', 2], ['Charlie', 2], ['Dave', 4 | 8], ['Eve', 4 | 8]] as const) {
    expect(h.run(n, 'Arbitration', 'register_node', h.registerArgs(n, roles, STAKE)).error).toBeUndefined()
  }
  solver = submitAvailabilityTask(h)
  puppet = solver === 'Bob' ? 'Charlie' : 'Bob'
  commitAvailabilityProof(h, solver)
  // the randomness block, then the block that draws Dave and Eve
  h.advance(2)
  expect(assignedNames(h).sort()).toEqual(['Dave', 'Eve'])
})

describe('a copied availability challenge', () => {
  it('included before the verifier\'s own: the verifier still opens its own, and pays nothing when the solver serves nobody', () => {
    const before = { dave: worth('Dave'), puppet: worth(puppet) }
    const { results } = h.block([challengeOf(puppet), challengeOf('Dave')])
    expect(results[0].error).toBeUndefined()
    // before: Arbitration.AvailabilityAlreadyOpen
    expect(results[1].error).toBeUndefined()
    // the solver proves possession of both on chain, and serves neither verifier off chain
    answer(0)
    answer(1)
    for (const v of ['Dave', 'Eve']) expect(h.run(v, 'Arbitration', 'submit_verdict', { taskId: 0, accept: false, checkedSteps: [] }).error).toBeUndefined()
    const ev: string[] = []
    for (let i = 0; i < 80 && task().phase === 'Verifying'; i++) ev.push(...h.advance(1))
    expect(task().phase).toBe('Unverified')
    // Dave's challenge was answered: released, not lapsed; his deposit back since nobody verified the task
    expect(worth('Dave')).toBe(before.dave)
    // Eve, silent but for a bare reject, pays the penalty: the rule still bites whoever has no evidence
    expect(ev).toContain('Arbitration.AssignmentLapsed')
    expect(worth(puppet)).toBe(before.puppet)
  })

  it('only an assigned verifier whose reject is not yet backed may challenge an already challenged checkpoint', () => {
    expect(h.run(puppet, 'Arbitration', 'challenge_availability', { taskId: 0, checkpointStep: STEP }).error).toBeUndefined()
    expect(h.run('Alice', 'Arbitration', 'register_node', h.registerArgs('Alice', 8, STAKE)).error).toBeUndefined()
    expect(h.run('Alice', 'Arbitration', 'challenge_availability', { taskId: 0, checkpointStep: STEP }).error).toBe('Arbitration.AvailabilityAlreadyOpen')
    expect(h.run('Dave', 'Arbitration', 'challenge_availability', { taskId: 0, checkpointStep: STEP }).error).toBeUndefined()
    // once backed, no more copies of its own
    expect(h.run('Dave', 'Arbitration', 'challenge_availability', { taskId: 0, checkpointStep: STEP }).error).toBe('Arbitration.AvailabilityAlreadyOpen')
  })
})
