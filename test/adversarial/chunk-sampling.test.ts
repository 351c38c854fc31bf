import { hexToU8a, u8aToHex } from '@polkadot/util'
import { beforeEach, describe, expect, it } from 'vitest'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import type { TaskInfo } from '../../devnet/chain/runtime/arbitration.js'
import type { ChunkRequest } from '../../devnet/chain/runtime/chunk-sampling.js'
import { CHUNK_CALLS } from '../../devnet/chain/runtime/chunk-sampling-spec.js'
import { CHUNK_SAMPLES, buildChunkResponses, chunkLeaf, chunkPath, chunkSampleSeed, codedPath, sampleChunkIndices } from '../../protocols/erasure/index.js'
import { encode } from 'cborg'
import * as reference from '../../protocols/reference/index.js'
import { EVERY, STEPS, codedRun, type CodedRun } from '../helpers/coded-run.js'
import { harnessSample } from '../helpers/verdict-sample.js'
import { taskProgram } from '../helpers/program.js'
import { Harness } from '../unit/chain/harness.js'

// Chunk sampling of erasure-coded checkpoints against the real runtime, with
// a real coded checkpoint (an Adam MLP state, 256 chunks). Bob is the solver,
// Dave and Eve verifiers, Ferdie a whistleblower, Alice the submitter. Each
// test fails if the attacker profits.

const STAKE = 2000n * UNIT
const REWARD = 600n * UNIT
const VREWARD = 100n * UNIT
const STEP = 5
const IDX = 1 // checkpoint index of STEP

let h: Harness
let run: CodedRun
const task = (): TaskInfo => h.read<TaskInfo>('Arbitration', 'Tasks', 0)!
const request = (id: number): ChunkRequest => h.read<ChunkRequest>('Arbitration', 'ChunkRequests', id)!
const worth = (n: string): bigint => h.free(n) + h.reserved(n)
const bond = (): bigint => h.read<{ disputeBond: bigint }>('Arbitration', 'Params')!.disputeBond

beforeEach(async () => {
  run = codedRun()
  h = await Harness.create({ reference })
  const p = taskProgram({ steps: STEPS, checkpointEvery: EVERY })
  for (const [n, roles] of [['Bob', 2], ['Dave', 4], ['Eve', 4], ['Ferdie', 8]] as const) expect(h.run(n, 'Arbitration', 'register_node', h.registerArgs(n, roles, STAKE)).error).toBeUndefined()
  expect(h.run('Alice', 'Arbitration', 'submit_task', { programHash: p.programHash, program: p.programHex, datasetRoot: '0x' + '02'.repeat(32), skeletonRoot: '0x' + '03'.repeat(32), steps: STEPS, checkpointEvery: EVERY, escrow: 1000n * UNIT, solverReward: REWARD, verifierReward: VREWARD, verifierCount: 2, challengeWindow: 40, solveTimeout: 20 }).error).toBeUndefined()
  h.advance(1)
  expect(h.run('Bob', 'Arbitration', 'commit_proof', { taskId: 0, proofRoot: run.proofRoot, finalStateRoot: run.finalStateRoot, stepCount: STEPS, checkpoints: run.entries }).error).toBeUndefined()
})

/** `who` asks for samples of STEP; returns the request id and the seed (the randomness of the including block). */
function ask (who: string, step = STEP): { id: number, seed: Uint8Array } {
  const id = Number(h.read<bigint>('Arbitration', 'NextChunkRequestId') ?? 0n)
  const r = h.run(who, 'Arbitration', 'sample_chunks', { taskId: 0, checkpointStep: step })
  expect(r.error).toBeUndefined()
  return { id, seed: chunkSampleSeed(hexToU8a(h.randomness()), id) }
}

/** An honest solver's answer: every drawn chunk, in parts of at most maxBytes. */
function answerHonestly (id: number, seed: Uint8Array, maxBytes?: number): void {
  for (const part of buildChunkResponses({ checkpoints: run.checkpoints, index: IDX, chunks: run.chunks[IDX] }, seed, 0n, maxBytes)) {
    expect(h.run('Bob', 'Arbitration', 'respond_chunks', { requestId: id, response: u8aToHex(part) }).error).toBeUndefined()
  }
  expect(request(id).status).toBe('Answered')
}

