import { beforeEach, describe, expect, it } from 'vitest'
import { u8aToHex } from '@polkadot/util'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import type { NodeInfo, TaskInfo } from '../../devnet/chain/runtime/arbitration.js'
import type { CapacityRent } from '../../devnet/chain/runtime/capacity-rent.js'
import { faultsOf } from '../../devnet/chain/runtime/hook-guard.js'
import * as reference from '../../protocols/reference/index.js'
import { assignedNames, harnessSample } from '../helpers/verdict-sample.js'
import { minWindow, taskProgram } from '../helpers/program.js'
import { Harness } from '../unit/chain/harness.js'
import { STEP, commitAvailabilityProof, serveParts, submitAvailabilityTask } from '../helpers/availability-task.js'

// on_initialize is not a call: a throw in it fails the block, and the same
// stored task throws again in the next, so one task halted the chain for
// everyone (a solve_timeout of 2^32 − 1 did: test/adversarial/deadline-overflow.test.ts;
// that input is refused now, the class of bug is not). Each test injects a
// fault no call can cause any more, by writing the stored task directly, and
// fails if a later block cannot be produced, if the other task does not
// settle, or if the faulted task's funds are not where docs/economics.md
// "Faulted tasks" says (escrow back, bindings released, nobody slashed or paid).

const H = (b: number): string => '0x' + b.toString(16).padStart(2, '0').repeat(32)
const U32_MAX = 0xffff_ffff
const STAKE = 2000n * UNIT
const ESCROW = 1000n * UNIT
const program = taskProgram({ steps: 100, checkpointEvery: 10 })
const WINDOW = minWindow(program, 1)
const task = {
  programHash: program.programHash, program: program.programHex, datasetRoot: H(2), skeletonRoot: H(3), steps: 100, checkpointEvery: 10,
  escrow: ESCROW, solverReward: 600n * UNIT, verifierReward: 100n * UNIT, verifierCount: 1, challengeWindow: WINDOW, solveTimeout: 20
}

let h: Harness
const taskOf = (id: number): TaskInfo => h.read<TaskInfo>('Arbitration', 'Tasks', id)!
const worth = (who: string): bigint => h.free(who) + h.reserved(who)
const node = (who: string): NodeInfo => h.read<NodeInfo>('Arbitration', 'Nodes', h.accounts[who])!
/** Writes one field of a stored task, as no call can. */
const corrupt = (id: number, field: Partial<TaskInfo>): void => { h.write('Arbitration', 'Tasks', id, { ...taskOf(id), ...field }) }
/** Blocks until the block after `n`; throws if one cannot be produced. */
const runTo = (n: number): string[] => h.advance(Math.max(0, n - h.number))
/** The TaskFaulted events of the last block, as the chain process logs them. */
const lastFaults = (): ReturnType<typeof faultsOf> => faultsOf(h.lastEvents)

beforeEach(async () => {
  h = await Harness.create({ reference })
  for (const [who, roles] of [['Bob', 2], ['Dave', 4], ['Eve', 4]] as const) {
    expect(h.run(who, 'Arbitration', 'register_node', h.registerArgs(who, roles, STAKE)).error).toBeUndefined()
  }
})

