import { beforeEach, describe, expect, it } from 'vitest'
import { UNIT } from '../../../devnet/chain/dev-spec.js'
import type { NodeInfo, Params, TaskInfo } from '../../../devnet/chain/runtime/arbitration.js'
import { rentDeposit, rentFor } from '../../../devnet/chain/runtime/capacity-rent.js'
import type { DisputeInfo } from '../../../devnet/chain/runtime/disputes.js'
import { h32, hex, signed } from '../../helpers/dispute-msgs.js'
import { pickWeighted, selectionSeed } from '../../../devnet/chain/runtime/randomness.js'
import { assignedNames, harnessSample } from '../../helpers/verdict-sample.js'
import { sha256 } from '../../../protocols/commit/merkle.js'
import { testPeer } from '../../helpers/peer-key.js'
import { Harness } from './harness.js'
import * as reference from '../../../protocols/reference/index.js'
import { minRewards, minWindow, taskProgram } from '../../helpers/program.js'

const H = (b: number): string => '0x' + b.toString(16).padStart(2, '0').repeat(32)
const peer = (s: string): string => '0x' + Buffer.from(`12D3KooW${s}`).toString('hex')
const STAKE = 2000n * UNIT
const PROGRAM = taskProgram()
/** a task of `o.steps` steps comes with a program of those steps (the chain binds the two) */
const task = (o: Record<string, unknown> = {}): Record<string, unknown> => {
  const steps = (o.steps ?? 100) as number; const checkpointEvery = (o.checkpointEvery ?? 10) as number
  const p = steps >= 1 && checkpointEvery >= 1 && checkpointEvery <= steps && (steps !== 100 || checkpointEvery !== 10)
    ? taskProgram({ steps, checkpointEvery })
    : PROGRAM
  return {
    programHash: p.programHash, program: p.programHex, datasetRoot: H(2), skeletonRoot: H(3), steps: 100, checkpointEvery: 10, escrow: 1000n * UNIT,
    solverReward: 600n * UNIT, verifierReward: 100n * UNIT, verifierCount: 2, solveTimeout: 20,
    // the shortest window the chain takes for the program
    challengeWindow: minWindow(p, Number(o.verifierCount ?? 2)), ...o
  }
}

let h: Harness
const register = (who: string, roles: number, stake = STAKE): string | undefined => h.run(who, 'Arbitration', 'register_node', h.registerArgs(who, roles, stake)).error
const params = (): Params => h.read<Params>('Arbitration', 'Params') as Params
const getTask = (id: number): TaskInfo => h.read<TaskInfo>('Arbitration', 'Tasks', id) as TaskInfo
const node = (who: string): NodeInfo => h.read<NodeInfo>('Arbitration', 'Nodes', h.accounts[who]) as NodeInfo
const who = (acc: string | null): string => Object.entries(h.accounts).find(([, v]) => v === acc)?.[0] ?? String(acc)

/** Alice submits; Bob and Charlie are solvers; Dave and Eve verifiers. Returns the selected solver's name. */
function assigned (o: Record<string, unknown> = {}): string {
  expect(register('Bob', 2)).toBeUndefined()
  expect(register('Charlie', 2)).toBeUndefined()
  expect(register('Dave', 4 | 8)).toBeUndefined()
  expect(register('Eve', 4 | 8)).toBeUndefined()
  const r = h.run('Alice', 'Arbitration', 'submit_task', task(o))
  expect(r.error).toBeUndefined()
  expect(r.events).toContain('Arbitration.TaskSubmitted')
  const ev = h.advance(1)
  expect(ev).toContain('Arbitration.SolverSelected')
  return who(getTask(0).solver)
}

function committed (o: Record<string, unknown> = {}): string {
  const s = assigned(o)
  expect(h.run(s, 'Arbitration', 'commit_proof', { taskId: 0, proofRoot: H(9), finalStateRoot: H(8), stepCount: o.steps ?? 100, checkpoints: ['0x01', '0x02'] }).error).toBeUndefined()
  return s
}

beforeEach(async () => { h = await Harness.create({ reference }) })