function accept (...who: string[]): void {
  for (const v of who) expect(h.run(v, 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: harnessSample(h, v) }).error).toBeUndefined()
}

function toTheEnd (): string[] {
  const ev: string[] = []
  for (let i = 0; i < 200 && task().phase === 'Verifying'; i++) ev.push(...h.advance(1))
  return ev
}

/** A solver that withholds `withheld` chunks answers only when no drawn chunk is among them. */
function answerWithout (withheld: Set<number>, id: number, seed: Uint8Array): boolean {
  const drawn = sampleChunkIndices(seed, 256, CHUNK_SAMPLES)
  if (drawn.some(i => withheld.has(i))) return false
  answerHonestly(id, seed)
  return true
}

describe('chunk sampling: a withholding solver', () => {
  it('withholding 10% of a checkpoint\'s chunks is caught: slashed, the task fails, verifiers and submitter keep what they are owed', () => {
    const withheld = new Set(Array.from({ length: 26 }, (_, i) => (i * 97 + 13) % 256))
    const [bob, dave, eve, ferdie, alice] = ['Bob', 'Dave', 'Eve', 'Ferdie', 'Alice'].map(worth)
    h.advance(1)
    accept('Dave', 'Eve')
    let caught = -1
    for (let n = 0; n < 5 && caught < 0; n++) {
      const { id, seed } = ask('Ferdie')
      if (!answerWithout(withheld, id, seed)) caught = id
    }
    expect(caught).toBeGreaterThanOrEqual(0)
    // the solver cannot post a withheld chunk: no answer by the deadline
    h.advance(request(caught).deadline - h.number)
    expect(h.run('Ferdie', 'Arbitration', 'chunks_timeout', { requestId: caught }).error).toBeUndefined()
    expect(task().solverFailed).toBe(true)
    const ev = toTheEnd()
    expect(ev).toContain('Arbitration.TaskSettled')
    expect(task().phase).toBe('Failed')
    const slashed = STAKE / 2n
    expect(worth('Bob') - bob).toBe(-slashed)
    // the whistleblower gets its deposits back (answered ones too: the task failed) and half the slash
    expect(worth('Ferdie') - ferdie).toBe(slashed / 2n)
    // verifiers that accepted lose nothing (the task failed, so accepts are not paid, but an
    // unavailable checkpoint is not a wrong step they vouched for: no verdict is slashed)
    expect(worth('Dave')).toBe(dave)
    expect(worth('Eve')).toBe(eve)
    // the submitter gets its whole escrow back; it pays the rent of the verifier stake its task held, whatever the outcome
    expect(worth('Alice')).toBe(alice - h.rentPaid('Alice'))
  })

  it('a chunk not under the committed chunk root is refused, and the solver that has no other loses its stake', () => {
    const { id, seed } = ask('Dave')
    const drawn = sampleChunkIndices(seed, 256, CHUNK_SAMPLES)
    const leaves = run.chunks[IDX].map(chunkLeaf)
    const head = {
      v: 1, step: STEP, dataBytes: run.checkpoints[IDX].dataBytes, chunkRoot: run.checkpoints[IDX].chunkRoot, path: codedPath(run.checkpoints, IDX)
    }
    const post = (chunks: unknown[], o: Record<string, unknown> = {}): string | undefined => h.run('Bob', 'Arbitration', 'respond_chunks', { requestId: id, response: u8aToHex(encode({ ...head, ...o, chunks })) }).error
    // a corrupted chunk with the true path
    const bad = run.chunks[IDX][drawn[0]].slice(); bad[100] ^= 0xff
    expect(post([{ k: 0, bytes: bad, path: chunkPath(leaves, drawn[0]) }])).toBe('Arbitration.ChunkProofInvalid')
    // a true chunk, but not the drawn one
    const other = (drawn[0] + 1) % 256
    expect(post([{ k: 0, bytes: run.chunks[IDX][other], path: chunkPath(leaves, other) }])).toBe('Arbitration.ChunkProofInvalid')
    // the drawn chunk of another checkpoint (another committed chunk root)
    expect(post([{ k: 0, bytes: run.chunks[0][drawn[0]], path: chunkPath(run.chunks[0].map(chunkLeaf), drawn[0]) }])).toBe('Arbitration.ChunkProofInvalid')
    // another chunk root for this step (a different coding than committed)
    expect(post([{ k: 0, bytes: run.chunks[0][drawn[0]], path: chunkPath(run.chunks[0].map(chunkLeaf), drawn[0]) }], { chunkRoot: run.checkpoints[0].chunkRoot })).toBe('Arbitration.ChunkProofInvalid')
    // a short chunk
    expect(post([{ k: 0, bytes: bad.subarray(1), path: chunkPath(leaves, drawn[0]) }])).toBe('Arbitration.InvalidChunkResponse')
    // only true chunks count: a partial answer is not an answer
    expect(post([{ k: 0, bytes: run.chunks[IDX][drawn[0]], path: chunkPath(leaves, drawn[0]) }])).toBeUndefined()
    expect(request(id).status).toBe('Open')
    const [bob, dave] = [worth('Bob'), worth('Dave')]
    h.advance(request(id).deadline - h.number)
    expect(h.run('Eve', 'Arbitration', 'chunks_timeout', { requestId: id }).error).toBeUndefined()
    expect(request(id).status).toBe('TimedOut')
    expect(worth('Bob') - bob).toBe(-STAKE / 2n)
    expect(worth('Dave') - dave).toBe(STAKE / 4n)
    expect(task().solverFailed).toBe(true)
  })

  it('a proof committed without a coded root cannot answer any request', async () => {
    h = await Harness.create({ reference })
    const p = taskProgram({ steps: STEPS, checkpointEvery: EVERY })
    for (const [n, roles] of [['Bob', 2], ['Dave', 4], ['Eve', 4]] as const) expect(h.run(n, 'Arbitration', 'register_node', h.registerArgs(n, roles, STAKE)).error).toBeUndefined()
    expect(h.run('Alice', 'Arbitration', 'submit_task', { programHash: p.programHash, program: p.programHex, datasetRoot: '0x' + '02'.repeat(32), skeletonRoot: '0x' + '03'.repeat(32), steps: STEPS, checkpointEvery: EVERY, escrow: 1000n * UNIT, solverReward: REWARD, verifierReward: VREWARD, verifierCount: 2, challengeWindow: 40, solveTimeout: 20 }).error).toBeUndefined()
    h.advance(1)
    expect(h.run('Bob', 'Arbitration', 'commit_proof', { taskId: 0, proofRoot: run.proofRoot, finalStateRoot: run.finalStateRoot, stepCount: STEPS, checkpoints: ['0x01'] }).error).toBeUndefined()
    const { id, seed } = ask('Dave')
    const part = buildChunkResponses({ checkpoints: run.checkpoints, index: IDX, chunks: run.chunks[IDX] }, seed)[0]
    expect(h.run('Bob', 'Arbitration', 'respond_chunks', { requestId: id, response: u8aToHex(part) }).error).toBe('Arbitration.ChunkProofInvalid')
  })
})