describe('a task whose step of on_initialize throws', () => {
  it('at the selection (a deadline past u32): the block is produced, the task is quarantined with its escrow back, the other task settles', () => {
    const r = h.block([['Alice', 'Arbitration', 'submit_task', task], ['Alice', 'Arbitration', 'submit_task', task]]).results
    expect(r.map(x => x.error)).toEqual([undefined, undefined])
    corrupt(0, { solveTimeout: U32_MAX })
    const alice = worth('Alice')

    // before: this block and every later one threw; now both tasks are processed, each in its own layer
    let ev: string[] = []
    expect(() => { ev = h.advance(1) }).not.toThrow()
    expect(ev).toContain('Arbitration.TaskFaulted')
    expect(lastFaults()).toEqual([{ taskId: 0n, reason: expect.stringMatching(/u32|overflow|bit|range|large/i) as string, refunded: ESCROW }])
    expect(taskOf(0).phase).toBe('Faulted')
    // the selection's writes were dropped with it: no solver, no verifier reserved, no stake bound
    expect(taskOf(0).solver).toBeNull()
    expect(h.read<string[]>('Arbitration', 'VerifierReservations', 0)).toEqual([])
    expect(h.read<bigint[]>('Arbitration', 'OpenTasks')).toEqual([1n])
    // escrow and rent deposit of task 0 back (it held no stake: no rent); task 1's still reserved
    expect(worth('Alice')).toBe(alice)
    expect(h.reserved('Alice')).toBe(ESCROW + h.read<CapacityRent>('Arbitration', 'CapacityRents', 1)!.deposit)
    expect(h.read('Arbitration', 'CapacityRents', 0)).toBeUndefined()

    // the other task goes on as if nothing happened, and the faulted one never throws again
    expect(taskOf(1).phase).toBe('Solving')
    expect(taskOf(1).solver).toBe(h.accounts.Bob)
    const bob = worth('Bob')
    expect(h.run('Bob', 'Arbitration', 'commit_proof', { taskId: 1, proofRoot: H(9), finalStateRoot: H(8), stepCount: 100, checkpoints: [] }).error).toBeUndefined()
    h.advance(2)
    const [verifier] = assignedNames(h, 1)
    expect(h.run(verifier, 'Arbitration', 'submit_verdict', { taskId: 1, accept: true, checkedSteps: harnessSample(h, verifier, 1) }).error).toBeUndefined()
    let later: string[] = []
    expect(() => { later = runTo(taskOf(1).challengeEnd + 1) }).not.toThrow()
    expect(later).toContain('Arbitration.TaskSettled')
    expect(later).not.toContain('Arbitration.TaskFaulted')
    expect(taskOf(1).phase).toBe('Settled')
    expect(worth('Bob')).toBe(bob + 600n * UNIT)
    expect(taskOf(0).phase).toBe('Faulted')
  })

  it('at the window\'s close (an extension past u32): the silent verifier\'s penalty and the task\'s writes are dropped, every binding released, nobody slashed or paid', () => {
    expect(h.run('Alice', 'Arbitration', 'submit_task', task).error).toBeUndefined()
    h.advance(1)
    expect(h.run('Bob', 'Arbitration', 'commit_proof', { taskId: 0, proofRoot: H(9), finalStateRoot: H(8), stepCount: 100, checkpoints: [] }).error).toBeUndefined()
    h.advance(2)
    const [verifier] = assignedNames(h, 0)
    expect(node(verifier).activeTasks).toBe(1)
    expect(node('Bob').activeTasks).toBe(1)
    // the window closes without a verdict: the round lapses the silent verifier, then the extension overflows
    corrupt(0, { challengeWindow: U32_MAX })
    const before = { alice: worth('Alice'), bob: worth('Bob'), verifier: worth(verifier), stake: node(verifier).stake }
    const end = taskOf(0).challengeEnd

    let ev: string[] = []
    expect(() => { ev = runTo(end + 3) }).not.toThrow()
    expect(ev.filter(e => e === 'Arbitration.TaskFaulted')).toHaveLength(1)
    expect(ev).not.toContain('Arbitration.AssignmentLapsed')
    expect(ev).not.toContain('Arbitration.VerificationExtended')
    const t = taskOf(0)
    expect(t.phase).toBe('Faulted')
    expect(t.challengeEnd).toBe(end)
    expect(h.read<bigint[]>('Arbitration', 'OpenTasks')).toEqual([])
    // neutral: the submitter gets its escrow back and pays the rent of the stake it held, as at every end
    expect(worth('Alice')).toBe(before.alice - h.rentPaid('Alice'))
    expect(h.rentPaid('Alice')).toBeGreaterThan(0n)
    expect(h.reserved('Alice')).toBe(0n)
    // the solver neither paid nor slashed, the silent verifier not penalized (the fault dropped the round's close)
    expect(worth('Bob')).toBe(before.bob)
    expect(worth(verifier)).toBe(before.verifier)
    expect(node(verifier).stake).toBe(before.stake)
    // their stakes are free to leave
    expect(node(verifier).activeTasks).toBe(0)
    expect(node('Bob').activeTasks).toBe(0)
    // the task is over: no verdict, no dispute; and their stakes are free to leave
    expect(h.run(verifier, 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: [] }).error).toBe('Arbitration.WrongPhase')
    expect(h.run(verifier, 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: 1 }).error).toBe('Arbitration.WrongPhase')
    expect(h.run(verifier, 'Arbitration', 'unregister').error).toBeUndefined()
    expect(h.run('Bob', 'Arbitration', 'unregister').error).toBeUndefined()
  })
})

