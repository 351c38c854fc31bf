import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import {
  CHUNK_BYTES, CHUNKED_COMMITMENT_VERSION, chunkElementBits, chunkLayout, chunkLeafHash, chunkSpan, chunkedStateRoot, commitChunked,
  commitTensor, elementChunk, leafHash, merkleRoot, proveChunk, proveElementChunk, stateRoot, stepLeaf, tensorHeader, tensorLeaves,
  treeDepth, verifyChunk, ZERO_HASH, type ChunkProof, type DType, type TensorData
} from '../../../protocols/commit/index.js'
import { depthOf } from '../../../protocols/dispute/tree.js'

// The chunked tensor commitment and state root (protocols/commit/chunked.ts):
// recomputed here from sha256 alone, chunk proofs of every chunk, and every way
// a chunk proof can misstate its bytes, index, path or header.

function rand (seed: number): () => number {
  let s = seed >>> 0
  return () => { s = (s * 1664525 + 1013904223) >>> 0; return s / 2 ** 32 }
}

function tensor (shape: number[], dtype: DType = 'float32', seed = 1): TensorData {
  const r = rand(seed)
  const n = shape.reduce((a, b) => a * b, 1)
  const values = dtype === 'float32'
    ? Float32Array.from({ length: n }, () => r() * 2 - 1)
    : dtype === 'int32' ? Int32Array.from({ length: n }, () => Math.floor(r() * 2 ** 32) | 0) : Uint8Array.from({ length: n }, () => (r() < 0.5 ? 0 : 1))
  return { shape, dtype, values }
}

const bytesOf = (t: TensorData): Uint8Array => new Uint8Array(t.values.buffer, t.values.byteOffset, t.values.byteLength)
const h = (...parts: Uint8Array[]): Uint8Array => { const x = createHash('sha256'); for (const p of parts) x.update(p); return new Uint8Array(x.digest()) }

/** The chunked commitment from its definition: sha256(05 01 ‖ header ‖ Merkle root of sha256(04 ‖ chunk)), zero-padded pairs. */
function byHand (t: TensorData): Uint8Array {
  const b = bytesOf(t)
  let level: Uint8Array[] = []
  for (let o = 0; o < b.length; o += CHUNK_BYTES) level.push(h(Uint8Array.of(4), b.subarray(o, Math.min(b.length, o + CHUNK_BYTES))))
  if (level.length === 0) level = [new Uint8Array(32)]
  while (level.length > 1) {
    const next: Uint8Array[] = []
    for (let i = 0; i < level.length; i += 2) next.push(h(Uint8Array.of(1), level[i], level[i + 1] ?? new Uint8Array(32)))
    level = next
  }
  return h(Uint8Array.of(5, CHUNKED_COMMITMENT_VERSION), tensorHeader(t.dtype, t.shape), level[0])
}

// shapes around the chunk size: exact multiples, one element over, partial last chunks, none
const SHAPES: Array<[number[], DType]> = [
  [[784, 128], 'float32'], [[128], 'float32'], [[128, 10], 'float32'], [[], 'float32'], [[1024], 'float32'], [[1025], 'float32'],
  [[3, 1024], 'float32'], [[0], 'float32'], [[4, 0, 3], 'float32'], [[4096], 'bool'], [[4097], 'bool'], [[3, 5000], 'bool'], [[33, 65], 'int32']
]

describe('chunked commitments', () => {
  it('lays out chunks from dtype and shape: CHUNK_BYTES each, the last partial, none for an empty tensor', () => {
    expect(CHUNK_BYTES % 4).toBe(0)
    expect(chunkLayout('float32', [784, 128])).toEqual({ bytes: 401408, eb: 4, chunks: 98, depth: 7 })
    expect(chunkLayout('float32', [])).toEqual({ bytes: 4, eb: 4, chunks: 1, depth: 0 })
    expect(chunkLayout('float32', [0])).toEqual({ bytes: 0, eb: 4, chunks: 0, depth: 0 })
    expect(chunkLayout('bool', [4097])).toEqual({ bytes: 4097, eb: 1, chunks: 2, depth: 1 })
    const l = chunkLayout('float32', [1025])
    expect([chunkSpan(l, 0), chunkSpan(l, 1)]).toEqual([{ start: 0, length: 4096 }, { start: 4096, length: 4 }])
    for (let n = 0; n <= 300; n++) expect(treeDepth(n)).toBe(depthOf(n))
  })

  it('equals its definition recomputed from sha256, for every shape', () => {
    for (const [shape, dtype] of SHAPES) {
      const t = tensor(shape, dtype, shape.length + 7)
      expect(commitChunked(t).root).toEqual(byHand(t))
    }
    expect(commitChunked(tensor([0])).chunkRoot).toEqual(ZERO_HASH)
  })

  it('binds dtype and shape, and is never the row + column commitment or its roots', () => {
    const t = tensor([3, 1024], 'float32', 5)
    const c = commitChunked(t)
    // same bytes, other headers
    expect(commitChunked({ ...t, shape: [3, 1, 1024] }).root).not.toEqual(c.root)
    expect(commitChunked({ ...t, shape: [3072] }).root).not.toEqual(c.root)
    expect(commitChunked({ shape: t.shape, dtype: 'int32', values: new Int32Array(t.values.buffer) }).root).not.toEqual(c.root)
    // a [r, 1024] float32 row is exactly one chunk (4096 bytes, one row per leaf): the leaf prefixes keep the trees apart
    const rows = tensorLeaves(t, 'row')
    expect(rows.length).toBe(3)
    expect(chunkLeafHash(bytesOf(t).subarray(0, 4096))).not.toEqual(leafHash(bytesOf(t).subarray(0, 4096)))
    expect(c.chunkRoot).not.toEqual(merkleRoot(rows))
    expect(c.root).not.toEqual(commitTensor(t).root)
  })

  it('puts every element wholly in one chunk and reads its bits back from it', () => {
    // every shape but the largest (its chunks are proven in the next test)
    for (const [shape, dtype] of SHAPES.filter(([s]) => s.reduce((a, b) => a * b, 1) <= 20_000)) {
      const t = tensor(shape, dtype, 11)
      const l = chunkLayout(dtype, shape)
      const proofs = Array.from({ length: l.chunks }, (_, i) => proveChunk(t, i))
      const bits = dtype === 'float32' ? new Uint32Array(t.values.buffer) : dtype === 'int32' ? new Uint32Array(t.values.buffer) : t.values
      for (let f = 0; f < t.values.length; f++) {
        const { chunk, offset } = elementChunk(dtype, f)
        expect(offset + l.eb).toBeLessThanOrEqual(chunkSpan(l, chunk).length)
        expect(chunkElementBits(proofs[chunk], f)).toBe(bits[f])
        // and no other chunk claims it
        if (chunk > 0) expect(chunkElementBits(proofs[chunk - 1], f)).toBeUndefined()
      }
      if (l.chunks > 0) expect(chunkElementBits(proofs[l.chunks - 1], t.values.length)).toBeUndefined()
    }
  })
})