describe('chunk sampling: honest solvers and requesters', () => {
  it('an honest solver answers every request (in parts too), is never slashed, and spam costs the requester its deposits', () => {
    const [bob, dave] = [worth('Bob'), worth('Dave')]
    const n = 6
    for (let i = 0; i < n; i++) {
      const { id, seed } = ask('Dave')
      answerHonestly(id, seed, i % 2 === 0 ? undefined : 150_000)
    }
    expect(task().solverFailed).toBe(false)
    h.advance(1)
    accept('Eve', 'Dave')
    const ev = toTheEnd()
    expect(ev).toContain('Arbitration.TaskSettled')
    expect(task().phase).toBe('Settled')
    // the solver is paid, plus every needless request's deposit
    expect(worth('Bob') - bob).toBe(REWARD + BigInt(n) * bond())
    expect(worth('Dave') - dave).toBe(VREWARD - BigInt(n) * bond())
  })

  it('a requester cannot pick its indices: the call takes none, the chain draws them from the including block, and only those are accepted', () => {
    expect(CHUNK_CALLS.find(c => c.name === 'sample_chunks')!.args.map(a => a[0])).toEqual(['task_id', 'checkpoint_step'])
    const first = ask('Dave')
    answerHonestly(first.id, first.seed)
    const second = ask('Dave')
    const a = sampleChunkIndices(first.seed, 256, CHUNK_SAMPLES)
    const b = sampleChunkIndices(second.seed, 256, CHUNK_SAMPLES)
    expect(b).not.toEqual(a)
    // the solver cannot answer the second request with the chunks drawn for the first
    const stale = buildChunkResponses({ checkpoints: run.checkpoints, index: IDX, chunks: run.chunks[IDX] }, first.seed)[0]
    expect(h.run('Bob', 'Arbitration', 'respond_chunks', { requestId: second.id, response: u8aToHex(stale) }).error).toBe('Arbitration.ChunkProofInvalid')
    // nor before the including block's hash exists: the request and the answer in one block
    const id = Number(h.read<bigint>('Arbitration', 'NextChunkRequestId'))
    answerHonestly(second.id, second.seed)
    const r = h.block([['Eve', 'Arbitration', 'sample_chunks', { taskId: 0, checkpointStep: 0 }], ['Bob', 'Arbitration', 'respond_chunks', { requestId: id, response: u8aToHex(stale) }]]).results
    expect(r[0].error).toBeUndefined()
    expect(r[1].error).toBe('Arbitration.SamplesNotReady')
  })

  it('the solver cannot sample its own task, one request per checkpoint at a time, only checkpoint steps, only in the window', () => {
    expect(h.run('Bob', 'Arbitration', 'sample_chunks', { taskId: 0, checkpointStep: STEP }).error).toBe('Arbitration.SolverCannotVerify')
    expect(h.run('Dave', 'Arbitration', 'sample_chunks', { taskId: 0, checkpointStep: 3 }).error).toBe('Arbitration.NotCheckpointStep')
    ask('Dave')
    expect(h.run('Eve', 'Arbitration', 'sample_chunks', { taskId: 0, checkpointStep: STEP }).error).toBe('Arbitration.ChunkRequestOpen')
    h.advance(task().challengeEnd - h.number)
    expect(h.run('Eve', 'Arbitration', 'sample_chunks', { taskId: 0, checkpointStep: 0 }).error).toBe('Arbitration.ChallengeWindowClosed')
  })

  it('a solver\'s puppet gains nothing by sampling its own solver: the deposit only moves within the coalition', () => {
    // Eve is Bob's puppet: her requests are answered and their deposits go to Bob
    const [bob, eve] = [worth('Bob'), worth('Eve')]
    for (let i = 0; i < 3; i++) { const { id, seed } = ask('Eve'); answerHonestly(id, seed) }
    h.advance(1)
    accept('Dave', 'Eve')
    toTheEnd()
    expect((worth('Bob') - bob) + (worth('Eve') - eve)).toBe(REWARD + VREWARD)
  })

  it('on a task nobody could verify, an answered request costs the requester nothing and pays the solver nothing', () => {
    // Ferdie (a whistleblower, never drawn) asks: the assigned verifiers' silence is priced apart (verifier-assignment.test.ts)
    const [bob, ferdie] = [worth('Bob'), worth('Ferdie')]
    const { id, seed } = ask('Ferdie')
    answerHonestly(id, seed)
    const ev = toTheEnd()
    expect(ev).toContain('Arbitration.TaskUnverified')
    expect(ev).toContain('Arbitration.ChunkDepositSettled')
    expect(worth('Bob')).toBe(bob)
    expect(worth('Ferdie')).toBe(ferdie)
  })

  it('an answered chunk sample is no excuse for an assigned verifier\'s silence: the data was there', () => {
    const dave = worth('Dave')
    const { id, seed } = ask('Dave')
    answerHonestly(id, seed)
    const ev = toTheEnd()
    expect(ev).toContain('Arbitration.TaskUnverified')
    expect(worth('Dave')).toBeLessThan(dave)
  })
})
