import { hexToU8a, u8aToHex } from '@polkadot/util'
import { beforeEach, describe, expect, it } from 'vitest'
import type { AvailabilityChallenge } from '../../devnet/chain/runtime/availability.js'
import type { TaskInfo } from '../../devnet/chain/runtime/arbitration.js'
import { availabilitySeed } from '../helpers/availability-v1.js'
import * as reference from '../../protocols/reference/index.js'
import { STAKE, STEP, availabilityAnswer, commitAvailabilityProof, serveOnChain, servedState, submitAvailabilityTask } from '../helpers/availability-task.js'
import { assignedNames, harnessSample } from '../helpers/verdict-sample.js'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import { Harness } from '../unit/chain/harness.js'

// A front-run availability challenge. One challenge per checkpoint may be
// open, and the pool is public: the solver's puppet copies an assigned
// verifier's pending challenge_availability and has it included first. The
// solver answers the copy on chain (it holds the data) and serves nobody off
// chain. Before, the verifier's own challenge was refused
// (AvailabilityAlreadyOpen): its reject had no evidence of its own, and its
// slot lapsed with the silence penalty B + R, for a task nobody could verify.
// Now an assigned verifier whose reject is not yet backed opens its own
// challenge of the same checkpoint; an answer serves the checkpoint on chain,
// and the serve of one challenge answers every open one of that checkpoint,
// so the verifier has the data and votes. The test fails if the verifier
// pays anything.

let h: Harness
let solver: string
let puppet: string
const task = (): TaskInfo => h.read<TaskInfo>('Arbitration', 'Tasks', 0) as TaskInfo
const worth = (n: string): bigint => h.free(n) + h.reserved(n)
const challengeOf = (who: string): [string, string, string, Record<string, unknown>] => [who, 'Arbitration', 'challenge_availability', { taskId: 0, checkpointStep: STEP }]
/** the solver answers challenge `id` with possession alone: the sampled rows (it holds the state) */
function possess (id: number): string | undefined {
  const c = h.read<AvailabilityChallenge>('Arbitration', 'AvailabilityChallenges', id)!
  const seed = availabilitySeed(hexToU8a(h.randomness(c.openedAt)), id)
  return h.run(solver, 'Arbitration', 'respond_availability', { challengeId: id, response: u8aToHex(availabilityAnswer(seed)) }).error
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
  it('included before the verifier\'s own: the verifier still opens its own; the serve of the copy answers both, and the verifier, served, pays nothing', () => {
    const before = { dave: worth('Dave'), puppet: worth(puppet) }
    const { results } = h.block([challengeOf(puppet), challengeOf('Dave')])
    expect(results[0].error).toBeUndefined()
    // before: Arbitration.AvailabilityAlreadyOpen
    expect(results[1].error).toBeUndefined()
    expect(h.run('Dave', 'Arbitration', 'submit_verdict', { taskId: 0, accept: false, checkedSteps: [] }).error).toBeUndefined()
    expect(h.run('Eve', 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: harnessSample(h, 'Eve') }).error).toBeUndefined()
    // proving possession answers neither (before: it answered each, and nobody was served)
    expect(possess(0)).toBe('Arbitration.InvalidAvailabilityResponse')
    // the solver serves the copy: the data is on chain, Dave's own challenge is answered with it
    const { error, emitted } = serveOnChain(h, solver, 0)
    expect(error).toBeUndefined()
    for (const id of [0, 1]) expect(h.read<AvailabilityChallenge>('Arbitration', 'AvailabilityChallenges', id)!.status).toBe('Answered')
    expect(servedState(emitted)).toHaveLength(4)
    // Dave's reject rested on data he now has: withdrawn; he replays and accepts
    expect(task().verdicts.some(v => v.verifier === h.accounts.Dave)).toBe(false)
    expect(h.run('Dave', 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: harnessSample(h, 'Dave') }).error).toBeUndefined()
    const ev: string[] = []
    for (let i = 0; i < 80 && task().phase === 'Verifying'; i++) ev.push(...h.advance(1))
    expect(task().phase).toBe('Settled')
    expect(ev).not.toContain('Arbitration.AssignmentLapsed')
    // Dave is paid V and his deposit comes back; the puppet's needless copy costs it its deposit (to the solver)
    expect(worth('Dave')).toBe(before.dave + 100n * UNIT)
    expect(worth(puppet)).toBeLessThan(before.puppet)
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
