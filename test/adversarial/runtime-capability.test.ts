import { u8aToHex } from '@polkadot/util'
import { beforeEach, describe, expect, it } from 'vitest'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import type { TaskInfo } from '../../devnet/chain/runtime/arbitration.js'
import { WASM_PSK_RUNTIME, WASM_RUNTIME } from '../../protocols/program/runtime.js'
import * as reference from '../../protocols/reference/index.js'
import { minRewards, minWindow, taskProgram, type ProgramArgs } from '../helpers/program.js'
import { assignedNames } from '../helpers/verdict-sample.js'
import { Harness } from '../unit/chain/harness.js'

// A task's runtime and the peers the chain picks for it. psk1 runs at full
// speed only where its native addon loads; a peer without it replays psk1
// with the JavaScript kernels, several times slower. The chain used to draw
// verifiers (and select solvers) whatever they could run: an honest peer
// without the addon, drawn for a psk1 task, missed its deadline and lapsed
// (B + R), or as a solver was slashed. Now peers declare the runtimes that
// need a declaration (set_runtimes) and only those that declared a task's
// runtime are selected, reserved or drawn for it. Each test fails if a peer
// that did not declare psk1 is picked for a psk1 task, or if declaring (or
// withdrawing a declaration) lets a peer dodge a slot it answered for.

const H = (b: number): string => '0x' + b.toString(16).padStart(2, '0').repeat(32)
const STAKE = 2000n * UNIT
/** the peers without the addon hold most of the stake: an undeclared peer is almost surely drawn if the chain ignores runtimes */
const BIG = 20_000n * UNIT
const PSK = taskProgram({ steps: 100, checkpointEvery: 10, runtime: WASM_PSK_RUNTIME })
const WASM = taskProgram({ steps: 100, checkpointEvery: 10, runtime: WASM_RUNTIME })
const hexId = (r: string): string => u8aToHex(new TextEncoder().encode(r))

let h: Harness
const task = (id: number): TaskInfo => h.read<TaskInfo>('Arbitration', 'Tasks', id)!
const nameOf = (account: string | null): string => Object.entries(h.accounts).find(([, v]) => v === account)?.[0] ?? 'none'
const register = (who: string, roles: number, stake = STAKE): void => {
  expect(h.run(who, 'Arbitration', 'register_node', h.registerArgs(who, roles, stake)).error).toBeUndefined()
}
const declare = (who: string, runtimes: string[]): string | undefined => h.run(who, 'Arbitration', 'set_runtimes', { runtimes: runtimes.map(hexId) }).error

function submit (p: ProgramArgs, verifierCount: number): number {
  const id = Number(h.read<bigint>('Arbitration', 'NextTaskId') ?? 0n)
  const { solverReward, verifierReward } = minRewards(p, verifierCount)
  expect(h.run('Alice', 'Arbitration', 'submit_task', {
    programHash: p.programHash, program: p.programHex, datasetRoot: H(2), skeletonRoot: H(3), steps: 100, checkpointEvery: 10,
    escrow: solverReward + verifierReward * BigInt(verifierCount), solverReward, verifierReward, verifierCount,
    challengeWindow: minWindow(p, verifierCount), solveTimeout: 40
  }).error).toBeUndefined()
  return id
}

/** The task's solver commits (whoever was selected) and its first round is drawn. */
function commitAndDraw (id: number): void {
  expect(h.run(nameOf(task(id).solver), 'Arbitration', 'commit_proof', { taskId: id, proofRoot: H(9), finalStateRoot: H(8), stepCount: 100, checkpoints: [] }).error).toBeUndefined()
  h.advance(2)
}

beforeEach(async () => {
  h = await Harness.create({ reference })
  // Bob and Dave run psk1 (their addon loads); Charlie and Eve do not, and hold ten times their stake
  register('Bob', 2)
  register('Charlie', 2, BIG)
  register('Dave', 4)
  register('Eve', 4, BIG)
  register('Ferdie', 4)
  for (const n of ['Bob', 'Dave', 'Ferdie']) expect(declare(n, [WASM_PSK_RUNTIME])).toBeUndefined()
})

