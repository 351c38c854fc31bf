import { u8aToHex } from '@polkadot/util'
import { blake2AsU8a } from '@polkadot/util-crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import type { TaskInfo } from '../../devnet/chain/runtime/arbitration.js'
import * as reference from '../../protocols/reference/index.js'
import { PROGRAM, PROOF_ROOT, ROOTS, STAKE } from '../helpers/availability-task.js'
import { harnessAssignments } from '../helpers/verdict-sample.js'
import { Harness } from '../unit/chain/harness.js'

// The verdict cap against void verdicts (docs/economics.md "Verifier
// assignment"). A task holds at most 64 verdicts, and a verdict voided at a
// round's close (a bare reject, a reject whose evidence lost, a slashed
// blind accept) stayed in the list. On a task of 64 verifiers one void
// verdict filled the cap: the replacement drawn for its slot could not vote
// (VerifiersFull), so the honest replacement lapsed and lost B + R, in each
// extension, and the task ended Unverified with the solver unpaid. A griefer
// needs one of the 64 slots (a puppet with 5 % of the verifier stake holds
// one with probability 1 − 0.95⁶⁴ ≈ 96 %) and pays B + R for it once.

const K = 64
const R = 300n * UNIT
const V = 10n * UNIT
const H = (b: number): string => '0x' + b.toString(16).padStart(2, '0').repeat(32)
const ALL_UNITS = Array.from({ length: 10 }, (_, i) => i)
const acc = (i: number): string => u8aToHex(blake2AsU8a(`void-verdict-cap verifier ${i}`, 256))

let h: Harness
const task = (): TaskInfo => h.read<TaskInfo>('Arbitration', 'Tasks', 0)!
const stake = (who: string): bigint => h.read<{ stake: bigint }>('Arbitration', 'Nodes', who)?.stake ?? 0n
const active = (): string[] => (harnessAssignments(h)?.verifiers ?? []).filter(v => v.status === 'Active').map(v => v.verifier)

beforeAll(async () => {
  h = await Harness.create({ reference, capacityRentPpb: 0 })
  // K + 2 verifiers: the first draw takes K, the extension one more
  const verifiers = Array.from({ length: K + 2 }, (_, i) => acc(i))
  const funded = h.block(verifiers.map(v => ['Alice', 'Balances', 'transfer_allow_death', { dest: { Id: v }, value: 2n * STAKE }]))
  expect(funded.results.every(r => r.error === undefined)).toBe(true)
  const registered = h.block(verifiers.map((v, i) => [v, 'Arbitration', 'register_node', h.registerArgs(v, 4, STAKE, `vvc${i}`)]))
  expect(registered.results.map(r => r.error).filter(e => e !== undefined)).toEqual([])
  expect(h.run('Bob', 'Arbitration', 'register_node', h.registerArgs('Bob', 2, STAKE)).error).toBeUndefined()
}, 120_000)

describe('a void verdict does not take an honest replacement\'s place', () => {
  it('one bare reject among 64 verifiers: the replacement votes, is paid, and the task settles', () => {
    expect(h.run('Alice', 'Arbitration', 'submit_task', {
      programHash: PROGRAM.programHash, program: PROGRAM.programHex, datasetRoot: H(2), skeletonRoot: H(3), steps: 10, checkpointEvery: 5,
      escrow: R + V * BigInt(K), solverReward: R, verifierReward: V, verifierCount: K, challengeWindow: 16, solveTimeout: 20
    }).error).toBeUndefined()
    h.advance(1)
    expect(task().solver).toBe(h.accounts.Bob)
    expect(h.run('Bob', 'Arbitration', 'commit_proof', { taskId: 0, proofRoot: PROOF_ROOT, finalStateRoot: u8aToHex(ROOTS[10]), stepCount: 10, checkpoints: ['0x01'] }).error).toBeUndefined()
    h.advance(2)
    const drawn = active()
    expect(drawn.length).toBe(K)
    // the griefer holds one slot and rejects with no evidence; every other drawn verifier accepts
    const [griefer, ...honest] = drawn
    const votes = h.block([
      [griefer, 'Arbitration', 'submit_verdict', { taskId: 0, accept: false, checkedSteps: [] }],
      ...honest.map((v): [string, string, string, Record<string, unknown>] => [v, 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: ALL_UNITS }])
    ])
    expect(votes.results.map(r => r.error).filter(e => e !== undefined)).toEqual([])
    // the window closes without a quorum (the bare reject is void): the griefer lapses, a replacement is drawn
    for (let i = 0; i < 40 && task().extensions === 0; i++) h.advance(1)
    expect(task().extensions).toBe(1)
    h.advance(1)
    const replacement = active().find(v => !drawn.includes(v))
    expect(replacement).toBeDefined()
    const before = stake(replacement!)
    const freeBefore = h.free(replacement!)
    // before the fix: Arbitration.VerifiersFull (64 verdicts, one of them void), and the honest replacement lapsed for B + R
    expect(h.run(replacement!, 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: ALL_UNITS }).error).toBeUndefined()
    for (let i = 0; i < 40 && task().phase === 'Verifying'; i++) h.advance(1)
    expect(task().phase).toBe('Settled')
    expect(stake(replacement!)).toBe(before)
    expect(h.free(replacement!) - freeBefore).toBe(V)
    expect(stake(griefer)).toBe(STAKE - 100n * UNIT - R)
  })
})