describe('Arbitration: nodes', () => {
  it('registers with a reserved stake and rejects bad registrations', () => {
    const before = h.free('Bob')
    expect(register('Bob', 2)).toBeUndefined()
    expect(h.free('Bob')).toBe(before - STAKE)
    expect(h.reserved('Bob')).toBe(STAKE)
    expect(node('Bob').stake).toBe(STAKE)
    expect(Buffer.from(node('Bob').peerId.slice(2), 'hex').toString()).toBe(testPeer('Bob').peerId)
    expect(testPeer('Bob').peerId).toMatch(/^12D3KooW/)
    expect(register('Bob', 2)).toBe('Arbitration.AlreadyRegistered')
    // even with the key's consent (it signed for Charlie) a peer id is bound once
    expect(h.run('Charlie', 'Arbitration', 'register_node', h.registerArgs('Charlie', 2, STAKE, 'Bob')).error).toBe('Arbitration.PeerIdTaken')
    const bad = (o: Record<string, unknown>): string | undefined => h.run('Charlie', 'Arbitration', 'register_node', { ...h.registerArgs('Charlie', 2, STAKE), ...o }).error
    expect(bad({ peerId: '0x' })).toBe('Arbitration.InvalidPeerId')
    expect(bad({ peerId: '0x0a0b' })).toBe('Arbitration.InvalidPeerId')
    // a peer id that carries no Ed25519 key cannot be bound (its key could not be checked)
    expect(bad({ peerId: peer('Charlie') })).toBe('Arbitration.UnsupportedPeerId')
    expect(register('Charlie', 0)).toBe('Arbitration.InvalidRoles')
    expect(register('Charlie', 16)).toBe('Arbitration.InvalidRoles')
    expect(register('Charlie', 2, 1n)).toBe('Arbitration.InsufficientStake')
    expect(register('Charlie', 2, 10n ** 30n)).toBe('Arbitration.InsufficientStake')
    // a failed call leaves no tape
    expect(h.read('Arbitration', 'Nodes', h.accounts.Charlie)).toBeUndefined()
    expect(h.reserved('Charlie')).toBe(0n)
  })

  it('adds stake, changes roles and unregisters', () => {
    expect(h.run('Bob', 'Arbitration', 'add_stake', { amount: 1n }).error).toBe('Arbitration.NotRegistered')
    register('Bob', 2)
    expect(h.run('Bob', 'Arbitration', 'add_stake', { amount: 5n * UNIT }).error).toBeUndefined()
    expect(node('Bob').stake).toBe(STAKE + 5n * UNIT)
    expect(h.run('Bob', 'Arbitration', 'set_roles', { roles: 6 }).error).toBeUndefined()
    expect(node('Bob').roles).toBe(6)
    const free = h.free('Bob')
    const r = h.run('Bob', 'Arbitration', 'unregister', {})
    expect(r.events).toContain('Arbitration.NodeUnregistered')
    expect(h.free('Bob')).toBe(free + STAKE + 5n * UNIT)
    expect(h.reserved('Bob')).toBe(0n)
    expect(h.run('Bob', 'Arbitration', 'unregister', {}).error).toBe('Arbitration.NotRegistered')
    expect(register('Bob', 2)).toBeUndefined() // the peer id is free again
  })
})