describe('a task faulted with evidence open on it', () => {
  it('answered deposits go back; an open availability challenge runs to its end by its own calls, its deposit back too', () => {
    const solver = submitAvailabilityTask(h)
    commitAvailabilityProof(h, solver)
    // challenge 0 is of STEP, challenge 1 of checkpoint 0: the solver serves each on chain
    const respond = (id: number): string | undefined =>
      h.run(solver, 'Arbitration', 'respond_availability', { challengeId: id, response: u8aToHex(serveParts(undefined, undefined, id === 0 ? STEP : 0)[0]) }).error
    const before = { alice: worth('Alice'), dave: worth('Dave'), eve: worth('Eve'), solver: worth(solver) }
    // Dave's challenge answered (its deposit held for the settlement), then Eve's opened and not yet answered
    expect(h.run('Dave', 'Arbitration', 'challenge_availability', { taskId: 0, checkpointStep: STEP }).error).toBeUndefined()
    expect(respond(0)).toBeUndefined()
    expect(h.run('Eve', 'Arbitration', 'challenge_availability', { taskId: 0, checkpointStep: 0 }).error).toBeUndefined()
    expect(node('Eve').activeTasks).toBeGreaterThan(0)
    // an arithmetic edge: the stake-blocks the task's rent accrues overflow u128
    corrupt(0, { solverReward: 2n ** 128n - 1n })
    let ev: string[] = []
    expect(() => { ev = h.advance(1) }).not.toThrow()
    expect(ev).toContain('Arbitration.TaskFaulted')
    expect(taskOf(0).phase).toBe('Faulted')
    // Dave's answered deposit is back; Eve's challenge is still open, and the solver can still answer it
    expect(h.reserved('Dave')).toBe(STAKE)
    expect(h.read<{ status: string }>('Arbitration', 'AvailabilityChallenges', 1)!.status).toBe('Open')
    // until it ends the task stays open and the solver bound: a timeout would still slash it
    expect(h.read<bigint[]>('Arbitration', 'OpenTasks')).toEqual([0n])
    expect(h.run(solver, 'Arbitration', 'unregister').error).toBe('Arbitration.HasActiveTasks')
    expect(respond(1)).toBeUndefined()
    expect(h.reserved('Eve')).toBe(STAKE)
    h.advance(1)
    expect(h.read<bigint[]>('Arbitration', 'OpenTasks')).toEqual([])
    // nobody paid, nobody slashed, every binding released; the submitter pays the rent it held
    expect(worth('Dave')).toBe(before.dave)
    expect(worth('Eve')).toBe(before.eve)
    expect(worth(solver)).toBe(before.solver)
    expect(worth('Alice')).toBe(before.alice - h.rentPaid('Alice'))
    expect(h.reserved('Alice')).toBe(0n)
    for (const who of ['Dave', 'Eve', solver]) expect(node(who).activeTasks).toBe(0)
  })
})

