import { u8aToHex } from '@polkadot/util'
import { beforeEach, describe, expect, it } from 'vitest'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import type { AvailabilityChallenge } from '../../devnet/chain/runtime/availability.js'
import type { NodeInfo, TaskInfo } from '../../devnet/chain/runtime/arbitration.js'
import { merkleProof, merkleRoot, nodeHash } from '../../protocols/commit/merkle.js'
import { stateLeaves, stateRoot } from '../../protocols/commit/state.js'
import { commitTensor, type TensorData } from '../../protocols/commit/tensor.js'
import { encode } from 'cborg'
import { AvailabilityRejected, buildServeParts, checkServePart, type ServePart } from '../../protocols/availability/index.js'
import { tensorLeafBytes, tensorLeaves } from '../../protocols/commit/tensor.js'
import { buildInitClaim, encodeClaim, encodeInitClaim, firstInitMismatch, type InitClaim } from '../../protocols/dispute/index.js'
import { initialState, initialStateRoot } from '../../protocols/program/init.js'
import { committedSteps } from '../../protocols/pol/segments.js'
import * as reference from '../../protocols/reference/index.js'
import { taskProgram, type ProgramArgs } from '../helpers/program.js'
import { Harness } from '../unit/chain/harness.js'

// Availability challenges and initial-state claims of a task whose proof
// commits a root every m > 1 steps (docs/disputes.md "Segments"): the state
// after checkpoint step s is leaf s / m of proof_root and every path to it is
// proofDepth(steps, m) long, a depth the chain computes from the task. With
// the per-step leaf index and depth ⌈log2(steps + 1)⌉ an honest solver could
// not answer (and was slashed), a solver holding part of a state passed with a
// node inside its state root, an honest challenger could not convict an
// invented initial state, and a false one convicted an honest solver with a
// node inside state root 0. Each test fails if that attacker gains.

const H = (b: number): string => '0x' + b.toString(16).padStart(2, '0').repeat(32)
const STAKE = 2000n * UNIT

let h: Harness
const task = (): TaskInfo => h.read<TaskInfo>('Arbitration', 'Tasks', 0) as TaskInfo
const challenge = (id = 0): AvailabilityChallenge => h.read<AvailabilityChallenge>('Arbitration', 'AvailabilityChallenges', id) as AvailabilityChallenge
const stake = (who: string): bigint => (h.read<NodeInfo>('Arbitration', 'Nodes', h.accounts[who]) as NodeInfo).stake
const worth = (who: string): bigint => h.free(who) + h.reserved(who)
const respond = (bytes: Uint8Array, id = 0): string | undefined => h.run('Bob', 'Arbitration', 'respond_availability', { challengeId: id, response: u8aToHex(bytes) }).error
/** the serve of a small state is one part */
const serveOf = (state: TensorData[], step: number, roots: Uint8Array[], seg?: { rootEvery: number, steps: number }): Uint8Array => {
  const parts = buildServeParts(state, step, roots, seg)
  expect(parts).toHaveLength(1)
  return parts[0]
}

function tensor (shape: number[], seed: number): TensorData {
  const n = shape.reduce((a, b) => a * b, 1)
  return { shape, dtype: 'float32', values: Float32Array.from({ length: n }, (_, i) => Math.sin(seed * 1000 + i)) }
}
/** A state of three tensors (four leaves with the step leaf): its root's right child is tensor 2 and the step leaf. */
const stateAt = (s: number): TensorData[] => [tensor([12, 6], s + 1), tensor([6], s + 2), tensor([6, 3], s + 3)]

/** A chain accepting m ≤ 4 where Bob solves task 0 of `p` and commits `leaves`. */
async function taskWith (p: ProgramArgs, leaves: Uint8Array[]): Promise<void> {
  h = await Harness.create({ reference, maxRootEvery: 4 })
  for (const [n, roles] of [['Bob', 2], ['Dave', 4 | 8], ['Eve', 4 | 8]] as const) {
    expect(h.run(n, 'Arbitration', 'register_node', h.registerArgs(n, roles, STAKE)).error).toBeUndefined()
  }
  expect(h.run('Alice', 'Arbitration', 'submit_task', {
    programHash: p.programHash, program: p.programHex, datasetRoot: H(2), skeletonRoot: H(3), steps: p.program.steps,
    checkpointEvery: p.program.checkpointEvery,
    escrow: 1000n * UNIT, solverReward: 600n * UNIT, verifierReward: 100n * UNIT, verifierCount: 2, challengeWindow: 30, solveTimeout: 20
  }).error).toBeUndefined()
  // submit_task keeps the program's spacing: TaskRootEvery
  expect(h.read<number>('Arbitration', 'TaskRootEvery', 0)).toBe(p.program.rootEvery)
  h.advance(1)
  expect(task().solver).toBe(h.accounts.Bob)
  const steps = p.program.steps
  expect(h.run('Bob', 'Arbitration', 'commit_proof', {
    taskId: 0, proofRoot: u8aToHex(merkleRoot(leaves)), finalStateRoot: u8aToHex(leaves[leaves.length - 1]), stepCount: steps, checkpoints: ['0x01']
  }).error).toBeUndefined()
}