describe('Arbitration: tasks', () => {
  it('validates task parameters and escrow', () => {
    expect(h.run('Alice', 'Arbitration', 'submit_task', task({ steps: 0 })).error).toBe('Arbitration.InvalidTaskParams')
    expect(h.run('Alice', 'Arbitration', 'submit_task', task({ checkpointEvery: 101 })).error).toBe('Arbitration.InvalidTaskParams')
    expect(h.run('Alice', 'Arbitration', 'submit_task', task({ escrow: 700n * UNIT })).error).toBe('Arbitration.InsufficientEscrow')
    // the task's steps are the program's: otherwise an honest solver could never commit what the chain asks
    expect(h.run('Alice', 'Arbitration', 'submit_task', task({ programHash: PROGRAM.programHash, program: PROGRAM.programHex, steps: 50 })).error).toBe('Arbitration.ProgramMismatch')
    expect(h.run('Alice', 'Arbitration', 'submit_task', task({ programHash: PROGRAM.programHash, program: PROGRAM.programHex, checkpointEvery: 20 })).error).toBe('Arbitration.ProgramMismatch')
    expect(h.run('Alice', 'Arbitration', 'submit_task', task({ verifierCount: 0 })).error).toBe('Arbitration.InvalidTaskParams')
    // a zero window is malformed before it is too short
    expect(h.run('Alice', 'Arbitration', 'submit_task', task({ challengeWindow: 0 })).error).toBe('Arbitration.InvalidTaskParams')
    expect(h.run('Alice', 'Arbitration', 'submit_task', task({ escrow: 10n ** 30n, ...minRewards(PROGRAM, 2) })).error).toBe('Arbitration.InsufficientEscrow')
    expect(h.run('Alice', 'Arbitration', 'release_task', { taskId: 7 }).error).toBe('Arbitration.TaskNotFound')
  })

  it('checks the program bytes against program_hash and refuses a program it cannot adjudicate', () => {
    const submit = (p: { programHash: string, programHex: string }): string | undefined =>
      h.run('Alice', 'Arbitration', 'submit_task', task({ programHash: p.programHash, program: p.programHex })).error
    const other = taskProgram({ seed: 2 })
    expect(submit({ programHash: PROGRAM.programHash, programHex: other.programHex })).toBe('Arbitration.ProgramHashMismatch')
    // valid JSON of a valid program, but not canonical (whitespace): a different hash for the same program
    const pretty = new TextEncoder().encode(JSON.stringify(JSON.parse(new TextDecoder().decode(PROGRAM.bytes)), null, 1))
    const prettyHex = '0x' + Buffer.from(pretty).toString('hex')
    expect(submit({ programHash: '0x' + Buffer.from(sha256(pretty)).toString('hex'), programHex: prettyHex })).toBe('Arbitration.InvalidProgram')
    const junk = new TextEncoder().encode('{"version":1}')
    expect(submit({ programHash: '0x' + Buffer.from(sha256(junk)).toString('hex'), programHex: '0x' + Buffer.from(junk).toString('hex') })).toBe('Arbitration.InvalidProgram')
    const huge = new Uint8Array(16 * 1024 + 1).fill(32)
    expect(submit({ programHash: '0x' + Buffer.from(sha256(huge)).toString('hex'), programHex: '0x' + Buffer.from(huge).toString('hex') })).toBe('Arbitration.InvalidProgram')
    expect(submit(taskProgram({ runtime: 'tfjs-cpu@4.22.0' }))).toBe('Arbitration.ProgramNotVerifiable')
    expect(submit(taskProgram({ runtime: 'tfjs-node@4.22.0' }))).toBe('Arbitration.ProgramNotVerifiable')
    // nothing was reserved or stored by the refused calls
    expect(h.reserved('Alice')).toBe(0n)
    expect(h.read('Arbitration', 'Tasks', 0)).toBeUndefined()
    // (with the window the chain takes for the cnn, which replays slower than the mlp)
    const cnn = taskProgram({ model: 'cnn', optimizer: 'sgd', batchSize: 8 })
    expect(h.run('Alice', 'Arbitration', 'submit_task', task({ programHash: cnn.programHash, program: cnn.programHex, challengeWindow: minWindow(cnn, 2) })).error).toBeUndefined()
    expect(getTask(0).programHash).toBe(taskProgram({ model: 'cnn', optimizer: 'sgd', batchSize: 8 }).programHash)
  })

  it('waits for a solver, then selects one deterministically by stake', () => {
    expect(register('Dave', 4)).toBeUndefined()
    expect(register('Eve', 4)).toBeUndefined()
    h.run('Alice', 'Arbitration', 'submit_task', task())
    // the escrow, and the rent deposit for the verifier stake the task may hold (docs/economics.md, "Capacity griefing")
    const deposit = rentDeposit(params(), getTask(0))
    expect(deposit).toBeGreaterThan(0n)
    expect(h.reserved('Alice')).toBe(1000n * UNIT + deposit)
    expect(h.advance(1)).toContain('Arbitration.NoSolverAvailable')
    expect(getTask(0).phase).toBe('Unassigned')
    register('Bob', 2)
    h.advance(1)
    const t = getTask(0)
    expect(t.phase).toBe('Solving')
    expect(who(t.solver)).toBe('Bob')
    expect(t.deadline).toBe(h.number + 20)
    expect(node('Bob').activeTasks).toBe(1)
    expect(h.run('Bob', 'Arbitration', 'unregister', {}).error).toBe('Arbitration.HasActiveTasks')
  })

  it('stake-weighted selection is canonical and proportional', () => {
    const c = [{ account: H(2), stake: 3n }, { account: H(1), stake: 1n }]
    let heavy = 0
    for (let i = 0; i < 2000; i++) if (pickWeighted(selectionSeed(H(i % 256), BigInt(i), 0), c) === H(2)) heavy++
    expect(heavy / 2000).toBeGreaterThan(0.7)
    expect(heavy / 2000).toBeLessThan(0.8)
    expect(pickWeighted(H(5), c)).toBe(pickWeighted(H(5), [...c].reverse()))
    expect(pickWeighted(H(5), [])).toBeUndefined()
  })

  it('releaseTask hands the task to another solver', () => {
    const s = assigned()
    const other = s === 'Bob' ? 'Charlie' : 'Bob'
    expect(h.run(other, 'Arbitration', 'release_task', { taskId: 0 }).error).toBe('Arbitration.NotSelectedSolver')
    const r = h.run(s, 'Arbitration', 'release_task', { taskId: 0 })
    expect(r.events).toContain('Arbitration.TaskReleased')
    expect(r.events).toContain('Arbitration.SolverSelected')
    expect(who(getTask(0).solver)).toBe(other)
    expect(node(s).activeTasks).toBe(0)
    // a release costs a dispute bond's worth of stake (not a free re-roll), and the rent of the verifier stake its selection held: two slots of B + R for two blocks
    expect(h.rentPaid(s)).toBe(rentFor(params().capacityRentPpb, 2n * 2n * 700n * UNIT))
    expect(node(s).stake).toBe(STAKE - 100n * UNIT - h.rentPaid(s))
  })

  it('replaces and slashes a solver that misses its deadline', () => {
    // the shortest solve timeout the chain takes for this program (twice its training at the reference speed)
    const s = assigned({ solveTimeout: 8 })
    const ev = h.advance(9)
    expect(ev).toContain('Arbitration.SolverTimedOut')
    // the missed-deadline slash, and the rent of the two slots of B + R its selection held until the deadline passed
    expect(h.rentPaid(s)).toBe(rentFor(params().capacityRentPpb, 9n * 2n * 700n * UNIT))
    expect(node(s).stake).toBe(STAKE - STAKE / 10n - h.rentPaid(s))
    expect(getTask(0).solver).not.toBe(h.accounts[s])
    expect(getTask(0).excluded).toContain(h.accounts[s])
    expect(h.run(s, 'Arbitration', 'commit_proof', { taskId: 0, proofRoot: H(9), finalStateRoot: H(8), stepCount: 100, checkpoints: [] }).error).toBe('Arbitration.DeadlineMissed')
  })

  it('commits a proof, takes verdicts and settles after the challenge window', () => {
    const s = assigned({ challengeWindow: 30 })
    const other = s === 'Bob' ? 'Charlie' : 'Bob'
    expect(h.run('Dave', 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: [1] }).error).toBe('Arbitration.WrongPhase')
    const commit = (w: string, o: Record<string, unknown> = {}): string | undefined => h.run(w, 'Arbitration', 'commit_proof', { taskId: 0, proofRoot: H(9), finalStateRoot: H(8), stepCount: 100, checkpoints: ['0x01'], ...o }).error
    expect(commit(other)).toBe('Arbitration.NotSelectedSolver')
    expect(commit(s, { stepCount: 101 })).toBe('Arbitration.IncompleteProof')
    expect(commit(s, { stepCount: 99 })).toBe('Arbitration.IncompleteProof')
    expect(commit(s)).toBeUndefined()
    expect(commit(s)).toBe('Arbitration.WrongPhase')
    const t = getTask(0)
    expect(t.phase).toBe('Verifying')
    expect(t.proofRoot).toBe(H(9))
    // an accepting verdict lists the verifier's own sample (22 of the 100 steps here)
    const verdict = (w: string, o: Record<string, unknown> = {}): string | undefined => h.run(w, 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: harnessSample(h, w), ...o }).error
    expect(verdict('Alice')).toBe('Arbitration.NotRegistered')
    expect(verdict(other)).toBe('Arbitration.NotVerifier')
    expect(verdict('Dave', { checkedSteps: [...harnessSample(h, 'Dave'), 100] })).toBe('Arbitration.InvalidStep')
    expect(verdict('Dave')).toBeUndefined()
    expect(verdict('Dave')).toBe('Arbitration.AlreadyVoted')
    expect(verdict('Eve')).toBeUndefined()
    // Dave and Eve were the only verifiers when the chain drew: a verifier registered later is not assigned
    expect(assignedNames(h)).toEqual(expect.arrayContaining(['Dave', 'Eve']))
    register('Ferdie', 4)
    expect(verdict('Ferdie')).toBe('Arbitration.NotAssigned')
    const [aliceFree, sFree, daveFree] = [h.free('Alice'), h.free(s), h.free('Dave')]
    expect(h.advance(20)).not.toContain('Arbitration.TaskSettled')
    expect(h.advance(10)).toContain('Arbitration.TaskSettled')
    expect(getTask(0).phase).toBe('Settled')
    expect(h.free(s) - sFree).toBe(600n * UNIT)
    expect(h.free('Dave') - daveFree).toBe(100n * UNIT)
    // 1000 - 600 - 2*100 refunded, and the rent deposit less the rent
    const deposit = rentDeposit(params(), getTask(0))
    expect(h.rentPaid('Alice')).toBeGreaterThan(0n)
    expect(h.rentPaid('Alice')).toBeLessThanOrEqual(deposit)
    expect(h.free('Alice') - aliceFree).toBe(200n * UNIT + deposit - h.rentPaid('Alice'))
    expect(h.reserved('Alice')).toBe(0n)
    expect(node(s).activeTasks).toBe(0)
    expect(h.read<bigint[]>('Arbitration', 'OpenTasks')).toEqual([])
    expect(verdict('Dave')).toBe('Arbitration.WrongPhase')
  })
})