describe('a solver that would trigger a fault to escape a ruling against it', () => {
  it('is still penalized when the ruling\'s reveal window ends; its stake stays bound until then', () => {
    expect(h.run('Alice', 'Arbitration', 'submit_task', task).error).toBeUndefined()
    h.advance(1)
    expect(h.run('Bob', 'Arbitration', 'commit_proof', { taskId: 0, proofRoot: H(9), finalStateRoot: H(8), stepCount: 100, checkpoints: [] }).error).toBeUndefined()
    h.advance(2)
    // a dispute adjudicated for Dave (what adjudicate stores; the game itself is test/adversarial/segments-chain.test.ts's),
    // then a fault before the reveal deadline: the hook that would penalize the solver is the one that faults
    const deadline = h.number + 4
    const ruling = { disputeId: 0n, challenger: h.accounts.Dave, step: 3, revealDeadline: deadline, outcome: 'AwaitingReveal', claimKind: 'State', honestPost: H(5) }
    corrupt(0, { rulings: [ruling as never], solverReward: 2n ** 128n - 1n })
    const stake = node('Bob').stake
    const dave = worth('Dave')
    expect(h.advance(1)).toContain('Arbitration.TaskFaulted')
    expect(taskOf(0).phase).toBe('Faulted')
    expect(h.run('Bob', 'Arbitration', 'unregister').error).toBe('Arbitration.HasActiveTasks')
    const ev = runTo(deadline + 1)
    expect(ev).toContain('Arbitration.SolverPenalized')
    expect(taskOf(0).rulings[0].outcome).toBe('SolverPenalized')
    expect(node('Bob').stake).toBe(stake / 2n)
    expect(worth('Dave')).toBeGreaterThan(dave)
    // then the task is closed and the rest of the solver's stake free to leave
    h.advance(1)
    expect(h.read<bigint[]>('Arbitration', 'OpenTasks')).toEqual([])
    expect(h.run('Bob', 'Arbitration', 'unregister').error).toBeUndefined()
  })
})

describe('a solver that would trigger a fault to escape a dispute open against it', () => {
  it('still loses it on time: the dispute runs on the faulted task, its stake bound until the end', () => {
    expect(h.run('Alice', 'Arbitration', 'submit_task', task).error).toBeUndefined()
    h.advance(1)
    expect(h.run('Bob', 'Arbitration', 'commit_proof', { taskId: 0, proofRoot: H(9), finalStateRoot: H(8), stepCount: 100, checkpoints: [] }).error).toBeUndefined()
    h.advance(2)
    expect(h.run('Dave', 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: 1 }).error).toBeUndefined()
    // Dave demands the solver's first message; then a fault
    expect(h.run('Dave', 'Arbitration', 'force_move', { disputeId: 0, theirs: '0x', mine: '0x' }).error).toBeUndefined()
    corrupt(0, { solverReward: 2n ** 128n - 1n })
    expect(h.advance(1)).toContain('Arbitration.TaskFaulted')
    expect(taskOf(0).phase).toBe('Faulted')
    expect(h.run('Bob', 'Arbitration', 'unregister').error).toBe('Arbitration.HasActiveTasks')
    const stake = node('Bob').stake
    const dave = worth('Dave')
    runTo(h.read<{ force: { due: number } }>('Arbitration', 'Disputes', 0)!.force.due + 1)
    const r = h.run('Eve', 'Arbitration', 'claim_timeout', { disputeId: 0 })
    expect(r.error).toBeUndefined()
    expect(r.events).toContain('Arbitration.TimeoutPenalty')
    expect(node('Bob').stake).toBeLessThan(stake)
    expect(worth('Dave')).toBeGreaterThan(dave)
    h.advance(1)
    expect(h.read<bigint[]>('Arbitration', 'OpenTasks')).toEqual([])
    expect(h.run('Bob', 'Arbitration', 'unregister').error).toBeUndefined()
  })
})

describe('a task whose stored record cannot even be decoded', () => {
  it('is dropped from the open tasks before any step reads it; the other task, whose selection reads every open task, is selected', () => {
    const r = h.block([['Alice', 'Arbitration', 'submit_task', task], ['Alice', 'Arbitration', 'submit_task', task]]).results
    expect(r.map(x => x.error)).toEqual([undefined, undefined])
    h.state.set(h.store.key('Arbitration', 'Tasks', 0n), Uint8Array.of(1, 2, 3))
    const reserved = h.reserved('Alice')
    let ev: string[] = []
    expect(() => { ev = h.advance(1) }).not.toThrow()
    expect(ev.filter(e => e === 'Arbitration.TaskFaulted')).toHaveLength(1)
    // nothing of it can be read, so nothing can be returned: its escrow stays reserved (docs/economics.md "Faulted tasks")
    expect(lastFaults()).toEqual([{ taskId: 0n, reason: expect.stringMatching(/AccountId/) as string, refunded: 0n }])
    expect(h.reserved('Alice')).toBe(reserved)
    expect(h.read<bigint[]>('Arbitration', 'OpenTasks')).toEqual([1n])
    expect(taskOf(1).phase).toBe('Solving')
    expect(() => h.advance(2)).not.toThrow()
  })
})
