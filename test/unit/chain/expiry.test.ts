import { beforeEach, describe, expect, it } from 'vitest'
import { UNIT } from '../../../devnet/chain/dev-spec.js'
import type { NodeInfo, TaskInfo } from '../../../devnet/chain/runtime/arbitration.js'
import { UNASSIGNED_TIMEOUT } from '../../../devnet/chain/runtime/stake-spec.js'
import * as reference from '../../../protocols/reference/index.js'
import { minWindow, taskProgram } from '../../helpers/program.js'
import { Harness } from './harness.js'

// A task nobody can take must end: before, a task whose every solver had
// timed out (all excluded) stayed Unassigned forever, its escrow reserved.
// Now it expires UnassignedTimeout blocks after it became Unassigned, with
// the whole escrow back to the submitter (nobody worked on it).

const H = (b: number): string => '0x' + b.toString(16).padStart(2, '0').repeat(32)
const PROGRAM = taskProgram()
const ESCROW = 1000n * UNIT
let h: Harness
const task = (): TaskInfo => h.read<TaskInfo>('Arbitration', 'Tasks', 0)!
const register = (who: string, roles: number): void => { expect(h.run(who, 'Arbitration', 'register_node', h.registerArgs(who, roles, 2000n * UNIT)).error).toBeUndefined() }
const submit = (): void => {
  expect(h.run('Alice', 'Arbitration', 'submit_task', {
    programHash: PROGRAM.programHash, program: PROGRAM.programHex, datasetRoot: H(2), skeletonRoot: H(3), steps: 100, checkpointEvery: 10, escrow: ESCROW,
    solverReward: 600n * UNIT, verifierReward: 100n * UNIT, verifierCount: 2, challengeWindow: minWindow(PROGRAM, 2), solveTimeout: 20
  }).error).toBeUndefined()
}
/** Advances until the task leaves `phase` (at most `max` blocks); returns every event on the way. */
const runWhile = (phase: string, max: number): string[] => {
  const ev: string[] = []
  for (let i = 0; i < max && task().phase === phase; i++) ev.push(...h.advance(1))
  return ev
}

beforeEach(async () => { h = await Harness.create({ reference }) })

describe('a task nobody can take', () => {
  it('whose only solver timed out expires UnassignedTimeout blocks later, the whole escrow refunded', () => {
    register('Bob', 2)
    for (const n of ['Dave', 'Eve']) register(n, 4)
    submit()
    h.advance(1)
    expect(task().phase).toBe('Solving')
    const bob = h.read<NodeInfo>('Arbitration', 'Nodes', h.accounts.Bob as never)!.stake
    // Bob never commits: he is slashed for the missed deadline and excluded; no other solver exists
    expect(runWhile('Solving', 40)).toContain('Arbitration.SolverTimedOut')
    const unassignedAt = h.number
    expect(task().excluded).toEqual([h.accounts.Bob])
    const ev = runWhile('Unassigned', UNASSIGNED_TIMEOUT + 10)
    expect(ev).toContain('Arbitration.TaskExpired')
    expect(task().phase).toBe('Expired')
    expect(h.number - unassignedAt).toBeLessThanOrEqual(UNASSIGNED_TIMEOUT + 2)
    expect(h.number - unassignedAt).toBeGreaterThanOrEqual(UNASSIGNED_TIMEOUT)
    expect(h.reserved('Alice')).toBe(0n)
    // the task is off the open list, and nobody is bound by it any more
    expect(h.read<bigint[]>('Arbitration', 'OpenTasks')).toEqual([])
    for (const n of ['Dave', 'Eve']) expect(h.read<NodeInfo>('Arbitration', 'Nodes', h.accounts[n] as never)!.activeTasks).toBe(0)
    expect(h.read<NodeInfo>('Arbitration', 'Nodes', h.accounts.Bob as never)!.stake).toBeLessThan(bob)
    // over: a solver registering now does not revive it
    register('Charlie', 2)
    expect(h.advance(3)).not.toContain('Arbitration.SolverSelected')
  })

  it('with no solver registered at all, it expires too; one that registers in time gets it', () => {
    for (const n of ['Dave', 'Eve']) register(n, 4)
    submit()
    expect(runWhile('Unassigned', UNASSIGNED_TIMEOUT - 10)).not.toContain('Arbitration.TaskExpired')
    register('Bob', 2)
    h.advance(1)
    expect(task().phase).toBe('Solving')
  })

  it('without the verifier stake to answer for it, it waits (AwaitingVerifierStake) and expires, never reaching a solver', () => {
    register('Bob', 2)
    register('Dave', 4)
    submit()
    const ev = runWhile('Unassigned', UNASSIGNED_TIMEOUT + 10)
    expect(ev.filter(e => e === 'Arbitration.AwaitingVerifierStake')).toHaveLength(1)
    expect(ev).not.toContain('Arbitration.SolverSelected')
    expect(task().phase).toBe('Expired')
    expect(h.free('Alice') + h.reserved('Alice')).toBe(h.free('Alice'))
  })
})