describe('Arbitration: an accepting verdict vouches for the verifier\'s own sample', () => {
  const verdict = (w: string, accept: boolean, checkedSteps: number[]): [string, string, string, Record<string, unknown>] => [w, 'Arbitration', 'submit_verdict', { taskId: 0, accept, checkedSteps }]
  const all = Array.from({ length: 100 }, (_, i) => i)

  it('is refused before the sample exists, without one of its steps, or with another verifier\'s sample; a superset goes through', () => {
    // four verifiers: 11 sampled steps each out of 100
    for (const v of ['Ferdie', 'Peer1']) expect(register(v, 4)).toBeUndefined()
    committed({ verifierCount: 4, challengeWindow: 30 })
    // the block right after the commit: its hash draws the verifiers and seeds their samples, so
    // nobody is assigned yet and no verdict, accept or reject, is taken
    const { committedAt } = getTask(0)
    const early = h.block([verdict('Dave', true, all), verdict('Eve', false, [])])
    expect(h.number).toBe(committedAt + 1)
    expect(early.results.map(r => r.error)).toEqual(['Arbitration.NotAssigned', 'Arbitration.NotAssigned'])
    const dave = harnessSample(h, 'Dave')
    const ferdie = harnessSample(h, 'Ferdie')
    expect(dave).toHaveLength(11)
    expect(dave.every(s => Number.isInteger(s) && s >= 0 && s < 100)).toBe(true)
    expect(ferdie).not.toEqual(dave)
    // missing any one sampled step is refused
    for (const drop of [0, 5, 10]) expect(h.run('Dave', 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: dave.filter((_, i) => i !== drop) }).error).toBe('Arbitration.SampleNotChecked')
    expect(h.run('Dave', 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: [] }).error).toBe('Arbitration.SampleNotChecked')
    // the sample is the verifier's own: Dave's does not do for Peer1
    expect(h.run('Peer1', 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: dave }).error).toBe('Arbitration.SampleNotChecked')
    // 1-based steps (one off) are not the sample either
    expect(h.run('Dave', 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: dave.map(s => s + 1).filter(s => s < 100) }).error).toBe('Arbitration.SampleNotChecked')
    expect(h.run('Dave', 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: dave }).error).toBeUndefined()
    // more steps than the sample, in any order, is fine
    const more = [...all.filter(s => !ferdie.includes(s)).slice(0, 30), ...[...ferdie].reverse()]
    expect(h.run('Ferdie', 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: more }).error).toBeUndefined()
    expect(getTask(0).verdicts.map(v => [who(v.verifier), v.accept, v.checkedSteps.length])).toEqual([['Dave', true, 11], ['Ferdie', true, 41]])
    // the sample's seed is the hash of block committedAt + 1 for every later block
    h.advance(3)
    expect(harnessSample(h, 'Peer1')).toHaveLength(11)
    expect(h.run('Peer1', 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: harnessSample(h, 'Peer1') }).error).toBeUndefined()
    // three accepts of the four verdicts asked for (Eve stayed silent): the window runs again
    expect(h.advance(30)).toContain('Arbitration.VerificationExtended')
  })

  it('a run no longer than the sample is checked whole', () => {
    // 1 verifier: 44 sampled steps, more than the 40-step run
    committed({ steps: 40, checkpointEvery: 10, verifierCount: 1 })
    h.advance(2)
    const [v] = assignedNames(h)
    expect(harnessSample(h, v)).toEqual(all.slice(0, 40))
    expect(h.run(v, 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: all.slice(1, 40) }).error).toBe('Arbitration.SampleNotChecked')
    expect(h.run(v, 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: all.slice(0, 40) }).error).toBeUndefined()
  })
})

