import { u8aToHex, hexToU8a } from '@polkadot/util'
import { beforeEach, describe, expect, it } from 'vitest'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import type { TaskInfo } from '../../devnet/chain/runtime/arbitration.js'
import { availabilitySeed } from '../../protocols/availability/index.js'
import { harnessAssignments, harnessSample } from '../helpers/verdict-sample.js'
import * as reference from '../../protocols/reference/index.js'
import { STAKE, STEP, availabilityAnswer, commitAvailabilityProof, submitAvailabilityTask } from '../helpers/availability-task.js'
import { Harness } from '../unit/chain/harness.js'

// A solver that keeps its checkpoints but serves them to nobody: it answers
// every availability challenge (it can prove possession), so before it
// collected every challenger's deposit and was paid in full though nobody
// could replay a step. Each test fails if withholding pays.

const REWARD = 600n * UNIT

let h: Harness
const task = (): TaskInfo => h.read<TaskInfo>('Arbitration', 'Tasks', 0)!
const total = (n: string): bigint => h.free(n) + h.reserved(n)

beforeEach(async () => {
  h = await Harness.create({ reference })
  for (const [n, roles] of [['Bob', 2], ['Dave', 4], ['Eve', 4]] as const) expect(h.run(n, 'Arbitration', 'register_node', h.registerArgs(n, roles, STAKE)).error).toBeUndefined()
  expect(submitAvailabilityTask(h, { solverReward: REWARD })).toBe('Bob')
  commitAvailabilityProof(h, 'Bob')
})

/** `who` (assigned) challenges checkpoint STEP; Bob proves he holds it. */
function challenge (who: string): void {
  const id = h.read<bigint>('Arbitration', 'NextAvailabilityId') ?? 0n
  expect(h.run(who, 'Arbitration', 'challenge_availability', { taskId: 0, checkpointStep: STEP }).error).toBeUndefined()
  const seed = availabilitySeed(hexToU8a(h.randomness()), id)
  const answer = availabilityAnswer(seed)
  expect(h.run('Bob', 'Arbitration', 'respond_availability', { challengeId: id, response: u8aToHex(answer) }).error).toBeUndefined()
}

/** Dave, assigned, cannot fetch checkpoint STEP and challenges; Bob proves he holds it. */
function challengedAndAnswered (): void {
  // the block whose on_initialize draws the verifiers (Dave and Eve, the only ones)
  h.advance(1)
  challenge('Dave')
}

function toTheEnd (): string[] {
  const ev: string[] = []
  for (let i = 0; i < 100 && task().phase === 'Verifying'; i++) ev.push(...h.advance(1))
  return ev
}

describe('withheld checkpoints', () => {
  it('a solver that answers the challenge but serves nobody is paid nothing, and the challenger loses nothing', () => {
    const [bob, dave] = [total('Bob'), total('Dave')]
    challengedAndAnswered()
    // nobody else can replay either: no accept comes
    const ev = toTheEnd()
    expect(ev).toContain('Arbitration.TaskUnverified')
    expect(ev).toContain('Arbitration.AvailabilityDepositSettled')
    expect(total('Bob')).toBe(bob)
    // Dave's challenge was the evidence of an assigned verifier that could not fetch: released, not penalized as silent
    expect(harnessAssignments(h)!.verifiers.find(v => v.verifier === h.accounts.Dave)!.status).toBe('Released')
    expect(total('Dave')).toBe(dave)
    expect(h.reserved('Dave')).toBe(STAKE)
  })

  it('a needless challenge of a solver others could verify costs the challenger its deposit, to the solver', () => {
    const [bob, dave] = [total('Bob'), total('Dave')]
    challengedAndAnswered()
    h.advance(1)
    for (const v of ['Dave', 'Eve']) expect(h.run(v, 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: harnessSample(h, v) }).error).toBeUndefined()
    const ev = toTheEnd()
    expect(ev).toContain('Arbitration.TaskSettled')
    const deposit = h.read<{ disputeBond: bigint }>('Arbitration', 'Params')!.disputeBond
    expect(total('Bob') - bob).toBe(REWARD + deposit)
    expect(total('Dave') - dave).toBe(100n * UNIT - deposit)
  })
})

