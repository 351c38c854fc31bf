import { describe, expect, it } from 'vitest'
import {
  commitTensor, leafHash, merkleProof, merkleRoot, proveSlice, proveStateTensor, rootFromProof, stateRoot,
  stepLeaf, toHex, fromHex, valuesFromBytes, verifyMerkleProof, verifySlice, ZERO_HASH, type TensorData
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
  it('proves rows and columns of matrices, vectors and scalars', () => {
    for (const shape of [[7, 5], [3, 4, 6], [10], [], [1, 1]]) {
      const t = tensor(shape, shape.length + 3)
      const c = commitTensor(t)
      const rows = shape.length === 0 ? 1 : t.values.length / shape[shape.length - 1]
      const cols = shape.length === 0 ? 1 : shape[shape.length - 1]
      for (let r = 0; r < rows; r++) {
        const p = proveSlice(t, 'row', r)
        expect(verifySlice(c.root, p)).toBe(true)
        const vals = valuesFromBytes('float32', p.bytes) as Float32Array
        expect(Array.from(vals)).toEqual(Array.from(t.values.slice(r * cols, (r + 1) * cols)))
      }
      for (let col = 0; col < cols; col++) {
        const p = proveSlice(t, 'col', col)
        expect(verifySlice(c.root, p)).toBe(true)
        const vals = valuesFromBytes('float32', p.bytes) as Float32Array
        expect(vals[rows - 1]).toBe(t.values[(rows - 1) * cols + col])
      }
    }
  })

  it('rejects a tampered value, a wrong index, a wrong shape and garbage', () => {
    const t = tensor([16, 8])
    const c = commitTensor(t)
    const p = proveSlice(t, 'col', 3)
    const bad = { ...p, bytes: p.bytes.slice() }
    bad.bytes[0] ^= 1
    expect(verifySlice(c.root, bad)).toBe(false)
    expect(verifySlice(c.root, { ...p, index: 4 })).toBe(false)
    expect(verifySlice(c.root, { ...p, shape: [8, 16] })).toBe(false)
    expect(verifySlice(c.root, { ...p, siblings: [] })).toBe(false)
    expect(verifySlice(new Uint8Array(3), p)).toBe(false)
    expect(verifySlice(c.root, { ...p, axis: 'row' })).toBe(false)
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
