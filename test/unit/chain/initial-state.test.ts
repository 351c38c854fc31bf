import { beforeEach, describe, expect, it } from 'vitest'
import { u8aToHex } from '@polkadot/util'
import { UNIT } from '../../../devnet/chain/dev-spec.js'
import type { NodeInfo, TaskInfo } from '../../../devnet/chain/runtime/arbitration.js'
import { merkleRoot, sha256 } from '../../../protocols/commit/merkle.js'
import { stateRoot } from '../../../protocols/commit/state.js'
import type { TensorData } from '../../../protocols/commit/tensor.js'
import { buildInitClaim, encodeInitClaim, firstInitMismatch } from '../../../protocols/dispute/init-claim.js'
import { canonicalJson } from '../../../protocols/program/canonical-json.js'
import { initialState } from '../../../protocols/program/init.js'
import { newProgram } from '../../../protocols/program/index.js'
import * as reference from '../../../protocols/reference/index.js'
import { Harness } from './harness.js'

// challenge_initial_state on the pure runtime: who may call it and when, what
// a refused claim costs (nothing), and the two rulings' money.

const STAKE = 2000n * UNIT
const dataset = { kind: 'synthetic' as const, name: 'syn', sha256: 'cd'.repeat(32), trainSize: 64, testSize: 8, rowSize: 784, classes: 10, syntheticSeed: 3 }
const PROGRAM = newProgram({ model: 'mlp', dataset, steps: 4, optimizer: 'adam', batchSize: 8, seed: 21, checkpointEvery: 2 })
const BYTES = new TextEncoder().encode(canonicalJson(PROGRAM))
const HONEST = initialState(PROGRAM)
const CHEAT = HONEST.map((t, i) => i === 0 ? { ...t, values: t.values.map((v, k) => k === 4321 ? v + 0.5 : v) } : t) as TensorData[]

let h: Harness
let roots: Uint8Array[]
const task = (): TaskInfo => h.read<TaskInfo>('Arbitration', 'Tasks', 0) as TaskInfo
const stake = (who: string): bigint => (h.read<NodeInfo>('Arbitration', 'Nodes', h.accounts[who]) as NodeInfo).stake
const params = (): { disputeBond: bigint, slashPpm: number, winnerSharePpm: number } => h.read('Arbitration', 'Params') as never
const claimHex = (state: TensorData[], t: number, flat: number): string => u8aToHex(
  encodeInitClaim(buildInitClaim({ program: BYTES, stateRoots: roots, state, t, flat }))
)

async function committed (state: TensorData[]): Promise<void> {
  h = await Harness.create({ reference })
  for (const [n, roles] of [['Bob', 2], ['Dave', 4 | 8], ['Eve', 4 | 8]] as const) {
    expect(h.run(n, 'Arbitration', 'register_node', h.registerArgs(n, roles, STAKE)).error).toBeUndefined()
  }
  expect(h.run('Alice', 'Arbitration', 'submit_task', {
    programHash: '0x' + Buffer.from(sha256(BYTES)).toString('hex'), program: u8aToHex(BYTES), datasetRoot: '0x' + '02'.repeat(32), skeletonRoot: '0x' + '03'.repeat(32), steps: 4, checkpointEvery: 2,
    escrow: 1000n * UNIT, solverReward: 600n * UNIT, verifierReward: 100n * UNIT, verifierCount: 2, challengeWindow: 12, solveTimeout: 20
  }).error).toBeUndefined()
  h.advance(1)
  expect(task().solver).toBe(h.accounts.Bob)
  roots = [stateRoot(state, 0), ...[1, 2, 3, 4].map(i => sha256(Uint8Array.of(i)))]
  expect(h.run('Bob', 'Arbitration', 'commit_proof', { taskId: 0, proofRoot: u8aToHex(merkleRoot(roots)), finalStateRoot: u8aToHex(roots[4]), stepCount: 4, checkpoints: [] }).error).toBeUndefined()
}

