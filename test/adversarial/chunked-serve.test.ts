import { u8aToHex } from '@polkadot/util'
import { decode, encode } from 'cborg'
import { beforeEach, describe, expect, it } from 'vitest'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import type { AvailabilityChallenge } from '../../devnet/chain/runtime/availability.js'
import type { NodeInfo, TaskInfo } from '../../devnet/chain/runtime/arbitration.js'
import { chunkedStateRoot, merkleRoot, stateRoot, type TensorData } from '../../protocols/commit/index.js'
import { AvailabilityRejected, assembleServe, buildServeParts, checkServePart, type ServePart } from '../../protocols/availability/index.js'
import * as reference from '../../protocols/reference/index.js'
import { taskProgram } from '../helpers/program.js'
import { Harness } from '../unit/chain/harness.js'

// The availability serve of a chunked task (docs/training.md "Chunked roots:
// design", step 4): the chain knows the task's state commitment
// (TaskStateCommitment, written by submit_task from the program) and takes
// only chunked headers {dtype, shape, chunkRoot} that make the committed
// chunked state root, and 4 KiB chunks each proven under its tensor's chunk
// root at the depth the header's dtype and shape give. A solver that does not
// hold the committed state must not pass for one that does: a changed chunk,
// a header lying about the shape or dtype, a padded or cut chunk, a chunk of
// another index or a row + column serve are refused, the challenge stays
// open and the solver is slashed at its deadline. The honest serve answers
// (on the code before it, the chain took only row + column serves: an honest
// solver of a chunked task could not answer and was slashed).

const H = (b: number): string => '0x' + b.toString(16).padStart(2, '0').repeat(32)
const STAKE = 2000n * UNIT

function tensor (shape: number[], seed: number): TensorData {
  const n = shape.reduce((a, b) => a * b, 1)
  return { shape, dtype: 'float32', values: Float32Array.from({ length: n }, (_, i) => Math.sin(seed * 1000 + i)) }
}
/** [40, 64] float32: 10240 bytes, three chunks (the last 2048 bytes); [64]: one short chunk; [3, 5]: 60 bytes. */
const stateAt = (s: number): TensorData[] => [tensor([40, 64], s + 1), tensor([64], s + 2), tensor([3, 5], s + 3)]
const STEPS = 4
const STATES = [0, 1, 2, 3, 4].map(stateAt)
const LEAVES = STATES.map((st, s) => chunkedStateRoot(st, s))
const CTX = { proofRoot: merkleRoot(LEAVES), step: 2, stepCount: STEPS, served: 0, stateCommitment: 'chunked' as const }

let h: Harness
const challenge = (id = 0): AvailabilityChallenge => h.read<AvailabilityChallenge>('Arbitration', 'AvailabilityChallenges', id) as AvailabilityChallenge
const stake = (who: string): bigint => (h.read<NodeInfo>('Arbitration', 'Nodes', h.accounts[who]) as NodeInfo).stake
const respond = (bytes: Uint8Array, id = 0): string | undefined => h.run('Bob', 'Arbitration', 'respond_availability', { challengeId: id, response: u8aToHex(bytes) }).error
const honest = (): Uint8Array => { const p = buildServeParts(STATES[2], 2, LEAVES, undefined, { stateCommitment: 'chunked' }); expect(p).toHaveLength(1); return p[0] }
/** The honest part with `f` applied to its decoded form. */
const tampered = (f: (p: ServePart) => void): Uint8Array => { const p = decode(honest()) as ServePart; f(p); return encode(p) }

/** Bob solves task 0 and commits `leaves`; the task's state commitment is chunked as submit_task records it for a chunked program. */
async function chunkedTask (leaves: Uint8Array[], chunked = true): Promise<void> {
  h = await Harness.create({ reference })
  for (const [n, roles] of [['Bob', 2], ['Dave', 4 | 8]] as const) expect(h.run(n, 'Arbitration', 'register_node', h.registerArgs(n, roles, STAKE)).error).toBeUndefined()
  const p = taskProgram({ steps: STEPS, checkpointEvery: 2 })
  expect(h.run('Alice', 'Arbitration', 'submit_task', {
    programHash: p.programHash, program: p.programHex, datasetRoot: H(2), skeletonRoot: H(3), steps: STEPS, checkpointEvery: 2,
    escrow: 1000n * UNIT, solverReward: 600n * UNIT, verifierReward: 100n * UNIT, verifierCount: 1, challengeWindow: 30, solveTimeout: 20
  }).error).toBeUndefined()
  if (chunked) h.write('Arbitration', 'TaskStateCommitment', 0, 1)
  h.advance(1)
  expect(h.run('Bob', 'Arbitration', 'commit_proof', {
    taskId: 0, proofRoot: u8aToHex(merkleRoot(leaves)), finalStateRoot: u8aToHex(leaves[leaves.length - 1]), stepCount: STEPS, checkpoints: ['0x01']
  }).error).toBeUndefined()
  expect(h.run('Dave', 'Arbitration', 'challenge_availability', { taskId: 0, checkpointStep: 2 }).error).toBeUndefined()
}