/** Opens a challenge of checkpoint `step` (Dave). */
function challengeAt (step: number): void {
  expect(h.run('Dave', 'Arbitration', 'challenge_availability', { taskId: 0, checkpointStep: step }).error).toBeUndefined()
}

/** Every row-tree leaf of `t` with its path: what a serve of a state holding `t` alone carries. */
function leavesOf (t: TensorData): ServePart['leaves'] {
  const hashes = tensorLeaves(t, 'row')
  return hashes.map((_, j) => ({ bytes: tensorLeafBytes(t, 'row', j), siblings: merkleProof(hashes, j) }))
}
const headOf = (t: TensorData): ServePart['tensors'][number] => {
  const c = commitTensor(t)
  return { dtype: t.dtype, shape: [...t.shape], rowRoot: c.rowRoot, colRoot: c.colRoot }
}

describe('availability challenges by leaf index (a root every m steps)', () => {
  // 5 steps, a root every 4: leaves are the states after steps 0, 4 and 5; checkpoints are 0, 4 and 5
  const P = taskProgram({ steps: 5, checkpointEvery: 4, rootEvery: 4 })
  const STATES = new Map([0, 4, 5].map(s => [s, stateAt(s)]))
  const LEAVES = committedSteps(5, 4).map(s => stateRoot(STATES.get(s)!, s))
  const SEG = { rootEvery: 4, steps: 5 }
  beforeEach(async () => { await taskWith(P, LEAVES) })

  it('an honest solver answers a challenge of checkpoint 4 with leaf 1 of proof_root and keeps its stake', () => {
    const before = stake('Bob')
    challengeAt(4)
    expect(respond(serveOf(STATES.get(4)!, 4, LEAVES, SEG))).toBeUndefined()
    expect(challenge().status).toBe('Answered')
    h.advance(challenge().deadline - h.number + 1)
    expect(h.run('Eve', 'Arbitration', 'availability_timeout', { challengeId: 0 }).error).toBe('Arbitration.AvailabilityClosed')
    expect(stake('Bob')).toBe(before)
    expect(task().solverFailed).toBe(false)
  })

  it('the last step (5, not a multiple of m) is a committed leaf too; a checkpoint step that is not one is refused', () => {
    challengeAt(5)
    expect(respond(serveOf(STATES.get(5)!, 5, LEAVES, SEG))).toBeUndefined()
    for (const s of [2, 3, 6]) expect(h.run('Eve', 'Arbitration', 'challenge_availability', { taskId: 0, checkpointStep: s }).error).toBe('Arbitration.NotCheckpointStep')
  })

  it('the root of another leaf does not answer: state 5 (leaf 2) for a challenge of checkpoint 4, or a per-step leaf index', () => {
    challengeAt(4)
    // state 5's tensors and its own path: the step leaf inside the state root is 5's, not 4's
    expect(respond(serveOf(STATES.get(5)!, 5, LEAVES, SEG))).toBe('Arbitration.AvailabilityProofInvalid')
    // state 4 proven as leaf 4 of a per-step tree (depth 3): not proof_root's leaf 1 at depth 2
    const perStep = [0, 1, 2, 3, 4, 5].map(s => STATES.has(s) ? stateRoot(STATES.get(s)!, s) : LEAVES[0])
    expect(respond(serveOf(STATES.get(4)!, 4, perStep))).toBe('Arbitration.AvailabilityProofInvalid')
    expect(challenge().status).toBe('Open')
  })
})

describe('a solver holding part of a state cannot answer with a node inside its state root', () => {
  // 3 steps, a root every 3: leaves are states 0 and 3 (depth 1); a per-step tree of 4 leaves has depth 2
  const P = taskProgram({ steps: 3, checkpointEvery: 3, rootEvery: 3 })
  const S0 = stateAt(0); const S3 = stateAt(3)
  const LEAVES = [stateRoot(S0, 0), stateRoot(S3, 3)]
  beforeEach(async () => { await taskWith(P, LEAVES) })

  it('it kept tensor 2 only: the right child of state root 3 (tensor 2, the step leaf) one level below leaf 1 is refused; it is slashed', () => {
    const before = stake('Bob')
    challengeAt(3)
    const leaves = stateLeaves(S3, 3)
    // leaf 3 at depth 2, as the per-step rule reads it: [left child of state root 3, state root 0]
    const partial: ServePart = {
      v: 2, tensors: [headOf(S3[2])], statePath: [nodeHash(leaves[0], leaves[1]), LEAVES[0]], from: 0, leaves: leavesOf(S3[2])
    }
    expect(merkleRoot([commitTensor(S3[2]).root, leaves[3]])).toEqual(nodeHash(leaves[2], leaves[3]))
    // the per-step depth would take its state path (the attack): a "whole state" of tensor 2 alone; the task's own depth does not
    const bytes = encode({ ...partial, roots: LEAVES })
    expect(respond(bytes)).toBe('Arbitration.AvailabilityProofInvalid')
    expect(() => checkServePart({ proofRoot: merkleRoot(LEAVES), step: 3, stepCount: 3, rootEvery: 3, served: 0 }, bytes)).toThrow(AvailabilityRejected)
    // no valid answer by the deadline: slashed, the task fails
    h.advance(challenge().deadline - h.number + 1)
    expect(h.run('Eve', 'Arbitration', 'availability_timeout', { challengeId: 0 }).error).toBeUndefined()
    expect(stake('Bob')).toBeLessThan(before)
    expect(task().solverFailed).toBe(true)
  })
})