describe('Arbitration: disputes', () => {
  it('opens disputes with a bond; a forced move must be answered on chain in time, else the addressee loses', () => {
    const s = committed({ challengeWindow: 40 })
    const open = (w: string, o: Record<string, unknown> = {}): string | undefined => h.run(w, 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts[s], kind: 'SolverProof', disputedStep: 3, ...o }).error
    expect(open('Alice')).toBe('Arbitration.NotRegistered')
    expect(open(s)).toBe('Arbitration.SolverCannotVerify')
    expect(open('Dave', { defender: h.accounts.Eve })).toBe('Arbitration.InvalidDefender')
    // a verdict is disputed through the proof it judged (docs/disputes.md)
    expect(open('Dave', { kind: 'VerifierVerdict', defender: h.accounts.Eve })).toBe('Arbitration.DisputeTheProof')
    expect(open('Dave', { disputedStep: 100 })).toBe('Arbitration.InvalidStep')
    const bond = 100n * UNIT
    const daveReserved = h.reserved('Dave')
    expect(open('Dave')).toBeUndefined()
    expect(h.reserved('Dave') - daveReserved).toBe(bond)
    const d = (): DisputeInfo => h.read<DisputeInfo>('Arbitration', 'Disputes', 0) as DisputeInfo
    expect(d().force).toBeNull()
    // nothing on chain while the parties play off chain; no timeout before a force or the deadline
    expect(h.run('Eve', 'Arbitration', 'claim_timeout', { disputeId: 0 }).error).toBe('Arbitration.NotExpired')
    const force = (w: string, theirs = '0x', mine = '0x'): string | undefined => h.run(w, 'Arbitration', 'force_move', { disputeId: 0, theirs, mine }).error
    const answer = (w: string, a: string): string | undefined => h.run(w, 'Arbitration', 'answer_move', { disputeId: 0, answer: a }).error
    const ctx = { genesis: h32(0x11), taskId: 0, disputeId: 0 }
    const commit = signed(s, ctx, { t: 'commit', d: 0, step: 3, traceRoot: h32(7), depth: 5 })
    expect(force('Eve')).toBe('Arbitration.NotParty')
    // only the challenger demands the commit with an empty force
    expect(force(s)).toBe('Arbitration.InvalidMove')
    expect(force('Dave')).toBeUndefined()
    const f = d().force!
    // due: the response window (20) + the tape allowance ceil((3 mod 10 + 1) × 20 / 100) = 1
    expect(f).toMatchObject({ to: 'Defender', seq: 0, due: f.at + 21 })
    expect(force('Dave')).toBe('Arbitration.ForcePending')
    expect(answer('Dave', hex(commit))).toBe('Arbitration.NotAddressee')
    expect(answer('Eve', hex(commit))).toBe('Arbitration.NotParty')
    expect(answer(s, hex(signed(s, ctx, { t: 'commit', d: 0, step: 4, traceRoot: h32(7), depth: 5 })))).toBe('Arbitration.InvalidMove')
    expect(answer(s, hex(commit))).toBeUndefined()
    expect(d()).toMatchObject({ force: null, nextSeq: 1, moves: 1 })
    expect(h.read<string>('Arbitration', 'DisputeLastMove', 0)).toBe(hex(commit))
    // the challenger now stays silent: the defender forces its commit, already on chain
    expect(force(s, '0x', hex(commit))).toBeUndefined()
    expect(d().force).toMatchObject({ to: 'Challenger', seq: 1 })
    expect(h.run('Eve', 'Arbitration', 'claim_timeout', { disputeId: 0 }).error).toBe('Arbitration.NotExpired')
    h.advance(20)
    const opening = signed('Dave', ctx, { t: 'open', d: 0, step: 3, pre: h32(1), post: h32(2) }, commit)
    expect(answer('Dave', hex(opening))).toBe('Arbitration.ResponseTooLate')
    // settlement waits while a dispute is open
    expect(getTask(0).phase).toBe('Verifying')
    const sFree = h.free(s)
    const r = h.run('Eve', 'Arbitration', 'claim_timeout', { disputeId: 0 })
    expect(r.error).toBeUndefined()
    expect(r.events).toContain('Arbitration.DisputeResolved')
    expect(d().status).toBe('DefenderWon')
    expect(h.reserved('Dave')).toBe(daveReserved)
    expect(h.free(s) - sFree).toBe(bond / 2n)
    expect(h.run('Eve', 'Arbitration', 'claim_timeout', { disputeId: 0 }).error).toBe('Arbitration.DisputeClosed')
    expect(h.run('Eve', 'Arbitration', 'claim_timeout', { disputeId: 5 }).error).toBe('Arbitration.DisputeNotFound')
    // once the challenge window (40 blocks) is over, with the dispute closed and no verdict at all,
    // nobody verified: the window is extended rather than the solver paid
    h.advance(1)
    expect(getTask(0).extensions).toBeGreaterThanOrEqual(1)
    expect(getTask(0).phase).toBe('Verifying')
  })

  it('with no force pending, the challenger bears the burden: past the deadline it loses', async () => {
    h = await Harness.create({ reference, disputeClock: 5 })
    const s = committed({ challengeWindow: 40 })
    expect(h.run('Dave', 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts[s], kind: 'SolverProof', disputedStep: 3 }).error).toBeUndefined()
    const d = (): DisputeInfo => h.read<DisputeInfo>('Arbitration', 'Disputes', 0) as DisputeInfo
    // opened_at + tape allowance 1 + (MAX_SEQ 168 + 1) × 2 × (window 5 + 1)
    expect(d().deadline).toBe(d().openedAt + 1 + 169 * 12)
    h.advance(d().deadline - h.number - 1)
    expect(h.run('Eve', 'Arbitration', 'claim_timeout', { disputeId: 0 }).error).toBe('Arbitration.NotExpired')
    const r = h.run('Eve', 'Arbitration', 'claim_timeout', { disputeId: 0 })
    expect(r.error).toBeUndefined()
    expect(d().status).toBe('DefenderWon')
  })
})