describe('availability serve of a chunked task', () => {
  beforeEach(async () => { await chunkedTask(LEAVES) })

  it('the honest serve (chunks under chunked headers) answers; anyone rebuilds the committed state from it', () => {
    const part = honest()
    const p = decode(part) as ServePart
    expect(p.leaves.map(l => l.bytes.length)).toEqual([4096, 4096, 2048, 256, 60])
    expect(respond(part)).toBeUndefined()
    expect(challenge().status).toBe('Answered')
    const back = assembleServe({ ...CTX }, [part]).tensors
    expect(back.map(t => [...t.values])).toEqual(STATES[2].map(t => [...t.values]))
  })

  it('a chunk not under its committed chunk root is refused: the solver is slashed at the deadline', () => {
    const before = stake('Bob')
    expect(respond(tampered(p => { p.leaves[1].bytes[100] ^= 1 }))).toBe('Arbitration.AvailabilityProofInvalid')
    // the chunk of another index in its place (its own path) is not that chunk
    expect(respond(tampered(p => { p.leaves[0] = p.leaves[1] }))).toBe('Arbitration.AvailabilityProofInvalid')
    expect(challenge().status).toBe('Open')
    h.advance(challenge().deadline - h.number + 1)
    expect(h.run('Dave', 'Arbitration', 'availability_timeout', { challengeId: 0 }).error).toBeUndefined()
    expect(stake('Bob')).toBeLessThan(before)
  })

  it('a header lying about the shape or dtype makes another state root: refused', () => {
    // the same bytes and chunk root as [64, 40] or [2560]: another chunked commitment
    expect(respond(tampered(p => { p.tensors[0].shape = [64, 40] }))).toBe('Arbitration.AvailabilityProofInvalid')
    expect(respond(tampered(p => { p.tensors[0].shape = [2560] }))).toBe('Arbitration.AvailabilityProofInvalid')
    expect(respond(tampered(p => { p.tensors[2].dtype = 'int32' }))).toBe('Arbitration.AvailabilityProofInvalid')
    // a shape of more bytes, so that more chunks would be taken
    expect(respond(tampered(p => { p.tensors[0].shape = [80, 64] }))).toBe('Arbitration.AvailabilityProofInvalid')
    expect(challenge().status).toBe('Open')
  })

  it('a padded or cut chunk, or a path of another depth, is refused even where the hashes would be recomputed', () => {
    // the last chunk of tensor 0 padded to 4096 bytes, or a full chunk cut short
    const padded = tampered(p => { const b = new Uint8Array(4096); b.set(p.leaves[2].bytes); p.leaves[2].bytes = b })
    expect(respond(padded)).toBe('Arbitration.AvailabilityProofInvalid')
    expect(respond(tampered(p => { p.leaves[0].bytes = p.leaves[0].bytes.slice(0, 2048) }))).toBe('Arbitration.AvailabilityProofInvalid')
    expect(respond(tampered(p => { p.leaves[0].siblings = p.leaves[0].siblings.slice(1) }))).toBe('Arbitration.AvailabilityProofInvalid')
    expect(respond(tampered(p => { p.leaves[3].siblings = [p.leaves[0].siblings[0]] }))).toBe('Arbitration.AvailabilityProofInvalid')
    // fewer leaves than the state has do not complete the serve
    const short = tampered(p => { p.leaves = p.leaves.slice(0, 3) })
    expect(respond(short)).toBeUndefined()
    expect(challenge().status).toBe('Open')
  })

  it('a row + column serve of the same state does not answer a chunked task', () => {
    // what the chain took before: row + column headers and row leaves, under a proof of row + column roots
    const rc = buildServeParts(STATES[2], 2, STATES.map((st, s) => stateRoot(st, s)))
    expect(respond(rc[0])).toBe('Arbitration.InvalidAvailabilityResponse')
    expect(() => checkServePart(CTX, rc[0])).toThrow(AvailabilityRejected)
  })
})

describe('a row + column task takes no chunked serve', () => {
  it('the chain reads the scheme from the task, not from the part', async () => {
    const rcLeaves = STATES.map((st, s) => stateRoot(st, s))
    await chunkedTask(rcLeaves, false)
    expect(h.read('Arbitration', 'TaskStateCommitment', 0)).toBeUndefined()
    // a chunked serve over chunked roots of the same states: not the committed row + column roots
    expect(respond(honest())).toBe('Arbitration.InvalidAvailabilityResponse')
    expect(respond(buildServeParts(STATES[2], 2, rcLeaves)[0])).toBeUndefined()
    expect(challenge().status).toBe('Answered')
    expect((h.read<TaskInfo>('Arbitration', 'Tasks', 0) as TaskInfo).solverFailed).toBe(false)
  })
})
