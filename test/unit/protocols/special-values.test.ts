import * as tf from '@tensorflow/tfjs'
import { beforeAll, describe, expect, it } from 'vitest'
import type { TensorData } from '../../../protocols/commit/index.js'
import { CPU_RUNTIME, WASM_RUNTIME } from '../../../protocols/program/index.js'
import { supportedKernels } from '../../../protocols/reference/index.js'
import { initBackend } from '../../../node/train/backend.js'
import { check, f32FromBits, refusedAmbiguousNaN, runBackend } from './ref-check.js'

// Special values: every kernel with an element reference on the wasm runtime
// is run on the real backend with ±0, subnormals, extreme normals, ±Inf and
// NaNs of both signs, with payloads and signalling, and every output element's
// BITS are compared with the reference (never isNaN).

export const SPECIAL = [
  0x00000000, 0x80000000, // ±0
  0x00000001, 0x80000001, // ±min subnormal
  0x007fffff, 0x807fffff, // ±max subnormal
  0x00800000, 0x80800000, // ±min normal
  0x3f800000, 0xbf800000, // ±1
  0x7f7fffff, 0xff7fffff, // ±max float
  0x7f800000, 0xff800000, // ±Inf
  0x7fc00000, 0xffc00000, // ±quiet NaN
  0x7fc00001, 0xffc00001, // quiet NaN with payload, both signs
  0x7f800001, 0xff800001 // signalling NaN, both signs
]
const N = SPECIAL.length
const ORDINARY = [0x40490fdb, 0xc0490fdb, 0x3e4ccccd, 0xbe4ccccd, 0x41200000, 0xc1200000, 0x3f000000, 0xbf000000] // ±pi, ±0.2, ±10, ±0.5

let seed = 7
function rand (): number { seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0; return seed / 2 ** 32 }
/** A tensor of ordinary values with a share of specials (all of them, cycling, when share = 1). */
function mixed (shape: number[], share = 0.25): TensorData {
  const n = shape.reduce((a, b) => a * b, 1)
  const bits: number[] = []
  for (let i = 0; i < n; i++) bits.push(rand() < share ? SPECIAL[Math.floor(rand() * N)] : ORDINARY[Math.floor(rand() * ORDINARY.length)])
  return f32FromBits(bits, shape)
}

const W = WASM_RUNTIME
const UNARY = ['Identity', 'Neg', 'Relu', 'Square', 'Sqrt', 'Exp', 'Log', 'Abs']
const BINARY = ['Add', 'Sub', 'Multiply', 'RealDiv', 'Maximum', 'Minimum']
const covered = new Set<string>()
let checked = 0
function run (kernel: string, names: string[], inputs: TensorData[], attrs: Record<string, unknown> = {}): number {
  covered.add(kernel)
  const n = check(W, kernel, names, inputs, attrs, Infinity)
  checked += n
  return n
}

