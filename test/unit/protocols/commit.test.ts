import { describe, expect, it } from 'vitest'
import {
  axisLayout, commitTensor, leafHash, LEAF_BYTES, merkleProof, merkleRoot, proveSlice, proveStateTensor, rootFromProof, sha256,
  sliceBytes, stateRoot, stepLeaf, TENSOR_COMMITMENT_VERSION, toHex, fromHex, valuesFromBytes, verifyMerkleProof, verifySlice,
  ZERO_HASH, type TensorData
} from '../../../protocols/commit/index.js'

function rand (seed: number): () => number {
  let s = seed >>> 0
  return () => { s = (s * 1664525 + 1013904223) >>> 0; return s / 2 ** 32 }
}

function tensor (shape: number[], seed = 1): TensorData {
  const r = rand(seed)
  const n = shape.reduce((a, b) => a * b, 1)
  return { shape, dtype: 'float32', values: Float32Array.from({ length: n }, () => r() * 2 - 1) }
}

describe('merkle', () => {
  it('proves every leaf of trees of many sizes and rejects wrong ones', () => {
    for (const n of [1, 2, 3, 5, 8, 13]) {
      const leaves = Array.from({ length: n }, (_, i) => leafHash(Uint8Array.of(i)))
      const root = merkleRoot(leaves)
      for (let i = 0; i < n; i++) {
        const proof = merkleProof(leaves, i)
        expect(verifyMerkleProof(root, leaves[i], i, proof)).toBe(true)
        expect(verifyMerkleProof(root, leafHash(Uint8Array.of(99)), i, proof)).toBe(false)
        if (n > 1) expect(verifyMerkleProof(root, leaves[i], (i + 1) % n, proof)).toBe(false)
      }
    }
    expect(merkleRoot([])).toEqual(ZERO_HASH)
  })

  it('hex round-trips and rejects garbage', () => {
    const b = Uint8Array.of(0, 1, 254, 255)
    expect(fromHex(toHex(b))).toEqual(b)
    expect(fromHex('0x' + toHex(b))).toEqual(b)
    expect(() => fromHex('zz')).toThrow(/invalid hex/)
  })
})