// A submitter gains from its task ending Unverified (the escrow comes back,
// the solver's run is published). Its puppets, drawn as verifiers, claim they
// cannot fetch an honest solver's checkpoints: before, an answered challenge
// released the slot with no penalty and the deposit came back, so a puppet
// in every replacement slot ended the task Unverified for nothing while an
// honest verifier's accept stood. The first test fails if the coalition ends
// better off than by honest play; the second if an honest verifier facing a
// solver that really serves nobody pays for it.
describe('stalling with answered availability challenges', () => {
  it('a puppet\'s answered challenge contradicted by an accept that stood costs it the penalty of a failed slot', () => {
    // Dave is Alice's puppet, Eve honest: both drawn in round 0; Alice's other puppets register as the only replacements
    const coalition = (): bigint => ['Alice', 'Dave', 'Ferdie', 'Peer1'].reduce((s, n) => s + total(n), 0n)
    const [start, eve] = [coalition(), total('Eve')]
    challengedAndAnswered()
    for (const n of ['Ferdie', 'Peer1']) expect(h.run(n, 'Arbitration', 'register_node', h.registerArgs(n, 4, STAKE)).error).toBeUndefined()
    h.advance(1)
    // Eve fetched and replayed: her accept stands
    expect(h.run('Eve', 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: harnessSample(h, 'Eve') }).error).toBeUndefined()
    const ev: string[] = []
    const challenged = new Set(['Dave'])
    for (let i = 0; i < 100 && task().phase === 'Verifying'; i++) {
      ev.push(...h.advance(1))
      // each replacement puppet claims it cannot fetch either
      for (const v of harnessAssignments(h)!.verifiers) {
        const name = Object.entries(h.accounts).find(([, a]) => a === v.verifier)![0]
        if (v.status === 'Active' && !challenged.has(name) && name !== 'Eve') { challenged.add(name); challenge(name) }
      }
    }
    expect([...challenged].sort()).toEqual(['Dave', 'Ferdie', 'Peer1'])
    expect(task().phase).toBe('Unverified')
    // honest play: Alice pays R + 2V and her puppet earns V back: the coalition is down R + V
    expect(coalition() - start).toBeLessThan(-(REWARD + 100n * UNIT))
    expect(ev.filter(e => e === 'Arbitration.AssignmentLapsed')).toHaveLength(3)
    // the honest verifier is paid for her standing accept; the honest solver is not slashed
    expect(total('Eve') - eve).toBe(100n * UNIT)
    expect(h.reserved('Bob')).toBe(STAKE)
  })

  it('honest verifiers facing a solver that proves possession but serves nobody lose nothing: no accept contradicts them', () => {
    const [bob, dave, eve] = [total('Bob'), total('Dave'), total('Eve')]
    challengedAndAnswered()
    // Eve cannot fetch either: she challenges the same checkpoint once Dave's challenge is answered
    challenge('Eve')
    const ev = toTheEnd()
    expect(ev).toContain('Arbitration.TaskUnverified')
    expect(ev).not.toContain('Arbitration.AssignmentLapsed')
    for (const n of ['Dave', 'Eve']) expect(harnessAssignments(h)!.verifiers.find(v => v.verifier === h.accounts[n])!.status).toBe('Released')
    expect(total('Dave')).toBe(dave)
    expect(total('Eve')).toBe(eve)
    expect(h.reserved('Dave')).toBe(STAKE)
    expect(h.reserved('Eve')).toBe(STAKE)
    // the withholding solver earns nothing
    expect(total('Bob')).toBe(bob)
  })
})
