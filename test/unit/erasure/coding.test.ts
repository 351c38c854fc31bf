import { describe, expect, it } from 'vitest'
import { bytesEqual, sha256 } from '../../../protocols/commit/merkle.js'
import {
  CHUNK_SAMPLES, buildChunkResponses, checkChunkResponse, checkpointOnPath, checkpointPosition, checkpointSteps, chunkOnPath, chunkPath, chunkLeaf, codedPath,
  codingParams, findChunkRoot, missProbability, missProbabilityIndependent, sampleChunkIndices, validateChunkList, ChunkResponseRejected
} from '../../../protocols/erasure/index.js'
import { decodeChunks, encodeChunks } from '../../../protocols/erasure/coder.js'
import { toHex } from '../../../protocols/commit/merkle.js'
import { EVERY, STEPS, codedRun } from '../../helpers/coded-run.js'

const seedOf = (n: number): Uint8Array => sha256(Uint8Array.of(n & 0xff, n >> 8, n >> 16))
function pick (n: number, k: number, seed: number): number[] {
  const all = Array.from({ length: n }, (_, i) => i)
  let x = seed
  for (let i = n - 1; i > 0; i--) { x = (Math.imul(x, 1103515245) + 12345) >>> 0; const j = x % (i + 1); [all[i], all[j]] = [all[j], all[i]] }
  return all.slice(0, k)
}

describe('erasure coding of a checkpoint', () => {
  it('sizes the code from the checkpoint: rate 1/2, at most 256 chunks, ~8 KiB chunks for small ones', () => {
    expect(codingParams(1)).toMatchObject({ dataShards: 1, parityShards: 1, total: 2, chunkBytes: 1 })
    expect(codingParams(100_000)).toMatchObject({ dataShards: 13, total: 26, chunkBytes: 7693 })
    const mlp = codingParams(1_221_280)
    expect(mlp).toMatchObject({ dataShards: 128, parityShards: 128, total: 256 })
    expect(mlp.chunkBytes * mlp.dataShards).toBeGreaterThanOrEqual(1_221_280)
    expect(() => codingParams(0)).toThrow(/1 to/)
    expect(() => codingParams(2 ** 40)).toThrow(/1 to/)
  })

  it('any k of the n chunks rebuild the checkpoint, bit for bit; fewer are refused', () => {
    const run = codedRun()
    const data = run.data[1]
    const chunks = run.chunks[1]
    const { dataShards: k, total } = codingParams(data.length)
    for (const seed of [1, 2, 3]) {
      const keep = new Set(pick(total, k, seed))
      const slots = chunks.map((c, i) => keep.has(i) ? c : undefined)
      expect(bytesEqual(decodeChunks(data.length, slots), data)).toBe(true)
    }
    // only parity chunks
    expect(bytesEqual(decodeChunks(data.length, chunks.map((c, i) => i >= k ? c : undefined)), data)).toBe(true)
    const tooFew = new Set(pick(total, k - 1, 9))
    expect(() => decodeChunks(data.length, chunks.map((c, i) => tooFew.has(i) ? c : undefined))).toThrow(/at least 128 are needed/)
  })

  it('is deterministic: encoding again gives the same chunks', () => {
    const run = codedRun()
    const again = encodeChunks(run.data[0]).chunks
    expect(again.every((c, i) => bytesEqual(c, run.chunks[0][i]))).toBe(true)
  })

  it('a chunk proves itself against the chunk root only at its index and depth', () => {
    const run = codedRun()
    const leaves = run.chunks[0].map(chunkLeaf)
    const root = run.checkpoints[0].chunkRoot
    expect(chunkOnPath(root, 256, 17, run.chunks[0][17], chunkPath(leaves, 17))).toBe(true)
    expect(chunkOnPath(root, 256, 18, run.chunks[0][17], chunkPath(leaves, 17))).toBe(false)
    const bad = run.chunks[0][17].slice(); bad[0] ^= 1
    expect(chunkOnPath(root, 256, 17, bad, chunkPath(leaves, 17))).toBe(false)
    // an inner node passed off as a leaf: a shorter path
    expect(chunkOnPath(root, 256, 8, run.chunks[0][17], chunkPath(leaves, 17).slice(1))).toBe(false)
  })

  it('places checkpoints in the coded root by step, and finds the committed root in the checkpoint list', () => {
    expect(checkpointSteps(10, 5)).toEqual([0, 5, 10])
    expect(checkpointSteps(11, 5)).toEqual([0, 5, 10, 11])
    expect(checkpointPosition(11, 11, 5)).toEqual({ index: 3, count: 4 })
    expect(checkpointPosition(7, 11, 5)).toBeNull()
    const run = codedRun()
    expect(checkpointOnPath(run.codedRoot, run.checkpoints[2], codedPath(run.checkpoints, 2), STEPS, EVERY)).toBe(true)
    expect(checkpointOnPath(run.codedRoot, { ...run.checkpoints[2], step: 5 }, codedPath(run.checkpoints, 2), STEPS, EVERY)).toBe(false)
    expect(checkpointOnPath(run.codedRoot, { ...run.checkpoints[2], dataBytes: 99 }, codedPath(run.checkpoints, 2), STEPS, EVERY)).toBe(false)
    expect(findChunkRoot(['run-index:bafy', 'chunk-root:' + toHex(run.codedRoot)])).toEqual(run.codedRoot)
    expect(findChunkRoot(['chunk-root:xyz'])).toBeNull()
    expect(findChunkRoot([])).toBeNull()
  })

  it('validates a chunk list against the committed coding', () => {
    const run = codedRun()
    const c = run.checkpoints[1]
    const list = { version: 1, step: 5, dataBytes: c.dataBytes, chunkRoot: toHex(c.chunkRoot), leaves: run.chunks[1].map(x => toHex(chunkLeaf(x))), blocks: run.chunks[1].map(() => 'b' + 'a'.repeat(58)) }
    expect(validateChunkList(list, c).leaves).toHaveLength(256)
    const swapped = { ...list, leaves: [list.leaves[1], list.leaves[0], ...list.leaves.slice(2)] }
    expect(() => validateChunkList(swapped, c)).toThrow(/chunk root/)
    expect(() => validateChunkList(list, run.checkpoints[0])).toThrow(/committed coding/)
  })
})

