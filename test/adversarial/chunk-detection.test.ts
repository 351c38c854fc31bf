import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { hexToU8a, u8aToHex } from '@polkadot/util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import type { ChunkRequest } from '../../devnet/chain/runtime/chunk-sampling.js'
import { sha256 } from '../../protocols/commit/merkle.js'
import { CHUNK_SAMPLES, buildChunkResponses, chunkRootEntry, chunkSampleSeed, codingParams, missProbability, sampleChunkIndices, type CodedCheckpoint } from '../../protocols/erasure/index.js'
import { newProgram, programBytes } from '../../protocols/program/index.js'
import * as reference from '../../protocols/reference/index.js'
import { initBackend } from '../../node/train/backend.js'
import { datasetRef, loadIdxDataset } from '../../node/train/dataset.js'
import { trainTask } from '../../node/train/run.js'
import { codeRun, readChunks } from '../../node/erasure/coded-run.js'
import { Harness } from '../unit/chain/harness.js'

// Detection of withheld chunks through the chain, with a real coded
// checkpoint: the devnet's task (MLP 784-128-10, Adam, batch 64) trained on
// Fashion-MNIST, checkpoint 10 coded into 256 chunks. Per trial the solver
// withholds a fresh random set of a fraction f of the chunks, a whistleblower
// asks the chain for samples, and the solver answers when it can; when it
// cannot, the request times out and the solver is slashed. The chain's
// outcome must be what the drawn indices predict, and the detection rate at
// f = 10% must be at least 99% (npm run bench -- availability runs more trials
// and writes docs/benchmarks.md).

const TRIALS = Number(process.env.AVAILABILITY_TRIALS ?? 60)
const FRACTIONS = [0.01, 0.05, 0.10, 0.25, 0.50]
const STEPS = 10
const EVERY = 5
const STEP = 10

let dir: string
let h: Harness
let coded: { checkpoints: CodedCheckpoint[], codedRoot: Uint8Array, ms: number }
let chunks: Uint8Array[]
const figures: Array<Record<string, number>> = []

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ps-chunk-detect-'))
  await initBackend('wasm')
  const ds = loadIdxDataset()
  const program = newProgram({ model: 'mlp', dataset: datasetRef(ds), steps: STEPS, optimizer: 'adam', batchSize: 64, checkpointEvery: EVERY })
  const run = await trainTask({ program, outDir: dir, dataset: ds, hashWorker: false, evaluate: false })
  expect(run.proofWritten).toBe(true)
  coded = codeRun(dir)
  chunks = readChunks(dir, STEP).chunks
  h = await Harness.create({ reference })
  for (const [n, roles] of [['Bob', 2], ['Dave', 4], ['Eve', 4], ['Ferdie', 8]] as const) expect(h.run(n, 'Arbitration', 'register_node', h.registerArgs(n, roles, 10_000n * UNIT)).error).toBeUndefined()
  const bytes = programBytes(program)
  expect(h.run('Alice', 'Arbitration', 'submit_task', { programHash: u8aToHex(sha256(bytes)), program: u8aToHex(bytes), datasetRoot: '0x' + '02'.repeat(32), skeletonRoot: '0x' + '03'.repeat(32), steps: STEPS, checkpointEvery: EVERY, escrow: 1000n * UNIT, solverReward: 600n * UNIT, verifierReward: 100n * UNIT, verifierCount: 2, challengeWindow: 1_000_000, solveTimeout: 20 }).error).toBeUndefined()
  h.advance(1)
  const entry = u8aToHex(new TextEncoder().encode(chunkRootEntry(coded.codedRoot)))
  expect(h.run('Bob', 'Arbitration', 'commit_proof', { taskId: 0, proofRoot: '0x' + run.proofRoot!, finalStateRoot: '0x' + run.finalStateRoot!, stepCount: STEPS, checkpoints: [entry] }).error).toBeUndefined()
}, 300_000)

