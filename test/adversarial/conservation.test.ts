import { u8aToHex } from '@polkadot/util'
import { beforeEach, describe, expect, it } from 'vitest'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import type { TaskInfo } from '../../devnet/chain/runtime/arbitration.js'
import { TREASURY } from '../../devnet/chain/runtime/balances.js'
import { CHALLENGE_POT } from '../../devnet/chain/runtime/challenge-shares.js'
import { UNASSIGNED_TIMEOUT } from '../../devnet/chain/runtime/stake-spec.js'
import * as reference from '../../protocols/reference/index.js'
import { PROGRAM, PROOF_ROOT, ROOTS, STAKE, serveOnChain } from '../helpers/availability-task.js'
import { CUSTOM_PROGRAM, DATASET_SERVER } from '../helpers/custom-dataset.js'
import { assignedNames, harnessAssignments } from '../helpers/verdict-sample.js'
import { Harness } from '../unit/chain/harness.js'

// Conservation through every ending (docs/economics.md, "Conservation"). Whoever breaks a money rule gains by a payment made
// twice, a deposit returned twice, a share paid to two winners, or loses an
// honest party's funds by one never returned. Two checks catch each of them,
// whatever the order a task ends in: every block, the balances of all the
// accounts there are (those endowed at genesis, the treasury, the challenge
// pot) add up to the total issuance (nothing created or destroyed, nothing
// paid to an account outside them); and once every task has ended, each
// account's reserved balance is exactly its node's stake (no escrow, bond,
// deposit or rent deposit left reserved, none returned from another's). The
// endings: Settled, Failed by an unanswered availability challenge while
// another was served, Unverified with lapsed slots, Expired, a task released
// and solved by another, a commitment never revealed, all interleaved; a void
// verdict's slot refilled and the task settled; a task waiting for verifier
// stake until it expires; a withheld dataset, one challenge of it unanswered
// and one served.

const NAMES = ['Alice', 'Bob', 'Charlie', 'Dave', 'Eve', 'Ferdie', 'Peer1', 'Peer2']
const H = (b: number): string => '0x' + b.toString(16).padStart(2, '0').repeat(32)
const ENDED = new Set(['Settled', 'Failed', 'Unverified', 'Expired'])
const ALL_UNITS = Array.from({ length: 10 }, (_, i) => i)

let h: Harness
const task = (id: number): TaskInfo => h.read<TaskInfo>('Arbitration', 'Tasks', id)!
const worth = (n: string): bigint => h.free(n) + h.reserved(n)
const stakeOf = (n: string): bigint => h.read<{ stake: bigint }>('Arbitration', 'Nodes', h.accounts[n])?.stake ?? 0n

/** Σ balances = total issuance; after every task ended, reserved = stake. Returns the balances' sum. */
function check (allEnded: boolean): bigint {
  const everyone = new Set([...h.rt.genesis.balances.map(([who]) => who), ...NAMES.map(n => h.accounts[n]), TREASURY, CHALLENGE_POT])
  const sum = [...everyone].reduce((s, n) => s + worth(n), 0n)
  expect(sum).toBe(h.read<bigint>('Balances', 'TotalIssuance'))
  if (allEnded) for (const n of NAMES) expect([n, h.reserved(n)]).toEqual([n, stakeOf(n)])
  return sum
}

/** Advances block by block, checking conservation each block, until `done` or `max` blocks. */
function advanceChecked (max: number, done: () => boolean): void {
  for (let i = 0; i < max && !done(); i++) { h.advance(1); check(false) }
  expect(done()).toBe(true)
}

function submit (o: { solverReward?: bigint, verifierCount?: number } = {}): number {
  const id = Number(h.read<bigint>('Arbitration', 'NextTaskId') ?? 0n)
  const solverReward = o.solverReward ?? 300n * UNIT
  const k = o.verifierCount ?? 2
  expect(h.run('Alice', 'Arbitration', 'submit_task', {
    programHash: PROGRAM.programHash, program: PROGRAM.programHex, datasetRoot: H(2), skeletonRoot: H(3), steps: 10, checkpointEvery: 5,
    escrow: solverReward + 100n * UNIT * BigInt(k) + 7n, solverReward, verifierReward: 100n * UNIT, verifierCount: k, challengeWindow: 16, solveTimeout: 20
  }).error).toBeUndefined()
  return id
}
const nameOf = (acc: string | null): string => Object.entries(h.accounts).find(([, v]) => v === acc)?.[0] ?? String(acc)
const commit = (id: number): void => {
  const who = nameOf(task(id).solver)
  expect(h.run(who, 'Arbitration', 'commit_proof', { taskId: id, proofRoot: PROOF_ROOT, finalStateRoot: u8aToHex(ROOTS[10]), stepCount: 10, checkpoints: ['0x01'] }).error).toBeUndefined()
}
const accept = (who: string, id: number): void => {
  expect(h.run(who, 'Arbitration', 'submit_verdict', { taskId: id, accept: true, checkedSteps: ALL_UNITS }).error).toBeUndefined()
}