describe('tensor commitments', () => {
  it('proves rows and columns of matrices, vectors and scalars, with grouped and partial leaves', () => {
    // [300,5]: 102 rows per leaf (3 leaves, the last partial); [100,7]: 5 columns per leaf (2 leaves, 5 + 2)
    for (const shape of [[7, 5], [3, 4, 6], [10], [], [1, 1], [300, 5], [100, 7], [1, 600], [600, 1]]) {
      const t = tensor(shape, shape.length + 3)
      const c = commitTensor(t)
      const rows = shape.length === 0 ? 1 : t.values.length / shape[shape.length - 1]
      const cols = shape.length === 0 ? 1 : shape[shape.length - 1]
      for (let r = 0; r < rows; r++) {
        const p = proveSlice(t, 'row', r)
        expect(verifySlice(c.root, p)).toBe(true)
        const vals = valuesFromBytes('float32', sliceBytes(p)) as Float32Array
        expect(Array.from(vals)).toEqual(Array.from(t.values.slice(r * cols, (r + 1) * cols)))
      }
      for (let col = 0; col < cols; col++) {
        const p = proveSlice(t, 'col', col)
        expect(verifySlice(c.root, p)).toBe(true)
        const vals = valuesFromBytes('float32', sliceBytes(p)) as Float32Array
        expect(Array.from(vals)).toEqual(Array.from({ length: rows }, (_, r) => t.values[r * cols + col]))
      }
    }
  })

  it('groups rows and columns into leaves of about LEAF_BYTES, derived from dtype and shape only', () => {
    expect(LEAF_BYTES).toBe(2048)
    expect(TENSOR_COMMITMENT_VERSION).toBe(2)
    // the Adam mlp's state tensors
    expect(axisLayout('float32', [784, 128], 'row')).toEqual({ count: 784, sliceBytes: 512, group: 4, leaves: 196 })
    expect(axisLayout('float32', [784, 128], 'col')).toEqual({ count: 128, sliceBytes: 3136, group: 1, leaves: 128 })
    expect(axisLayout('float32', [128], 'col')).toEqual({ count: 128, sliceBytes: 4, group: 512, leaves: 1 })
    expect(axisLayout('float32', [128, 10], 'row')).toEqual({ count: 128, sliceBytes: 40, group: 51, leaves: 3 })
    expect(axisLayout('float32', [], 'row')).toEqual({ count: 1, sliceBytes: 4, group: 512, leaves: 1 })
    expect(axisLayout('bool', [70, 30], 'col')).toEqual({ count: 30, sliceBytes: 70, group: 29, leaves: 2 })
    expect(axisLayout('float32', [0, 3], 'col')).toEqual({ count: 3, sliceBytes: 0, group: 1, leaves: 3 })
  })

  it('matches the specification computed by hand (docs/protocol.md §3)', () => {
    const t = tensor([100, 7], 9)
    const bytes = new Uint8Array(t.values.buffer)
    const row = (r: number): Uint8Array => bytes.subarray(r * 28, (r + 1) * 28)
    const col = (c: number): Uint8Array => Uint8Array.from(
      Array.from({ length: 100 }, (_, r) => Array.from(bytes.subarray((r * 7 + c) * 4, (r * 7 + c + 1) * 4))).flat()
    )
    const cat = (parts: Uint8Array[]): Uint8Array => Uint8Array.from(parts.flatMap(p => Array.from(p)))
    // rows: 28 bytes → 73 per leaf (2 leaves: 73 + 27); columns: 400 bytes → 5 per leaf (5 + 2)
    const rowRoot = merkleRoot([leafHash(cat(Array.from({ length: 73 }, (_, r) => row(r)))), leafHash(cat(Array.from({ length: 27 }, (_, r) => row(73 + r))))])
    const colRoot = merkleRoot([leafHash(cat([0, 1, 2, 3, 4].map(col))), leafHash(cat([5, 6].map(col)))])
    const header = Uint8Array.of(1, 2, 100, 0, 0, 0, 7, 0, 0, 0)
    const c = commitTensor(t)
    expect(toHex(c.rowRoot)).toBe(toHex(rowRoot))
    expect(toHex(c.colRoot)).toBe(toHex(colRoot))
    expect(toHex(c.root)).toBe(toHex(sha256(Uint8Array.of(2, 2), header, rowRoot, colRoot)))
  })

  it('a proof carries its whole leaf: a leaf of the wrong size is rejected, never a crash', () => {
    const t = tensor([300, 5])
    const c = commitTensor(t)
    const p = proveSlice(t, 'row', 250) // leaf 2 holds rows 204..299
    expect(p.bytes.length).toBe(96 * 20)
    expect(p.siblings.length).toBe(2)
    expect(verifySlice(c.root, { ...p, bytes: sliceBytes(p).slice() })).toBe(false)
    expect(verifySlice(c.root, { ...p, bytes: new Uint8Array([...p.bytes, 0, 0, 0, 0]) })).toBe(false)
    expect(verifySlice(c.root, { ...p, bytes: p.bytes.subarray(0, p.bytes.length - 20) })).toBe(false)
    expect(verifySlice(c.root, { ...p, bytes: undefined as unknown as Uint8Array })).toBe(false)
    expect(() => sliceBytes({ ...p, bytes: p.bytes.subarray(20) })).toThrow(RangeError)
    expect(() => sliceBytes({ ...p, index: 300 })).toThrow(RangeError)
    // another row of the same leaf is proven by the same leaf; a row of another leaf is not
    expect(verifySlice(c.root, { ...p, index: 204 })).toBe(true)
    expect(Array.from(valuesFromBytes('float32', sliceBytes({ ...p, index: 204 })))).toEqual(Array.from(t.values.slice(204 * 5, 205 * 5)))
    expect(verifySlice(c.root, { ...p, index: 203 })).toBe(false)
  })

  it('rejects a tampered value, a wrong index, a wrong shape and garbage', () => {
    const t = tensor([16, 8])
    const c = commitTensor(t)
    const p = proveSlice(t, 'col', 3)
    const bad = { ...p, bytes: p.bytes.slice() }
    bad.bytes[0] ^= 1
    expect(verifySlice(c.root, bad)).toBe(false)
    expect(verifySlice(c.root, { ...p, index: 40 })).toBe(false)
    expect(verifySlice(c.root, { ...p, shape: [8, 16] })).toBe(false)
    expect(verifySlice(c.root, { ...p, siblings: [new Uint8Array(32)] })).toBe(false)
    expect(verifySlice(new Uint8Array(3), p)).toBe(false)
    expect(verifySlice(c.root, { ...p, axis: 'row' })).toBe(false)
    expect(verifySlice(c.root, { ...p, shape: [-1, 8] })).toBe(false)
  })

  it('one flipped bit anywhere changes the commitment; equal data gives equal commitments', () => {
    const t = tensor([4, 4])
    const base = toHex(commitTensor(t).root)
    expect(toHex(commitTensor(tensor([4, 4])).root)).toBe(base)
    const flipped = new Float32Array(t.values)
    new Uint32Array(flipped.buffer)[9] ^= 1
    expect(toHex(commitTensor({ ...t, values: flipped }).root)).not.toBe(base)
    expect(toHex(commitTensor({ ...t, shape: [2, 8] }).root)).not.toBe(base)
    expect(() => commitTensor({ ...t, shape: [5, 4] })).toThrow(/needs 20/)
  })
})

describe('state root', () => {
  it('binds every tensor and the step, and proves membership', () => {
    const ts = [tensor([4, 3], 1), tensor([3], 2), tensor([3, 2], 3)]
    const root = stateRoot(ts, 7)
    expect(toHex(stateRoot(ts, 8))).not.toBe(toHex(root))
    for (let i = 0; i < ts.length; i++) {
      const proof = proveStateTensor(ts, 7, i)
      expect(rootFromProof(commitTensor(ts[i]).root, i, proof)).toEqual(root)
    }
    expect(rootFromProof(stepLeaf(7), ts.length, proveStateTensor(ts, 7, ts.length))).toEqual(root)
  })
})