describe('special values: reference bits = wasm backend bits', () => {
  // the refusals counted are this file's (ref-check.ts's map outlives a file where files share a fork)
  beforeAll(async () => { await initBackend('wasm'); refusedAmbiguousNaN.clear() })

  it('unary kernels on every special value', () => {
    const x = f32FromBits(SPECIAL)
    for (const k of UNARY) expect(run(k, ['x'], [x])).toBe(N)
    run('Reshape', ['x'], [x], { shape: [2, N / 2] })
    for (const alpha of [0, 0.2, -0.5]) run('Step', ['x'], [x], { alpha })
    for (const dtype of ['float32', 'int32', 'bool']) run('Cast', ['x'], [x], { dtype })
  })

  it('binary kernels on every pair, same shape and broadcast both ways', () => {
    const a: number[] = []; const b: number[] = []
    for (const p of SPECIAL) for (const q of SPECIAL) { a.push(p); b.push(q) }
    const A = f32FromBits(a, [N, N]); const B = f32FromBits(b, [N, N])
    const col = f32FromBits(SPECIAL, [N, 1]); const row = f32FromBits(SPECIAL, [1, N]); const vec = f32FromBits(SPECIAL, [N])
    for (const k of BINARY) {
      expect(run(k, ['a', 'b'], [A, B])).toBe(N * N)
      for (const s of SPECIAL) {
        const sc = f32FromBits([s], []); const one = f32FromBits([s], [1])
        run(k, ['a', 'b'], [vec, sc]); run(k, ['a', 'b'], [sc, vec]); run(k, ['a', 'b'], [one, vec]); run(k, ['a', 'b'], [vec, one])
        run(k, ['a', 'b'], [sc, f32FromBits([SPECIAL[(s + 3) % N]], [])])
      }
      run(k, ['a', 'b'], [col, row]); run(k, ['a', 'b'], [row, col]); run(k, ['a', 'b'], [col, A]); run(k, ['a', 'b'], [A, col]); run(k, ['a', 'b'], [row, A]); run(k, ['a', 'b'], [A, row])
      run(k, ['a', 'b'], [f32FromBits(SPECIAL, [2, 1, N / 2]), f32FromBits([...SPECIAL, ...SPECIAL, ...SPECIAL], [2, 3, N / 2])])
    }
  })

  it('reductions over rows and columns with specials', () => {
    for (const share of [0.1, 0.3, 1]) {
      const x = mixed([12, 9], share)
      for (const axis of [[1], [0]]) {
        run('Sum', ['x'], [x], { axis, keepDims: false }); run('Mean', ['x'], [x], { axis, keepDims: false })
        run('Max', ['x'], [x], { reductionIndices: axis, keepDims: false }); run('Min', ['x'], [x], { axis, keepDims: false })
      }
    }
    // every ordered pair of specials as a 2-element row
    const a: number[] = []
    for (const p of SPECIAL) for (const q of SPECIAL) a.push(p, q)
    const pairs = f32FromBits(a, [N * N, 2])
    run('Sum', ['x'], [pairs], { axis: [1] }); run('Mean', ['x'], [pairs], { axis: [1] })
    run('Max', ['x'], [pairs], { reductionIndices: [1] }); run('Min', ['x'], [pairs], { axis: [1] })
  })

  it('BatchMatMul and _FusedMatMul (both paths, bias, relu) with specials', () => {
    for (const K of [3, 50]) {
      for (const [ta, tb] of [[false, false], [true, false], [false, true], [true, true]] as const) {
        for (const share of [0.05, 0.3]) {
          const a = mixed(ta ? [1, K, 4] : [1, 4, K], share); const b = mixed(tb ? [1, 5, K] : [1, K, 5], share)
          run('BatchMatMul', ['a', 'b'], [a, b], { transposeA: ta, transposeB: tb })
          if (!ta && !tb) {
            for (const activation of ['relu', 'linear']) run('_FusedMatMul', ['a', 'b', 'bias'], [a, b, mixed([5], 0.5)], { transposeA: false, transposeB: false, activation, leakyreluAlpha: 0.2 })
            run('_FusedMatMul', ['a', 'b'], [a, b], { transposeA: false, transposeB: false, activation: 'relu', leakyreluAlpha: 0.2 })
          }
        }
      }
    }
    run('BatchMatMul', ['a', 'b'], [mixed([2, 3, 60], 0.1), mixed([2, 60, 4], 0.1)], { transposeA: false, transposeB: false })
    // relu on tfjs's own blocked path clamps after every block of 48 and keeps NaN and -0
    for (const K of [30, 100, 130]) {
      for (const share of [0, 0.02, 0.2]) {
        run('_FusedMatMul', ['a', 'b'], [mixed([1, K, 6], share), mixed([1, K, 7], share)], { transposeA: true, transposeB: false, activation: 'relu' })
        run('_FusedMatMul', ['a', 'b'], [mixed([2, 6, K], share), mixed([2, K, 7], share)], { transposeA: false, transposeB: false, activation: 'relu' })
      }
    }
    // more tiles of the micro-kernels: M and N beyond one 4x8 tile, K with a remainder
    run('BatchMatMul', ['a', 'b'], [mixed([1, 9, 13], 0.1), mixed([1, 13, 19], 0.1)], { transposeA: false, transposeB: false })
    run('_FusedMatMul', ['a', 'b', 'bias'], [mixed([1, 9, 13], 0.1), mixed([1, 13, 19], 0.1), mixed([19], 0.3)], { transposeA: false, transposeB: false, activation: 'linear' })
    run('BatchMatMul', ['a', 'b'], [mixed([1, 13, 9], 0.1), mixed([1, 19, 13], 0.1)], { transposeA: true, transposeB: true })
  })

  it('conv and pool kernels with specials', () => {
    for (const [pad, st] of [['valid', 1], ['same', 2]] as const) {
      for (const share of [0.05, 0.3]) {
        const x = mixed([2, 6, 5, 3], share); const w = mixed([3, 3, 3, 4], share)
        run('Conv2D', ['x', 'filter'], [x, w], { strides: [st, st], pad, dataFormat: 'NHWC', dilations: [1, 1] })
        run('MaxPool', ['x'], [x], { filterSize: [2, 2], strides: [st, st], pad })
        const y = runBackend('MaxPool', ['x'], [x], { filterSize: [2, 2], strides: [st, st], pad })
        run('MaxPoolGrad', ['dy', 'input', 'output'], [mixed(y.shape, share), x, y], { filterSize: [2, 2], strides: [st, st], pad })
        const o = runBackend('Conv2D', ['x', 'filter'], [x, w], { strides: [st, st], pad, dataFormat: 'NHWC', dilations: [1, 1] })
        run('Conv2DBackpropInput', ['dy', 'filter'], [mixed(o.shape, share), w], { strides: [st, st], pad, dataFormat: 'NHWC', inputShape: x.shape })
        run('Conv2DBackpropFilter', ['x', 'dy'], [x, mixed(o.shape, share)], { strides: [st, st], pad, dataFormat: 'NHWC', filterShape: [3, 3, 3, 4] })
      }
    }
  })

  it('max pooling: 3x3 (one full pass), 4x4 (two passes) and padded windows with specials', () => {
    for (const share of [0.1, 0.4]) {
      const x = mixed([1, 7, 7, 5], share)
      for (const [k, st, pad] of [[3, 1, 'valid'], [3, 2, 'same'], [4, 1, 'valid'], [4, 3, 'same'], [2, 2, 'same']] as const) {
        run('MaxPool', ['x'], [x], { filterSize: [k, k], strides: [st, st], pad })
        const y = runBackend('MaxPool', ['x'], [x], { filterSize: [k, k], strides: [st, st], pad })
        run('MaxPoolGrad', ['dy', 'input', 'output'], [mixed(y.shape, share), x, y], { filterSize: [k, k], strides: [st, st], pad })
      }
    }
  })

  it('Transpose (every permutation of rank 2-4) on specials, float32 and int32', () => {
    const perms = (n: number): number[][] => n === 1
      ? [[0]]
      : perms(n - 1).flatMap(p => Array.from({ length: n }, (_, i) => [...p.slice(0, i), n - 1, ...p.slice(i)]))
    for (const shape of [[N / 2, 2], [2, 5, 2], [2, 1, 5, 2]]) {
      const x = f32FromBits(SPECIAL, shape)
      const ints: TensorData = { shape, dtype: 'int32', values: Int32Array.from(SPECIAL.map(b => b | 0)) }
      for (const perm of perms(shape.length)) { expect(run('Transpose', ['x'], [x], { perm })).toBe(N); run('Transpose', ['x'], [ints], { perm }) }
    }
  })

  it('long reductions with specials', () => {
    const x = mixed([4, 300], 0.02)
    run('Sum', ['x'], [x], { axis: [1] }); run('Mean', ['x'], [x], { axis: [1] })
    run('Max', ['x'], [x], { reductionIndices: [1] }); run('Min', ['x'], [x], { axis: [1] })
    const c = mixed([300, 4], 0.02)
    run('Sum', ['x'], [c], { axis: [0] }); run('Max', ['x'], [c], { reductionIndices: [0] })
  })

  it('refusals are only for two different NaNs meeting in an accumulation, and rare', () => {
    expect(refusedAmbiguousNaN.size).toBeGreaterThan(0) // the corpus does reach them
    const accumulating = new Set(['BatchMatMul', '_FusedMatMul', 'Conv2D', 'Conv2DBackpropInput', 'MaxPoolGrad'])
    expect([...refusedAmbiguousNaN.keys()].filter(k => !accumulating.has(k))).toEqual([])
    const refused = [...refusedAmbiguousNaN.values()].reduce((a, b) => a + b, 0)
    console.log(`compared ${checked} elements; refused (two NaNs meeting): ${JSON.stringify(Object.fromEntries(refusedAmbiguousNaN))}`)
    expect(refused).toBeLessThan(checked / 20)
  })

  it('covers every kernel of the wasm reference table', () => {
    expect(supportedKernels(W).filter(k => !covered.has(k))).toEqual([])
  })
})