describe('chunk sampling', () => {
  it('draws distinct indices, all of them when the checkpoint has fewer chunks than samples', () => {
    const s = sampleChunkIndices(seedOf(1), 256, CHUNK_SAMPLES)
    expect(new Set(s).size).toBe(CHUNK_SAMPLES)
    expect(s.every(i => i >= 0 && i < 256)).toBe(true)
    expect(sampleChunkIndices(seedOf(2), 256, CHUNK_SAMPLES)).not.toEqual(s)
    expect(sampleChunkIndices(seedOf(1), 20, CHUNK_SAMPLES).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i))
  })

  it('draws each chunk equally often (χ² over 2000 draws)', () => {
    const counts = new Array(256).fill(0)
    for (let t = 0; t < 2000; t++) for (const i of sampleChunkIndices(seedOf(t + 100), 256, CHUNK_SAMPLES)) counts[i]++
    const expected = 2000 * CHUNK_SAMPLES / 256
    const chi2 = counts.reduce((a, c) => a + (c - expected) ** 2 / expected, 0)
    // 255 degrees of freedom: p = 0.001 at ≈ 330
    expect(chi2).toBeLessThan(330)
  })

  it('states the miss probability exactly (hypergeometric) and as the independent bound', () => {
    expect(missProbability(256, 26, 48)).toBeCloseTo(0.003295, 5)
    expect(missProbabilityIndependent(0.1, 48)).toBeLessThan(0.01)
    expect(missProbability(256, 129, 48)).toBeLessThan(2 ** -48)
    expect(missProbability(10, 5, 6)).toBe(0)
  })

  it('a response in parts is accepted part by part, and no sample twice', () => {
    const run = codedRun()
    const seed = seedOf(7)
    const ctx = { codedRoot: run.codedRoot, step: 5, stepCount: STEPS, checkpointEvery: EVERY, seed, posted: 0n }
    const parts = buildChunkResponses({ checkpoints: run.checkpoints, index: 1, chunks: run.chunks[1] }, seed, 0n, 100_000)
    expect(parts.length).toBeGreaterThan(4)
    let posted = 0n
    for (const p of parts) {
      const r = checkChunkResponse({ ...ctx, posted }, p)
      for (const k of r.posted) posted |= 1n << BigInt(k)
      expect(r.samples).toBe(CHUNK_SAMPLES)
    }
    expect(posted).toBe((1n << 48n) - 1n)
    expect(() => checkChunkResponse({ ...ctx, posted }, parts[0])).toThrow(ChunkResponseRejected)
    // the same chunks for another seed are other samples
    expect(() => checkChunkResponse({ ...ctx, seed: seedOf(8) }, parts[0])).toThrow(/does not verify/)
    // a checkpoint of another step
    const other = buildChunkResponses({ checkpoints: run.checkpoints, index: 2, chunks: run.chunks[2] }, seed)[0]
    expect(() => checkChunkResponse(ctx, other)).toThrow(/step 10/)
  })
})
