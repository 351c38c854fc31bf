import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { chunkedStateRoot, commitChunked, commitTensor, stateRoot, toHex, type TensorData } from '../../../protocols/commit/index.js'
import { axisLayout, matrixView } from '../../../protocols/commit/tensor.js'
import { nativeAxisRoots, nativeChunkRoot, nativeDir } from '../../../node/train/psk-addon.js'

function rnd (shape: number[], dtype: TensorData['dtype'], seed: number): TensorData {
  const n = shape.reduce((a, b) => a * b, 1)
  let s = seed
  const next = (): number => { s = (Math.imul(s, 1103515245) + 12345) >>> 0; return s }
  const values = dtype === 'float32' ? Float32Array.from({ length: n }, () => next() / 2 ** 32 - 0.5) : dtype === 'int32' ? Int32Array.from({ length: n }, () => next() | 0) : Uint8Array.from({ length: n }, () => next() & 1)
  return { shape, dtype, values }
}

// both implementations of the row and column roots: the addon's (OpenSSL's sha256), used when it
// is built, and fast-commit's own JavaScript one (PROOFSWARM_PSK_NATIVE=0, or no addon)
const impls = [
  { name: 'native roots', env: undefined },
  { name: 'JavaScript roots', env: '0' }
]

describe.each(impls)('fast state root ($name)', ({ env }) => {
  let fastStateRoot: typeof import('../../../node/train/fast-commit.js').fastStateRoot
  let fastTensorRoot: typeof import('../../../node/train/fast-commit.js').fastTensorRoot
  let fastChunkedStateRoot: typeof import('../../../node/train/fast-commit.js').fastChunkedStateRoot
  beforeAll(async () => {
    if (env !== undefined) vi.stubEnv('PROOFSWARM_PSK_NATIVE', env)
    vi.resetModules()
    ;({ fastStateRoot, fastTensorRoot, fastChunkedStateRoot } = await import('../../../node/train/fast-commit.js'))
  })
  afterAll(() => { vi.unstubAllEnvs() })

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

  it('the chunked state root equals protocols/commit\'s: partial, exact and single chunks, no chunk, every dtype', () => {
    const cases: Array<[number[], TensorData['dtype']]> = [[[], 'float32'], [[0, 3], 'float32'], [[1024], 'float32'], [[1025], 'float32'], [[784, 128], 'float32'],
      [[128], 'float32'], [[128, 10], 'float32'], [[10], 'float32'], [[4097], 'bool'], [[33, 65], 'int32'],
      // 16, 13, 11 and 10 equal full chunks (16 lanes where the CPU has AVX-512, else one at a time) and a partial one
      [[16, 1024], 'float32'], [[13, 1024], 'int32'], [[11 * 1024 + 5], 'float32'], [[10, 4096], 'bool']]
    const ts = cases.map(([s, d], i) => rnd(s, d, 300 + i))
    expect(toHex(fastChunkedStateRoot(ts, 8))).toBe(toHex(chunkedStateRoot(ts, 8)))
    ts.forEach((t, i) => { expect(toHex(fastChunkedStateRoot([t], i)), `[${t.shape.join(',')}] ${t.dtype}`).toBe(toHex(chunkedStateRoot([t], i))) })
    const flip = ts[4]
    const before = toHex(fastChunkedStateRoot([flip], 1))
    new Uint32Array(flip.values.buffer)[100_351] ^= 1
    expect(toHex(fastChunkedStateRoot([flip], 1))).not.toBe(before)
    expect(toHex(fastChunkedStateRoot([flip], 1))).toBe(toHex(chunkedStateRoot([flip], 1)))
  })

  it('one flipped bit changes the root', () => {
    const t = rnd([20, 10], 'float32', 5)
    const before = toHex(fastTensorRoot(t))
    new Uint32Array(t.values.buffer)[77] ^= 1
    expect(toHex(fastTensorRoot(t))).not.toBe(before)
    expect(toHex(fastTensorRoot(t))).toBe(toHex(commitTensor(t).root))
  })
})