describe('challenge_initial_state', () => {
  beforeEach(async () => { await committed(CHEAT) })

  it('rules: registered, not the solver, in the challenge window, a claim that proves something', () => {
    const m = firstInitMismatch(PROGRAM, CHEAT)!
    expect(m).toEqual({ t: 0, flat: 4321 })
    expect(h.run('Bob', 'Arbitration', 'challenge_initial_state', { taskId: 0, claim: claimHex(CHEAT, m.t, m.flat) }).error).toBe('Arbitration.SolverCannotVerify')
    expect(h.run('Ferdie', 'Arbitration', 'challenge_initial_state', { taskId: 0, claim: claimHex(CHEAT, m.t, m.flat) }).error).toBe('Arbitration.NotRegistered')
    expect(h.run('Dave', 'Arbitration', 'challenge_initial_state', { taskId: 1, claim: claimHex(CHEAT, m.t, m.flat) }).error).toBe('Arbitration.TaskNotFound')
    // refused claims reserve nothing: a state the solver did not commit, garbage
    const reserved = h.reserved('Dave')
    expect(h.run('Dave', 'Arbitration', 'challenge_initial_state', { taskId: 0, claim: claimHex(HONEST, 0, 0) }).error).toBe('Arbitration.InvalidProof')
    expect(h.run('Dave', 'Arbitration', 'challenge_initial_state', { taskId: 0, claim: '0x00ff' }).error).toBe('Arbitration.InvalidClaim')
    expect(h.reserved('Dave')).toBe(reserved)
    // no verdicts: the window runs out (with its extensions) and the task closes unverified
    for (let i = 0; i < 60 && task().phase === 'Verifying'; i++) h.advance(1)
    expect(task().phase).toBe('Unverified')
    expect(h.run('Dave', 'Arbitration', 'challenge_initial_state', { taskId: 0, claim: claimHex(CHEAT, m.t, m.flat) }).error).toBe('Arbitration.WrongPhase')
  })

  it('a wrong initial element: the solver is slashed (a share to the challenger), the task fails unpaid, the bond comes back', () => {
    const p = params()
    const [bob, daveFree, daveReserved] = [stake('Bob'), h.free('Dave'), h.reserved('Dave')]
    const r = h.run('Dave', 'Arbitration', 'challenge_initial_state', { taskId: 0, claim: claimHex(CHEAT, 0, 4321) })
    expect(r.error).toBeUndefined()
    expect(r.events).toContain('Arbitration.InitialStateRuled')
    const slash = bob * BigInt(p.slashPpm) / 1_000_000n
    expect(stake('Bob')).toBe(bob - slash)
    expect(h.free('Dave')).toBe(daveFree + slash * BigInt(p.winnerSharePpm) / 1_000_000n)
    expect(h.reserved('Dave')).toBe(daveReserved)
    expect(task().solverFailed).toBe(true)
    // once: the task fails anyway (an assigned verifier may still back its reject: test/adversarial/init-claim-copies.test.ts)
    expect(h.run('Ferdie', 'Arbitration', 'register_node', h.registerArgs('Ferdie', 8, STAKE)).error).toBeUndefined()
    expect(h.run('Ferdie', 'Arbitration', 'challenge_initial_state', { taskId: 0, claim: claimHex(CHEAT, 0, 4321) }).error).toBe('Arbitration.SolverAlreadyFailed')
    const bobFree = h.free('Bob')
    h.advance(14)
    expect(task().phase).toBe('Failed')
    expect(h.free('Bob')).toBe(bobFree)
  })

  it('a right element of a wrong state: the challenger loses its bond (a share to the solver)', () => {
    const p = params()
    const [bob, bobFree, daveFree] = [stake('Bob'), h.free('Bob'), h.free('Dave')]
    const r = h.run('Dave', 'Arbitration', 'challenge_initial_state', { taskId: 0, claim: claimHex(CHEAT, 0, 4320) })
    expect(r.error).toBeUndefined()
    expect(r.events).toEqual(expect.arrayContaining(['Arbitration.Slashed', 'Arbitration.InitialStateRuled']))
    expect(stake('Bob')).toBe(bob)
    expect(h.free('Bob')).toBe(bobFree + p.disputeBond * BigInt(p.winnerSharePpm) / 1_000_000n)
    expect(h.free('Dave')).toBe(daveFree - p.disputeBond)
    expect(task().solverFailed).toBe(false)
  })
})
