import { hexToU8a, u8aToHex } from '@polkadot/util'
import { beforeEach, describe, expect, it } from 'vitest'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import type { TaskInfo } from '../../devnet/chain/runtime/arbitration.js'
import type { AvailabilityChallenge } from '../../devnet/chain/runtime/availability.js'
import { availabilitySeed } from '../helpers/availability-v1.js'
import { stateRoot } from '../../protocols/commit/index.js'
import * as reference from '../../protocols/reference/index.js'
import { ROOTS, STAKE, STEP, availabilityAnswer, commitAvailabilityProof, serveOnChain, servedState, submitAvailabilityTask } from '../helpers/availability-task.js'
import { assignedNames, harnessAssignments, harnessSample } from '../helpers/verdict-sample.js'
import { Harness } from '../unit/chain/harness.js'

// Selective serving (docs/economics.md "Selective serving"). The solver is its
// submitter's puppet and serves its checkpoints off chain to a puppet verifier
// only: the puppet accepts, every honest verifier drawn beside it cannot fetch,
// rejects and challenges availability. Before, the solver answered each
// challenge by proving possession (sampled rows), served nobody, the task ended
// Unverified after MaxVerifyExtensions + 1 rounds with the puppet's accept
// standing, and every honest challenger was "contradicted": −(B + R) each
// (3 × 700 here). Now an answer must serve the whole checkpoint on chain: the
// coalition either serves it (the honest challenger reads it from the chain,
// replays, accepts: the task is verified) or does not (the challenge times
// out: the solver is slashed, the task fails). Each test fails if an honest
// challenger loses anything, or the coalition ends better off than by letting
// the task be verified.

const REWARD = 600n * UNIT
const V = 100n * UNIT

let h: Harness
const task = (): TaskInfo => h.read<TaskInfo>('Arbitration', 'Tasks', 0)!
const worth = (n: string): bigint => h.free(n) + h.reserved(n)
const HONEST = ['Eve', 'Ferdie', 'Peer1']
const coalition = (): bigint => ['Alice', 'Bob', 'Dave'].reduce((s, n) => s + worth(n), 0n)

beforeEach(async () => {
  h = await Harness.create({ reference })
  // Bob solves (Alice's puppet), Dave is Alice's puppet verifier, Eve is honest; both drawn in round 0
  for (const [n, roles] of [['Bob', 2], ['Dave', 4], ['Eve', 4]] as const) expect(h.run(n, 'Arbitration', 'register_node', h.registerArgs(n, roles, STAKE)).error).toBeUndefined()
  expect(submitAvailabilityTask(h, { solverReward: REWARD })).toBe('Bob')
  commitAvailabilityProof(h, 'Bob')
  h.advance(2)
  expect(assignedNames(h).sort()).toEqual(['Dave', 'Eve'])
  // honest verifiers that only later rounds can draw
  for (const n of ['Ferdie', 'Peer1']) expect(h.run(n, 'Arbitration', 'register_node', h.registerArgs(n, 4, STAKE)).error).toBeUndefined()
})

/**
 * Plays the task to its end. Dave accepts (he was served off chain); each honest
 * verifier drawn rejects and challenges STEP (it could not fetch); the coalition
 * answers each challenge with possession only if the chain takes that, else it
 * `serve`s the checkpoint on chain or lets the challenge time out. A served
 * honest verifier rebuilds the state from the chain and accepts.
 */
function play (serve: boolean): string[] {
  const ev: string[] = []
  const seen = new Set<string>()
  expect(h.run('Dave', 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: harnessSample(h, 'Dave') }).error).toBeUndefined()
  for (let i = 0; i < 200 && task().phase === 'Verifying'; i++) {
    for (const n of HONEST) {
      if (seen.has(n) || !assignedNames(h).includes(n)) continue
      seen.add(n)
      const id = h.read<bigint>('Arbitration', 'NextAvailabilityId') ?? 0n
      const { results } = h.block([[n, 'Arbitration', 'submit_verdict', { taskId: 0, accept: false, checkedSteps: [] }], [n, 'Arbitration', 'challenge_availability', { taskId: 0, checkpointStep: STEP }]])
      expect(results.map(r => r.error)).toEqual([undefined, undefined])
      // the cheap answer: possession shown, nothing served
      const c = h.read<AvailabilityChallenge>('Arbitration', 'AvailabilityChallenges', id)!
      const possession = availabilityAnswer(availabilitySeed(hexToU8a(h.randomness(c.openedAt)), id))
      if (h.run('Bob', 'Arbitration', 'respond_availability', { challengeId: id, response: u8aToHex(possession) }).error === undefined) continue
      if (!serve) continue
      const { error, emitted } = serveOnChain(h, 'Bob', id)
      expect(error).toBeUndefined()
      // the honest verifier replays from what the chain holds: the committed state, bit for bit
      expect(u8aToHex(stateRoot(servedState(emitted), STEP))).toBe(u8aToHex(ROOTS[STEP]))
      expect(h.run(n, 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: harnessSample(h, n) }).error).toBeUndefined()
    }
    // an unanswered challenge past its deadline: the honest challenger times it out
    for (const [, id] of h.read<Array<[number, bigint]>>('Arbitration', 'OpenAvailability', 0) ?? []) {
      const c = h.read<AvailabilityChallenge>('Arbitration', 'AvailabilityChallenges', id)!
      if (h.number + 1 > c.deadline) h.run('Eve', 'Arbitration', 'availability_timeout', { challengeId: id })
    }
    ev.push(...h.advance(1))
  }
  return ev
}

describe('selective serving', () => {
  it('the coalition serves the challenged checkpoint on chain: the honest challenger replays it, the task is verified, and it loses nothing', () => {
    const before = Object.fromEntries(HONEST.map(n => [n, worth(n)]))
    const start = coalition()
    const ev = play(true)
    // before: TaskUnverified after three rounds, and AssignmentLapsed for each honest challenger
    expect(task().phase).toBe('Settled')
    expect(ev).not.toContain('Arbitration.AssignmentLapsed')
    // Eve is paid V for her accept and her deposit comes back; nobody else honest was drawn
    expect(worth('Eve') - before.Eve).toBe(V)
    for (const n of ['Ferdie', 'Peer1']) expect(worth(n)).toBe(before[n])
    // the coalition paid R + 2V and got R + V back (less the rent): what honest play costs, no Unverified end
    expect(coalition() - start).toBeLessThanOrEqual(-V)
    expect(harnessAssignments(h)!.verifiers.filter(v => v.status === 'Lapsed')).toHaveLength(0)
  })

  it('the coalition withholds on chain too: the challenge times out, the solver is slashed, and the honest challenger loses nothing', () => {
    const before = Object.fromEntries(HONEST.map(n => [n, worth(n)]))
    const start = coalition()
    const ev = play(false)
    expect(ev).not.toContain('Arbitration.AssignmentLapsed')
    expect(task().phase).toBe('Failed')
    for (const n of HONEST) expect(worth(n)).toBeGreaterThanOrEqual(before[n])
    // the solver's half stake is gone, half of it to Eve; the coalition's escrow came back
    expect(coalition() - start).toBeLessThan(-(STAKE / 4n))
  })
})