describe('initial-state claims at a root every m steps (state 0 is leaf 0; the depth is the task\'s)', () => {
  const P = taskProgram({ steps: 5, checkpointEvery: 4, rootEvery: 4 })
  // the roots of states 4 and 5 play no part in a claim on state 0
  const other = (s: number): Uint8Array => new Uint8Array(32).fill(s)
  const claim = (c: InitClaim): string | undefined => h.run('Dave', 'Arbitration', 'challenge_initial_state', { taskId: 0, claim: u8aToHex(encodeInitClaim(c)) }).error

  it('an invented initial state is convicted by the honest claim over the proof\'s leaves', async () => {
    const invented = initialState({ ...P.program, seed: P.program.seed + 1 })
    const leaves = [stateRoot(invented, 0), other(4), other(5)]
    await taskWith(P, leaves)
    const bob = worth('Bob')
    const at = firstInitMismatch(P.program, invented)!
    const c = buildInitClaim({ program: P.bytes, stateRoots: leaves, state: invented, t: at.t, flat: at.flat })
    expect(c.rootPath).toHaveLength(2)
    expect(claim(c)).toBeUndefined()
    expect(task().solverFailed).toBe(true)
    expect(worth('Bob')).toBeLessThan(bob)
  })

  it('a false challenger cannot convict an honest solver with a node inside state root 0 at the per-step depth', async () => {
    const honest = initialState(P.program)
    const leaves = [initialStateRoot(P.program), other(4), other(5)]
    expect(leaves[0]).toEqual(stateRoot(honest, 0))
    await taskWith(P, leaves)
    const bob = worth('Bob'); const dave = worth('Dave')
    // the left half of state root 0: its first 2^(d−1) tensor commitments, the last of them posing as the step leaf
    const sl = stateLeaves(honest, 0)
    const half = 2 ** (Math.ceil(Math.log2(sl.length)) - 1)
    // the right child is leaf 0's last sibling (merkleRoot pads each level with the zero hash)
    const left = merkleRoot(sl.slice(0, half)); const right = merkleProof(sl, 0).at(-1)!
    expect(nodeHash(left, right)).toEqual(leaves[0])
    const heads = honest.slice(0, half - 1).map(headOf)
    const fake: InitClaim = { v: 1, kind: 'init', program: P.bytes, root: left, rootPath: [right, ...merkleProof(leaves, 0)], heads, last: sl[half - 1], t: 0 }
    // three levels: the depth of a per-step proof of 5 steps (6 leaves); this one has 3 leaves, depth 2
    expect(fake.rootPath).toHaveLength(3)
    expect(claim(fake)).toBe('Arbitration.InvalidProof')
    expect(task().solverFailed).toBe(false)
    expect(worth('Bob')).toBe(bob)
    expect(worth('Dave')).toBe(dave)
  })
  it('an init claim ends a dispute of segment 0 the same way (leaf 0 at the task\'s depth)', async () => {
    const invented = initialState({ ...P.program, seed: P.program.seed + 1 })
    const leaves = [stateRoot(invented, 0), other(4), other(5)]
    await taskWith(P, leaves)
    expect(h.run('Dave', 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: 0 }).error).toBeUndefined()
    const at = firstInitMismatch(P.program, invented)!
    const c = buildInitClaim({ program: P.bytes, stateRoots: leaves, state: invented, t: at.t, flat: at.flat })
    const adjudicate = (x: InitClaim): string | undefined => h.run('Dave', 'Arbitration', 'adjudicate', { disputeId: 0, claim: u8aToHex(encodeClaim(x)) }).error
    // a path of another length than the task's depth proves nothing
    expect(adjudicate({ ...c, rootPath: [...c.rootPath, new Uint8Array(32)] })).toBe('Arbitration.InvalidProof')
    expect(adjudicate(c)).toBeUndefined()
    expect(h.read<{ status: string }>('Arbitration', 'Disputes', 0)!.status).toBe('ChallengerWon')
  })
})