describe('special values on the cpu runtime: reference bits = cpu backend bits, NaNs refused', () => {
  it('binary kernels on every pair, unary kernels, BatchMatMul', async () => {
    await initBackend('wasm')
    // one tfjs engine per process: switch it to cpu for this test and back
    await tf.setBackend('cpu')
    try {
      refusedAmbiguousNaN.clear()
      const a: number[] = []; const b: number[] = []
      for (const p of SPECIAL) for (const q of SPECIAL) { a.push(p); b.push(q) }
      const A = f32FromBits(a, [N, N]); const B = f32FromBits(b, [N, N])
      let compared = 0
      for (const k of BINARY) compared += check(CPU_RUNTIME, k, ['a', 'b'], [A, B], {}, Infinity)
      for (const k of ['Identity', 'Neg', 'Relu']) compared += check(CPU_RUNTIME, k, ['x'], [f32FromBits(SPECIAL)], {}, Infinity)
      compared += check(CPU_RUNTIME, 'Reshape', ['x'], [f32FromBits(SPECIAL)], { shape: [N] }, Infinity)
      for (const share of [0.05, 0.3]) compared += check(CPU_RUNTIME, 'BatchMatMul', ['a', 'b'], [mixed([1, 6, 50], share), mixed([1, 50, 7], share)], { transposeA: false, transposeB: false }, Infinity)
      // the refusals are the NaN results (checkOp accepts one only where the backend gives a NaN)
      expect(compared).toBeGreaterThan(6 * N * N / 2)
      expect(refusedAmbiguousNaN.size).toBeGreaterThan(0)
    } finally {
      await tf.setBackend('wasm')
    }
  })
})