describe('chunk proofs', () => {
  it('prove every chunk of every shape, the last partial one included', () => {
    for (const [shape, dtype] of SHAPES) {
      const t = tensor(shape, dtype, 3)
      const root = commitChunked(t).root
      const l = chunkLayout(dtype, shape)
      for (let i = 0; i < l.chunks; i++) {
        const p = proveChunk(t, i)
        expect(p.bytes.length).toBe(chunkSpan(l, i).length)
        expect(p.siblings.length).toBe(l.depth)
        expect(verifyChunk(root, p)).toBe(true)
      }
      expect(() => proveChunk(t, l.chunks)).toThrow(RangeError)
      // an empty tensor has no chunk to prove; an empty chunk is no chunk of any other
      expect(verifyChunk(root, { dtype, shape, index: 0, bytes: new Uint8Array(0), siblings: [] })).toBe(false)
    }
  })

  it('reject another chunk\'s bytes, padding, truncation, another index, a path of the wrong depth and another header', () => {
    const t = tensor([1025], 'float32', 9) // two chunks, the second of 4 bytes
    const root = commitChunked(t).root
    const first = proveChunk(t, 0)
    const last = proveElementChunk(t, 1024)
    expect(last.index).toBe(1)
    const bad: Array<[string, ChunkProof]> = [
      ['a flipped bit', { ...first, bytes: first.bytes.map((b, i) => i === 100 ? b ^ 1 : b) }],
      ['the last chunk padded to CHUNK_BYTES', { ...last, bytes: Uint8Array.from({ length: CHUNK_BYTES }, (_, i) => last.bytes[i] ?? 0) }],
      ['a truncated chunk', { ...first, bytes: first.bytes.subarray(0, 4092) }],
      ['chunk 0 named as chunk 1', { ...first, index: 1 }],
      ['an index past the chunks', { ...last, index: 2 }],
      ['a path one short', { ...first, siblings: [] }],
      ['a path one long', { ...first, siblings: [...first.siblings, ZERO_HASH] }],
      ['another shape of the same size', { ...first, shape: [1, 1025] }],
      ['another dtype of the same bytes', { ...first, dtype: 'int32' }],
      ['a larger shape', { ...first, shape: [2048] }]
    ]
    for (const [what, p] of bad) expect(verifyChunk(root, p), what).toBe(false)
    // garbage never throws
    const garbage = [{}, { ...first, siblings: null }, { ...first, siblings: [Uint8Array.of(1)] }, { ...first, bytes: 'x' }, { ...first, shape: [-1] }, { ...first, dtype: 'f16' }, { ...first, index: 0.5 }]
    for (const g of garbage) expect(verifyChunk(root, g as unknown as ChunkProof)).toBe(false)
    expect(verifyChunk(root.subarray(0, 31), first)).toBe(false)
  })
})

describe('chunked state root', () => {
  it('is the Merkle root of the chunked commitments and the step leaf, bound to the step', () => {
    const state = [tensor([784, 128], 'float32', 1), tensor([128], 'float32', 2), tensor([], 'float32', 3)]
    const r = chunkedStateRoot(state, 5)
    expect(r).toEqual(merkleRoot([...state.map(byHand), stepLeaf(5)]))
    expect(chunkedStateRoot(state, 6)).not.toEqual(r)
    expect(r).not.toEqual(stateRoot(state, 5))
    // one element changed changes it
    const v = Float32Array.from(state[0].values as Float32Array)
    v[100_000] = -v[100_000]
    expect(chunkedStateRoot([{ ...state[0], values: v }, state[1], state[2]], 5)).not.toEqual(r)
  })
})
