import { u8aToHex, hexToU8a } from '@polkadot/util'
import { beforeEach, describe, expect, it } from 'vitest'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import type { TaskInfo } from '../../devnet/chain/runtime/arbitration.js'
import { availabilitySeed } from '../helpers/availability-v1.js'
import { harnessAssignments, harnessSample } from '../helpers/verdict-sample.js'
import * as reference from '../../protocols/reference/index.js'
import { STAKE, STEP, availabilityAnswer, commitAvailabilityProof, serveOnChain, serveParts, submitAvailabilityTask } from '../helpers/availability-task.js'
import { Harness } from '../unit/chain/harness.js'

// A solver that keeps its checkpoints but serves them to nobody. Before, it
// answered every availability challenge by proving possession (sampled
// rows), collected or returned the deposits and nobody could replay; now an
// answer serves the whole checkpoint on chain, so it either serves (the
// challenger replays from the chain) or is slashed. Each test fails if
// withholding pays, or if an honest party pays for it.

const REWARD = 600n * UNIT

let h: Harness
const task = (): TaskInfo => h.read<TaskInfo>('Arbitration', 'Tasks', 0)!
const total = (n: string): bigint => h.free(n) + h.reserved(n)
const status = (n: string): string | undefined => harnessAssignments(h)!.verifiers.find(v => v.verifier === h.accounts[n])?.status

beforeEach(async () => {
  h = await Harness.create({ reference })
  for (const [n, roles] of [['Bob', 2], ['Dave', 4], ['Eve', 4]] as const) expect(h.run(n, 'Arbitration', 'register_node', h.registerArgs(n, roles, STAKE)).error).toBeUndefined()
  expect(submitAvailabilityTask(h, { solverReward: REWARD })).toBe('Bob')
  commitAvailabilityProof(h, 'Bob')
  // the block whose on_initialize draws the verifiers (Dave and Eve, the only ones)
  h.advance(1)
})

/** `who` challenges checkpoint STEP (returns the challenge id); Bob's proof of possession is refused. */
function challenge (who: string): bigint {
  const id = h.read<bigint>('Arbitration', 'NextAvailabilityId') ?? 0n
  expect(h.run(who, 'Arbitration', 'challenge_availability', { taskId: 0, checkpointStep: STEP }).error).toBeUndefined()
  const seed = availabilitySeed(hexToU8a(h.randomness()), id)
  expect(h.run('Bob', 'Arbitration', 'respond_availability', { challengeId: id, response: u8aToHex(availabilityAnswer(seed)) }).error).toBe('Arbitration.InvalidAvailabilityResponse')
  return id
}

function toTheEnd (timeOut = false): string[] {
  const ev: string[] = []
  for (let i = 0; i < 100 && task().phase === 'Verifying'; i++) {
    if (timeOut) for (const [, id] of h.read<Array<[number, bigint]>>('Arbitration', 'OpenAvailability', 0) ?? []) h.run('Eve', 'Arbitration', 'availability_timeout', { challengeId: id })
    ev.push(...h.advance(1))
  }
  return ev
}

describe('withheld checkpoints', () => {
  it('a solver that holds its checkpoints but serves nobody, on chain either, is slashed; the challengers lose nothing', () => {
    const [bob, dave, eve] = [total('Bob'), total('Dave'), total('Eve')]
    challenge('Dave')
    // Eve cannot fetch either: an assigned verifier may open its own challenge of the same checkpoint
    challenge('Eve')
    for (const n of ['Dave', 'Eve']) expect(h.run(n, 'Arbitration', 'submit_verdict', { taskId: 0, accept: false, checkedSteps: [] }).error).toBeUndefined()
    const ev = toTheEnd(true)
    expect(ev).not.toContain('Arbitration.AssignmentLapsed')
    expect(task().phase).toBe('Failed')
    // before: Unverified, the solver lost nothing
    expect(total('Bob')).toBeLessThan(bob - STAKE / 4n)
    expect(total('Dave')).toBeGreaterThanOrEqual(dave)
    expect(total('Eve')).toBeGreaterThanOrEqual(eve)
  })

  it('a challenge the solver serves: the challenger has the data and votes; its deposit comes back, a whistleblower\'s goes to the solver when the task is verified', () => {
    expect(h.run('Ferdie', 'Arbitration', 'register_node', h.registerArgs('Ferdie', 8, STAKE)).error).toBeUndefined()
    const [bob, dave, ferdie] = [total('Bob'), total('Dave'), total('Ferdie')]
    const id = challenge('Dave')
    expect(serveOnChain(h, 'Bob', id).error).toBeUndefined()
    // the checkpoint is on chain now: Ferdie, not drawn, has nothing left to challenge there
    expect(h.run('Ferdie', 'Arbitration', 'challenge_availability', { taskId: 0, checkpointStep: STEP }).error).toBe('Arbitration.CheckpointServed')
    for (const v of ['Dave', 'Eve']) expect(h.run(v, 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: harnessSample(h, v) }).error).toBeUndefined()
    const ev = toTheEnd()
    expect(ev).toContain('Arbitration.TaskSettled')
    // Dave was served and voted: paid V, deposit back (before: the deposit went to the solver)
    expect(total('Bob') - bob).toBe(REWARD)
    expect(total('Dave') - dave).toBe(100n * UNIT)
    expect(total('Ferdie')).toBe(ferdie)
  })

  it('a whistleblower\'s needless challenge of a task verified anyway costs it the deposit, to the solver', () => {
    expect(h.run('Ferdie', 'Arbitration', 'register_node', h.registerArgs('Ferdie', 8, STAKE)).error).toBeUndefined()
    const [bob, ferdie] = [total('Bob'), total('Ferdie')]
    const id = challenge('Ferdie')
    expect(serveOnChain(h, 'Bob', id).error).toBeUndefined()
    for (const v of ['Dave', 'Eve']) expect(h.run(v, 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: harnessSample(h, v) }).error).toBeUndefined()
    expect(toTheEnd()).toContain('Arbitration.TaskSettled')
    const deposit = h.read<{ disputeBond: bigint }>('Arbitration', 'Params')!.disputeBond
    expect(total('Bob') - bob).toBe(REWARD + deposit)
    expect(total('Ferdie') - ferdie).toBe(-deposit)
  })
})

