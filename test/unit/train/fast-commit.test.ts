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

  it('one flipped bit changes the root', () => {
    const t = rnd([20, 10], 'float32', 5)
    const before = toHex(fastTensorRoot(t))
    new Uint32Array(t.values.buffer)[77] ^= 1
    expect(toHex(fastTensorRoot(t))).not.toBe(before)
    expect(toHex(fastTensorRoot(t))).toBe(toHex(commitTensor(t).root))
  })
})
