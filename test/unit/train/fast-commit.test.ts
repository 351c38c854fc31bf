import { describe, expect, it } from 'vitest'
import { commitTensor, stateRoot, toHex, type TensorData } from '../../../protocols/commit/index.js'
import { fastStateRoot, fastTensorRoot } from '../../../node/train/fast-commit.js'

function rnd (shape: number[], dtype: TensorData['dtype'], seed: number): TensorData {
  const n = shape.reduce((a, b) => a * b, 1)
  let s = seed
  const next = (): number => { s = (Math.imul(s, 1103515245) + 12345) >>> 0; return s }
  const values = dtype === 'float32' ? Float32Array.from({ length: n }, () => next() / 2 ** 32 - 0.5) : dtype === 'int32' ? Int32Array.from({ length: n }, () => next() | 0) : Uint8Array.from({ length: n }, () => next() & 1)
  return { shape, dtype, values }
}

describe('fast state root', () => {
  it('equals protocols/commit for many shapes and dtypes', () => {
    const cases: Array<[number[], TensorData['dtype']]> = [[[], 'float32'], [[1], 'float32'], [[7], 'float32'], [[5, 1], 'float32'], [[3, 4], 'float32'], [[2, 3, 5], 'int32'], [[33, 17], 'float32'], [[4, 9], 'bool'], [[0, 3], 'float32'], [[784, 128], 'float32'],
      // grouped leaves with a partial last leaf (rows: 102 per leaf; columns: 5 per leaf), 1-row and 1-column tensors
      [[300, 5], 'float32'], [[100, 7], 'float32'], [[1, 2000], 'float32'], [[2000, 1], 'float32'], [[1, 1], 'int32'],
      [[600, 3], 'int32'], [[70, 30], 'bool'], [[128, 10], 'float32'], [[128], 'float32'], [[3, 3, 8, 16], 'float32']]
    cases.forEach(([shape, dtype], i) => {
      const t = rnd(shape, dtype, i + 1)
      expect(toHex(fastTensorRoot(t)), `shape [${shape.join(',')}] ${dtype}`).toBe(toHex(commitTensor(t).root))
    })
    const ts = cases.map(([s, d], i) => rnd(s, d, 100 + i))
    expect(toHex(fastStateRoot(ts, 42))).toBe(toHex(stateRoot(ts, 42)))
    expect(toHex(fastStateRoot(ts, 43))).not.toBe(toHex(fastStateRoot(ts, 42)))
  })

  it('special values: both paths commit the raw bits (NaN sign and payload, signalling NaNs, -0, subnormals) and agree', () => {
    const special = [
      0, 0x80000000, 1, 0x80000001, 0x007fffff, 0x00800000, 0x7f7fffff, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000, 0x7fc00001, 0x7f800001, 0xff800001
    ]
    const t: TensorData = { shape: [special.length, 3], dtype: 'float32', values: new Float32Array(Uint32Array.from(special.flatMap(b => [b, b ^ 0x80000000, 0x3f800000])).buffer) }
    expect(toHex(fastTensorRoot(t))).toBe(toHex(commitTensor(t).root))
    // a NaN's sign is part of the committed value: flipping it (both NaNs) changes both roots alike
    const flipped: TensorData = { ...t, values: t.values.slice() }
    const bits = new Uint32Array(flipped.values.buffer)
    bits[9 * 3] = 0xffc00000
    expect(toHex(fastTensorRoot(flipped))).not.toBe(toHex(fastTensorRoot(t)))
    expect(toHex(fastTensorRoot(flipped))).toBe(toHex(commitTensor(flipped).root))
    expect(toHex(fastStateRoot([t, flipped], 3))).toBe(toHex(stateRoot([t, flipped], 3)))
  })

  it('one flipped bit changes the root', () => {
    const t = rnd([20, 10], 'float32', 5)
    const before = toHex(fastTensorRoot(t))
    new Uint32Array(t.values.buffer)[77] ^= 1
    expect(toHex(fastTensorRoot(t))).not.toBe(before)
    expect(toHex(fastTensorRoot(t))).toBe(toHex(commitTensor(t).root))
  })
})