// A submitter gains from its task ending Unverified (the escrow comes back,
// the solver's run is published). Its puppets, drawn as verifiers, claim they
// cannot fetch an honest solver's checkpoints. Before the serve, an answered
// challenge released the slot with no penalty (then the contradiction rule:
// −(B + R) when an accept stood). Now the honest solver serves the checkpoint
// on chain: the puppet has the data and owes a verdict like anyone served,
// and a later puppet cannot challenge what is on chain. The test fails if
// the coalition ends better off than by honest play (paying R + 2V and
// getting V back), or the honest parties pay anything.
describe('stalling with availability challenges', () => {
  it('a puppet served on chain that stays silent pays the penalty of a failed slot; its replacements cannot challenge the served checkpoint', () => {
    // Dave is Alice's puppet, Eve honest: both drawn in round 0; Alice's other puppets register as the only replacements
    const coalition = (): bigint => ['Alice', 'Dave', 'Ferdie', 'Peer1'].reduce((s, n) => s + total(n), 0n)
    const [start, eve, bob] = [coalition(), total('Eve'), total('Bob')]
    const id = challenge('Dave')
    expect(h.run('Dave', 'Arbitration', 'submit_verdict', { taskId: 0, accept: false, checkedSteps: [] }).error).toBeUndefined()
    for (const n of ['Ferdie', 'Peer1']) expect(h.run(n, 'Arbitration', 'register_node', h.registerArgs(n, 4, STAKE)).error).toBeUndefined()
    // Eve fetched and replayed: her accept stands
    expect(h.run('Eve', 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: harnessSample(h, 'Eve') }).error).toBeUndefined()
    // the honest solver serves: Dave's reject is withdrawn, he owes a verdict
    const r = h.run('Bob', 'Arbitration', 'respond_availability', { challengeId: id, response: u8aToHex(serveParts()[0]) })
    expect(r.error).toBeUndefined()
    expect(r.events).toContain('Arbitration.VerdictReopened')
    const ev: string[] = []
    const tried = new Set(['Dave'])
    for (let i = 0; i < 100 && task().phase === 'Verifying'; i++) {
      ev.push(...h.advance(1))
      for (const v of harnessAssignments(h)!.verifiers) {
        const name = Object.entries(h.accounts).find(([, a]) => a === v.verifier)![0]
        if (v.status !== 'Active' || tried.has(name) || name === 'Eve') continue
        tried.add(name)
        // each replacement puppet claims it cannot fetch either: the checkpoint is on chain, there is nothing to challenge
        expect(h.run(name, 'Arbitration', 'challenge_availability', { taskId: 0, checkpointStep: STEP }).error).toBe('Arbitration.CheckpointServed')
        expect(h.run(name, 'Arbitration', 'submit_verdict', { taskId: 0, accept: false, checkedSteps: [] }).error).toBeUndefined()
      }
    }
    expect([...tried].sort()).toEqual(['Dave', 'Ferdie', 'Peer1'])
    expect(task().phase).toBe('Unverified')
    expect(ev.filter(e => e === 'Arbitration.AssignmentLapsed')).toHaveLength(3)
    expect(status('Dave')).toBe('Lapsed')
    // honest play: Alice pays R + 2V and her puppet earns V back: the coalition is down R + V
    expect(coalition() - start).toBeLessThan(-(REWARD + 100n * UNIT))
    // the honest verifier is paid for her standing accept; the honest solver keeps its stake and gets the silent puppet's deposit
    expect(total('Eve') - eve).toBe(100n * UNIT)
    expect(h.reserved('Bob')).toBe(STAKE)
    expect(total('Bob')).toBeGreaterThanOrEqual(bob)
  })

  it('a served puppet cannot chain challenges past the window: the round waits for its verdict only until its served grace ends', () => {
    const id = challenge('Dave')
    expect(h.run('Eve', 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: harnessSample(h, 'Eve') }).error).toBeUndefined()
    expect(serveOnChain(h, 'Bob', id).error).toBeUndefined()
    const deadline = harnessAssignments(h)!.verifiers.find(v => v.verifier === h.accounts.Dave)!.deadline
    expect(deadline).toBeGreaterThanOrEqual(h.number + task().challengeWindow)
    h.advance(task().challengeEnd - h.number)
    // past the window: another checkpoint (0 holds a real state too) would hold the task a window more per challenge
    expect(h.run('Dave', 'Arbitration', 'challenge_availability', { taskId: 0, checkpointStep: 0 }).error).toBe('Arbitration.ChallengeWindowClosed')
    expect(task().phase).toBe('Verifying')
    const ev = h.advance(deadline - h.number + 1)
    expect(ev).toContain('Arbitration.AssignmentLapsed')
    expect(status('Dave')).toBe('Lapsed')
  })
})