afterAll(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
  if (process.env.AVAILABILITY_FIGURES !== undefined) writeFileSync(
    process.env.AVAILABILITY_FIGURES,
    JSON.stringify({
      trials: TRIALS, codingMs: coded.ms, checkpoints: coded.checkpoints.length, params: codingParams(coded.checkpoints.at(-1)!.dataBytes), figures
    })
  )
})

/** A deterministic stream of withheld sets (xorshift32). */
function withheldSets (seed: number): (count: number, total: number) => Set<number> {
  let x = seed >>> 0 || 1
  const next = (): number => { x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0; return x }
  return (count, total) => {
    const all = Array.from({ length: total }, (_, i) => i)
    for (let i = 0; i < count; i++) { const j = i + next() % (total - i); [all[i], all[j]] = [all[j], all[i]] }
    return new Set(all.slice(0, count))
  }
}

describe('withheld chunks are detected by sampling through the chain', () => {
  const draw = withheldSets(0xc0ffee)
  it.each(FRACTIONS)(`withholding %d of a real coded checkpoint's chunks: caught as often as 1 − C(n−w,s)/C(n,s) says, ≥ 99% from 10% on (${TRIALS} trials)`, async f => {
    const c = coded.checkpoints.find(x => x.step === STEP)!
    const { total } = codingParams(c.dataBytes)
    expect(total).toBe(256)
    const index = coded.checkpoints.indexOf(c)
    {
      const w = Math.ceil(f * total)
      let caught = 0
      let blocks = 0
      for (let t = 0; t < TRIALS; t++) {
        // let the test runner breathe: thousands of blocks run synchronously otherwise
        if (t % 10 === 0) await new Promise(resolve => setImmediate(resolve))
        const withheld = draw(w, total)
        const id = Number(h.read<bigint>('Arbitration', 'NextChunkRequestId') ?? 0n)
        const b0 = h.number
        expect(h.run('Ferdie', 'Arbitration', 'sample_chunks', { taskId: 0, checkpointStep: STEP }).error).toBeUndefined()
        const seed = chunkSampleSeed(hexToU8a(h.randomness()), id)
        const drawn = sampleChunkIndices(seed, total, CHUNK_SAMPLES)
        const hit = drawn.some(i => withheld.has(i))
        if (!hit) {
          for (const part of buildChunkResponses({ checkpoints: coded.checkpoints, index, chunks }, seed)) {
            expect(h.run('Bob', 'Arbitration', 'respond_chunks', { requestId: id, response: u8aToHex(part) }).error).toBeUndefined()
          }
        } else {
          h.advance(h.read<ChunkRequest>('Arbitration', 'ChunkRequests', id)!.deadline - h.number)
          expect(h.run('Dave', 'Arbitration', 'chunks_timeout', { requestId: id }).error).toBeUndefined()
        }
        const status = h.read<ChunkRequest>('Arbitration', 'ChunkRequests', id)!.status
        // the chain's outcome is exactly what the drawn indices predict
        expect(status).toBe(hit ? 'TimedOut' : 'Answered')
        if (status === 'TimedOut') caught++
        blocks += h.number - b0
      }
      const expected = 1 - missProbability(total, w, CHUNK_SAMPLES)
      figures.push({
        fraction: f, withheld: w, total, samples: CHUNK_SAMPLES, trials: TRIALS, caught, rate: caught / TRIALS, expected, blocksPerTrial: blocks / TRIALS
      })
      // within 5 standard deviations of the exact probability
      const sd = Math.sqrt(expected * (1 - expected) / TRIALS)
      expect(Math.abs(caught / TRIALS - expected)).toBeLessThanOrEqual(5 * sd + 1 / TRIALS)
      if (f >= 0.10) expect(caught / TRIALS).toBeGreaterThanOrEqual(0.99)
      expect(1 - missProbability(total, Math.ceil(0.1 * total), CHUNK_SAMPLES)).toBeGreaterThanOrEqual(0.99)
    }
  }, 900_000)
})