describe('the addon\'s row and column roots', () => {
  // built by npm ci; when it is, training hashes with it, so it must give protocols/commit's roots
  const built = existsSync(join(nativeDir(), 'build', 'Release', 'psk_kernels.node'))
  it.runIf(built)('equal protocols/commit\'s, from any buffer (the hashing thread\'s are shared)', () => {
    const axis = nativeAxisRoots()
    expect(axis, 'the built addon has axisRoots').toBeDefined()
    if (axis === undefined) return
    const cases: Array<[number[], TensorData['dtype']]> = [[[], 'float32'], [[7], 'float32'], [[3, 4], 'float32'], [[0, 3], 'float32'], [[3, 0], 'float32'],
      [[784, 128], 'float32'], [[300, 5], 'float32'], [[2000, 1], 'float32'], [[1, 2000], 'int32'], [[70, 30], 'bool'], [[3, 3, 8, 16], 'float32'],
      // where the CPU has AVX-512, runs of >= 11 equal leaves or nodes are hashed 16 at a time: runs of 16, 13,
      // 11 and 10 (one at a time), partial last leaves ending a run, odd levels, multi-block and 1-byte-short leaves
      [[45, 512], 'float32'], [[27, 512], 'float32'], [[26, 512], 'float32'], [[17, 1024], 'int32'], [[333, 97], 'float32'],
      [[3000, 40], 'bool'], [[40, 3000], 'bool'], [[63, 13], 'float32'], [[55, 2047], 'bool']]
    cases.forEach(([shape, dtype], i) => {
      const t = rnd(shape, dtype, 7 + i)
      const shared = new Uint8Array(new SharedArrayBuffer(t.values.byteLength + 8), 8, t.values.byteLength)
      shared.set(new Uint8Array(t.values.buffer, t.values.byteOffset, t.values.byteLength))
      const { rows, cols } = matrixView(shape)
      const dims = Int32Array.of(rows, cols, dtype === 'bool' ? 1 : 4, axisLayout(dtype, shape, 'row').group, axisLayout(dtype, shape, 'col').group)
      const out = new Uint8Array(64)
      expect(axis(shared, dims, out)).toBe(true)
      const c = commitTensor(t)
      expect(toHex(out.subarray(0, 32)), `rows of [${shape.join(',')}] ${dtype}`).toBe(toHex(c.rowRoot))
      expect(toHex(out.subarray(32)), `columns of [${shape.join(',')}] ${dtype}`).toBe(toHex(c.colRoot))
    })
    expect(() => axis(new Uint8Array(12), Int32Array.of(2, 2, 4, 1, 1), new Uint8Array(64))).toThrow(/sizes/)
  })
})

describe('the addon\'s chunk root', () => {
  const built = existsSync(join(nativeDir(), 'build', 'Release', 'psk_kernels.node'))
  it.runIf(built)('equals protocols/commit\'s chunk root, from shared buffers too, and refuses a bad chunk size', () => {
    const chunk = nativeChunkRoot()
    expect(chunk, 'the built addon has chunkRoot (npm run build:kernels)').toBeDefined()
    if (chunk === undefined) return
    for (const [shape, dtype] of [[[0], 'float32'], [[1], 'float32'], [[1024], 'float32'], [[784, 128], 'float32'], [[17 * 1024 + 3], 'float32'], [[9000], 'bool']] as Array<[number[], TensorData['dtype']]>) {
      const t = rnd(shape, dtype, 11)
      const shared = new Uint8Array(new SharedArrayBuffer(t.values.byteLength + 8), 8, t.values.byteLength)
      shared.set(new Uint8Array(t.values.buffer, t.values.byteOffset, t.values.byteLength))
      const out = new Uint8Array(32)
      expect(chunk(shared, Int32Array.of(4096, 4), out)).toBe(true)
      expect(toHex(out), `[${shape.join(',')}] ${dtype}`).toBe(toHex(commitChunked(t).chunkRoot))
    }
    expect(() => chunk(new Uint8Array(12), Int32Array.of(0, 4), new Uint8Array(32))).toThrow(/chunk size/)
  })
})