beforeEach(async () => {
  h = await Harness.create({ reference })
  // solvers Bob and Charlie; verifiers Dave, Eve, Ferdie, Peer1 (Alice submits and is no node)
  for (const [n, roles] of [['Bob', 2], ['Charlie', 2], ['Dave', 4], ['Eve', 4], ['Ferdie', 4], ['Peer1', 4]] as const) {
    expect(h.run(n, 'Arbitration', 'register_node', h.registerArgs(n, roles, STAKE)).error).toBeUndefined()
  }
})

describe('every unit is accounted for through every ending of a task', () => {
  it('settled, failed with a served and an unanswered challenge, released and re-solved, unverified, and a commitment never revealed, interleaved', () => {
    const start = check(true)
    const settled = submit()
    const failed = submit()
    const unverified = submit({ verifierCount: 1 })
    h.advance(1)
    // the solver of `settled` hands it back once (fee and rent from its stake); another solver takes it
    const first = nameOf(task(settled).solver)
    expect(h.run(first, 'Arbitration', 'release_task', { taskId: settled }).error).toBeUndefined()
    advanceChecked(5, () => task(settled).phase === 'Solving' && task(failed).phase === 'Solving' && task(unverified).phase === 'Solving')
    for (const id of [settled, failed, unverified]) commit(id)
    advanceChecked(5, () => [settled, failed, unverified].every(id => assignedNames(h, id).length === task(id).verifierCount))
    // settled: both drawn verifiers accept; one also commits to a challenge it never reveals (its deposit forfeited)
    const [v1, v2] = assignedNames(h, settled)
    accept(v1, settled)
    accept(v2, settled)
    expect(h.run(v1, 'Arbitration', 'commit_challenge', { taskId: settled, hash: H(9) }).error).toBeUndefined()
    // failed: a verifier challenges both checkpoints; the solver serves 5 and withholds 0
    const [c1] = assignedNames(h, failed)
    expect(h.run(c1, 'Arbitration', 'submit_verdict', { taskId: failed, accept: false, checkedSteps: [] }).error).toBeUndefined()
    expect(h.run(c1, 'Arbitration', 'challenge_availability_many', { taskId: failed, checkpointSteps: [0, 5] }).error).toBeUndefined()
    const open = (): Array<[number, bigint]> => h.read<Array<[number, bigint]>>('Arbitration', 'OpenAvailability', failed) ?? []
    const five = open().find(([s]) => s === 5)![1]
    expect(serveOnChain(h, nameOf(task(failed).solver), five).error).toBeUndefined()
    check(false)
    // unverified: its one verifier stays silent through every round
    advanceChecked(200, () => {
      for (const [, id] of open()) h.run('Peer2', 'Arbitration', 'availability_timeout', { challengeId: id })
      return [settled, failed, unverified].every(id => ENDED.has(task(id).phase))
    })
    expect([task(settled).phase, task(failed).phase, task(unverified).phase]).toEqual(['Settled', 'Failed', 'Unverified'])
    expect(check(true)).toBe(start)
  }, 120_000)

  it('a void verdict replaced: the bare reject lapses, its replacement votes, and the task settles paying the standing verdicts of both rounds', () => {
    const start = check(true)
    const id = submit()
    h.advance(1)
    commit(id)
    advanceChecked(5, () => assignedNames(h, id).length === 2)
    const [stays, voids] = assignedNames(h, id)
    accept(stays, id)
    expect(h.run(voids, 'Arbitration', 'submit_verdict', { taskId: id, accept: false, checkedSteps: [] }).error).toBeUndefined()
    advanceChecked(60, () => task(id).extensions === 1 && assignedNames(h, id).length === 2)
    const replacement = assignedNames(h, id).find(n => n !== stays)!
    expect(replacement).not.toBe(voids)
    accept(replacement, id)
    advanceChecked(60, () => ENDED.has(task(id).phase))
    expect(task(id).phase).toBe('Settled')
    expect(check(true)).toBe(start)
  }, 120_000)

  it('a withheld dataset: one challenge unanswered (the reject stands), one served and its challenger silent (lapsed, its deposit to the submitter), settled after a replacement accepts', () => {
    const start = check(true)
    const id = Number(h.read<bigint>('Arbitration', 'NextTaskId') ?? 0n)
    expect(h.run('Alice', 'Arbitration', 'submit_task', {
      programHash: CUSTOM_PROGRAM.programHash, program: CUSTOM_PROGRAM.programHex, datasetRoot: u8aToHex(DATASET_SERVER.root), skeletonRoot: H(3),
      steps: 10, checkpointEvery: 5,
      escrow: 500n * UNIT + 7n, solverReward: 300n * UNIT, verifierReward: 100n * UNIT, verifierCount: 2, challengeWindow: 16, solveTimeout: 20
    }).error).toBeUndefined()
    advanceChecked(5, () => task(id).phase === 'Solving')
    commit(id)
    advanceChecked(5, () => assignedNames(h, id).length === 2)
    const [unanswered, served] = assignedNames(h, id)
    for (const n of [unanswered, served]) {
      expect(h.run(n, 'Arbitration', 'submit_verdict', { taskId: id, accept: false, checkedSteps: [] }).error).toBeUndefined()
      expect(h.run(n, 'Arbitration', 'challenge_dataset', { taskId: id, program: CUSTOM_PROGRAM.programHex }).error).toBeUndefined()
    }
    const record = (c: bigint): { challenger: string, steps: number[] } => h.read<{ challenger: string, steps: number[] }>('Arbitration', 'DatasetChallenges', c)!
    const challenges = (h.read<bigint[]>('Arbitration', 'OpenDatasetChallenges', id) ?? []).map(c => [c, record(c)] as const)
    const [servedId, servedC] = challenges.find(([, c]) => c.challenger === h.accounts[served])!
    for (const p of DATASET_SERVER.parts(servedC.steps)) expect(h.run('Alice', 'Arbitration', 'respond_dataset', { challengeId: servedId, part: u8aToHex(p) }).error).toBeUndefined()
    check(false)
    const replacements = new Set<string>()
    advanceChecked(200, () => {
      for (const [c] of challenges) h.run('Peer2', 'Arbitration', 'dataset_timeout', { challengeId: c })
      // a replacement drawn after the round closes accepts
      for (const n of assignedNames(h, id)) if (n !== unanswered && n !== served && !replacements.has(n)) { accept(n, id); replacements.add(n) }
      return ENDED.has(task(id).phase)
    })
    expect(task(id).phase).toBe('Settled')
    expect(replacements.size).toBe(1)
    expect(harnessAssignments(h, id)!.verifiers.filter(v => v.status === 'Lapsed').map(v => nameOf(v.verifier))).toEqual([served])
    expect(check(true)).toBe(start)
  }, 120_000)

  it('expired: a task no solver is left for, after one released it, and one waiting for verifier stake that never comes', async () => {
    const start = check(true)
    // a verifier reward only Charlie (no solver) cannot take: Bob is the only solver, and hands it back
    expect(h.run('Charlie', 'Arbitration', 'set_roles', { roles: 4 }).error).toBeUndefined()
    const id = submit()
    h.advance(1)
    expect(task(id).solver).toBe(h.accounts.Bob)
    expect(h.run('Bob', 'Arbitration', 'release_task', { taskId: id }).error).toBeUndefined()
    // six verifiers wanted, five registered: it waits (retrying its selection every block) and expires
    const waiting = submit({ verifierCount: 6 })
    // checked at its end only: 3,600 blocks, yielding to the test runner's worker now and then
    for (let i = 0; i < UNASSIGNED_TIMEOUT + 5 && (task(id).phase !== 'Expired' || task(waiting).phase !== 'Expired'); i++) {
      h.advance(1)
      if (i % 200 === 0) await new Promise(resolve => setImmediate(resolve))
    }
    expect([task(id).phase, task(waiting).phase]).toEqual(['Expired', 'Expired'])
    expect(check(true)).toBe(start)
  }, 300_000)
})