describe('Arbitration: a silent solver', () => {
  it('forced and silent, loses its dispute and is slashed at once (no forced-error reveal); the challenger gains at most its bond, verdicts are not slashed', () => {
    expect(register('Ferdie', 4)).toBeUndefined()
    const s = committed({ challengeWindow: 60 })
    h.advance(2)
    // two of Dave, Eve and Ferdie are assigned: they accept; the third one disputes
    const [x, y] = assignedNames(h)
    const c = ['Dave', 'Eve', 'Ferdie'].find(n => n !== x && n !== y)!
    // x accepted after checking the disputed step (besides its sample); y accepted
    // having checked its sample only, which misses that step (22 of 100 steps each)
    const ys = harnessSample(h, y)
    const step = [3, ...Array.from({ length: 100 }, (_, i) => i)].find(q => !ys.includes(q))!
    expect(h.run(x, 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: [...harnessSample(h, x), step] }).error).toBeUndefined()
    expect(h.run(y, 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: ys }).error).toBeUndefined()
    expect(h.run(c, 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts[s], kind: 'SolverProof', disputedStep: step }).error).toBeUndefined()
    expect(h.run(c, 'Arbitration', 'force_move', { disputeId: 0, theirs: '0x', mine: '0x' }).error).toBeUndefined()
    h.advance(h.read<DisputeInfo>('Arbitration', 'Disputes', 0)!.force!.due - h.number)
    const cFree = h.free(c) + 100n * UNIT // its bond comes back too
    const r = h.run(c, 'Arbitration', 'claim_timeout', { disputeId: 0 })
    expect(r.error).toBeUndefined()
    expect(r.events).toContain('Arbitration.TimeoutPenalty')
    expect(r.events).not.toContain('Arbitration.SolverPenalized') // not deferred: there is nothing to reveal after a timeout
    // silence costs the solver what losing the claim would: half its stake
    expect(node(s).stake).toBe(STAKE / 2n)
    // the challenger gains at most the bond it risked: an outage is no jackpot for griefers
    expect(h.free(c) - cFree).toBe(100n * UNIT)
    // nothing was ruled about the step: x's accept stands unslashed
    expect(r.events).not.toContain('Arbitration.VerdictSlashed')
    expect(node(x).stake).toBe(STAKE)
    expect(node(y).stake).toBe(STAKE)
    expect(getTask(0).rulings).toEqual([])
    expect(getTask(0).solverFailed).toBe(true)
    // an assigned verifier's stake answers for its verdict until settlement
    expect(h.run(y, 'Arbitration', 'unregister').error).toBe('Arbitration.HasActiveTasks')
    expect(h.advance(60)).toContain('Arbitration.TaskSettled')
    expect(node(y).activeTasks).toBe(0)
    expect(h.run(y, 'Arbitration', 'unregister').error).toBeUndefined()
    expect(getTask(0).phase).toBe('Failed')
  })
})

// ---- adjudication: the rulings on real tapes are in test/unit/dispute/ ----
describe('Arbitration: adjudication entry point', () => {
  it('refuses non-parties, unknown disputes and claims that are not dispute claims', () => {
    const s = committed()
    expect(h.run('Dave', 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts[s], kind: 'SolverProof', disputedStep: 3 }).error).toBeUndefined()
    expect(h.run('Eve', 'Arbitration', 'adjudicate', { disputeId: 0, claim: '0x0102' }).error).toBe('Arbitration.NotParty')
    expect(h.run('Dave', 'Arbitration', 'adjudicate', { disputeId: 9, claim: '0x0102' }).error).toBe('Arbitration.DisputeNotFound')
    expect(h.run('Dave', 'Arbitration', 'adjudicate', { disputeId: 0, claim: '0x0102' }).error).toBe('Arbitration.InvalidClaim')
    expect(h.run('Dave', 'Arbitration', 'adjudicate', { disputeId: 0, claim: '0x' + 'a1'.repeat(70_000) }).error).toBe('Arbitration.InvalidClaim')
    expect(h.read<DisputeInfo>('Arbitration', 'Disputes', 0)?.status).toBe('Open')
  })
})