describe('runtime capabilities', () => {
  it('a peer that did not declare psk1 is never selected, reserved or drawn for a psk1 task', () => {
    const drawn = new Set<string>()
    const solvers = new Set<string>()
    for (let i = 0; i < 6; i++) {
      const id = submit(PSK, 2)
      h.advance(1)
      expect(task(id).phase).toBe('Solving')
      solvers.add(nameOf(task(id).solver))
      for (const who of h.read<string[]>('Arbitration', 'VerifierReservations', id) ?? []) drawn.add(nameOf(who))
      commitAndDraw(id)
      for (const n of assignedNames(h, id)) drawn.add(n)
      // the task ends (its verifiers silent: their lapses are not this test's point) so the next one finds their stake free
      for (let b = 0; b < 400 && h.read<bigint[]>('Arbitration', 'OpenTasks')!.includes(BigInt(id)); b++) h.advance(1)
    }
    expect([...solvers]).toEqual(['Bob'])
    expect(drawn.has('Eve')).toBe(false)
    expect([...drawn].sort()).toEqual(['Dave', 'Ferdie'])
  })

  it('a psk1 task waits for enough verifiers that declared psk1 rather than drawing one that cannot replay it', () => {
    expect(declare('Ferdie', [])).toBeUndefined()
    const id = submit(PSK, 2)
    const ev = h.advance(1)
    // Eve's stake would answer for it, but she cannot run psk1
    expect(task(id).phase).toBe('Unassigned')
    expect(ev).toContain('Arbitration.AwaitingVerifierStake')
    expect(declare('Ferdie', [WASM_PSK_RUNTIME])).toBeUndefined()
    h.advance(1)
    expect(task(id).phase).toBe('Solving')
    expect((h.read<string[]>('Arbitration', 'VerifierReservations', id) ?? []).map(nameOf).sort()).toEqual(['Dave', 'Ferdie'])
  })

  it('declaring nothing dodges no work a peer can do: the runtime that needs no declaration is everyone\'s', () => {
    // Eve and Charlie declared nothing; with the others gone, a task on the plain wasm runtime still finds them
    for (const n of ['Bob', 'Dave', 'Ferdie']) expect(h.run(n, 'Arbitration', 'unregister').error).toBeUndefined()
    const id = submit(WASM, 1)
    h.advance(1)
    expect(nameOf(task(id).solver)).toBe('Charlie')
    commitAndDraw(id)
    expect(assignedNames(h, id)).toEqual(['Eve'])
    // and the plain runtime is not declarable: it cannot be withdrawn either
    expect(declare('Eve', [WASM_RUNTIME])).toBe('Arbitration.UnknownRuntime')
  })

  it('withdrawing a declaration after being reserved keeps the slot: the reserved verifier is drawn and lapses if silent', () => {
    const id = submit(PSK, 2)
    h.advance(1)
    const reserved = (h.read<string[]>('Arbitration', 'VerifierReservations', id) ?? []).map(nameOf).sort()
    expect(reserved).toEqual(['Dave', 'Ferdie'])
    // Dave sees the task and withdraws psk1 to escape it
    expect(declare('Dave', [])).toBeUndefined()
    commitAndDraw(id)
    expect(assignedNames(h, id).sort()).toEqual(['Dave', 'Ferdie'])
    const before = h.reserved('Dave')
    const ev: string[] = []
    for (let b = 0; b < 400 && task(id).phase === 'Verifying'; b++) ev.push(...h.advance(1))
    expect(ev).toContain('Arbitration.AssignmentLapsed')
    expect(h.reserved('Dave')).toBeLessThan(before)
  })

  it('set_runtimes: only registered nodes, only runtimes that need a declaration, each once; unregistering forgets it', () => {
    expect(declare('Alice', [WASM_PSK_RUNTIME])).toBe('Arbitration.NotRegistered')
    expect(declare('Dave', ['tfjs-wasm@9.9.9'])).toBe('Arbitration.UnknownRuntime')
    expect(declare('Dave', [WASM_PSK_RUNTIME, WASM_PSK_RUNTIME])).toBe('Arbitration.UnknownRuntime')
    expect(h.read<string[]>('Arbitration', 'NodeRuntimes', h.accounts.Dave as never)).toEqual([hexId(WASM_PSK_RUNTIME)])
    expect(h.run('Dave', 'Arbitration', 'unregister').error).toBeUndefined()
    expect(h.read<string[]>('Arbitration', 'NodeRuntimes', h.accounts.Dave as never)).toEqual([])
    register('Dave', 4)
    expect(h.read<string[]>('Arbitration', 'NodeRuntimes', h.accounts.Dave as never)).toEqual([])
  })
})
