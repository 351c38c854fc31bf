import * as tf from '@tensorflow/tfjs'
import { beforeAll, describe, expect, it } from 'vitest'
import type { TensorData } from '../../../protocols/commit/index.js'
import { WASM_PSK_RUNTIME, newProgram } from '../../../protocols/program/index.js'
import { buildElementClaim, checkElementClaim } from '../../../protocols/reference/claim.js'
import { CANONICAL_NAN, convPads, opShapeOf, supportsElement, type ConvGeom, type OpShape } from '../../../protocols/reference/index.js'
import { STATE_PSEUDO_KERNEL } from '../../../protocols/tape/index.js'
import { initBackend } from '../../../node/train/backend.js'
import { datasetRef, syntheticDataset } from '../../../node/train/dataset.js'
import { ELEMENTWISE_BINARY, ELEMENTWISE_UNARY, wasmElementwiseKernel } from '../../../node/train/psk-elementwise.js'
import { JS_IMPL, loadNative, type PskImpl } from '../../../node/train/psk-native.js'
import { Trainer } from '../../../node/train/trainer.js'
import { tapeStep } from '../../../node/train/tape-recorder.js'
import { bitsAt, check, checkOp, hex, runBackend } from './ref-check.js'

// psk1 (tfjs-wasm@4.22.0-simd+psk1): the native kernels on 1 and 2 threads,
// the JavaScript kernels and the element references give the same bits, on
// random shapes (transposes, odd sizes, batches) with special values mixed in,
// and on every op of real training steps on the backend.

let rngState = 987654321
function rand (): number { rngState = (Math.imul(rngState, 1664525) + 1013904223) >>> 0; return rngState / 2 ** 32 }
const int = (lo: number, hi: number): number => lo + Math.floor(rand() * (hi - lo + 1))

/** ±0, subnormals, min normal, ±1, max, ±Inf, NaNs with sign and payload (signalling too), as bits */
const SPECIALS = [
  0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007fffff, 0x807fffff, 0x00800000, 0x3f800000, 0xbf800000,
  0x7f7fffff, 0xff7fffff, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000, 0x7fc01234, 0xffc00001, 0x7f800001, 0xff812345
]

/** random values, a fraction `special` of them special values (written as bits) */
function tensor (shape: number[], special: number, scale = 1): TensorData {
  const n = shape.reduce((a, b) => a * b, 1)
  const v = new Float32Array(n); const u = new Uint32Array(v.buffer)
  for (let i = 0; i < n; i++) {
    if (rand() < special) u[i] = SPECIALS[int(0, SPECIALS.length - 1)]
    else v[i] = (rand() - 0.5) * 2 * scale * (rand() < 0.05 ? 1e-38 : 1) // a few subnormal-range products
  }
  return { shape, dtype: 'float32', values: v }
}

const bitsOfArray = (v: Float32Array): Uint32Array => new Uint32Array(v.buffer, v.byteOffset, v.length)
function sameBits (a: Float32Array, b: Float32Array, what: string): void {
  const ua = bitsOfArray(a); const ub = bitsOfArray(b)
  expect(ua.length).toBe(ub.length)
  for (let i = 0; i < ua.length; i++) if (ua[i] !== ub[i]) throw new Error(`${what}: element ${i} ${hex(ua[i])} != ${hex(ub[i])}`)
}
/** every NaN a psk1 kernel writes is the canonical one */
function canonical (v: Float32Array, what: string): number {
  let nans = 0
  for (const u of bitsOfArray(v)) if ((u & 0x7fffffff) > 0x7f800000) { nans++; if (u !== CANONICAL_NAN) throw new Error(`${what}: NaN ${hex(u)}`) }
  return nans
}

let impls: PskImpl[] = []
beforeAll(() => {
  const one = loadNative(1); const two = loadNative(2)
  // the addon is built by npm ci (scripts/build-kernels.mjs): its absence is a failure here
  if ('error' in one || 'error' in two) throw new Error(`the psk1 addon does not load: ${'error' in one ? one.error : ''}`)
  expect(two.threads).toBe(2)
  // an unoptimised build gives the same bits 4x slower: the build must not lose -O3
  expect(one.optimized).toBe(true)
  impls = [{ ...one, why: 'native 1' }, { ...two, why: 'native 2' }, { ...JS_IMPL, why: 'js' }]
})

function outputs (run: (impl: PskImpl, out: Float32Array) => void, n: number, what: string): Float32Array {
  const outs = impls.map(impl => { const o = new Float32Array(n).fill(123); run(impl, o); return o })
  sameBits(outs[0], outs[1], `${what}: native 1 vs 2 threads`)
  sameBits(outs[0], outs[2], `${what}: native vs JS`)
  return outs[0]
}

describe('psk1 kernels: native (1 and 2 threads) == JS == element reference, bit for bit', () => {
  it('MatMul: every transpose, odd and vector-width sizes, batches with broadcasting, bias and relu, special values', () => {
    let nans = 0; let checked = 0
    // [64,128,100] and [80,50,60] are above the size at which the addon splits rows over its 2 threads
    const sizes = [[1, 1, 1], [3, 17, 5], [16, 16, 16], [33, 40, 70], [5, 9, 130], [64, 10, 128], [70, 24, 3], [64, 128, 100], [80, 50, 60]]
    for (let c = 0; c < 28; c++) {
      const [M, N, K] = c < sizes.length ? sizes[c] : [int(1, 40), int(1, 40), int(1, 90)]
      const ta = rand() < 0.5; const tb = rand() < 0.5
      const [aB, bB] = [[1, 1], [3, 3], [3, 1], [1, 2]][c % 4]
      const batchShape = (n: number): number[] => c % 4 === 0 && c % 8 === 0 ? [] : [n]
      const special = c % 3 === 0 ? 0 : 0.04
      const a = tensor([...batchShape(aB), ...(ta ? [K, M] : [M, K])], special)
      const b = tensor([...batchShape(bB), ...(tb ? [N, K] : [K, N])], special)
      const bias = c % 5 === 1 ? tensor([N], special) : c % 5 === 2 ? tensor([1], special) : undefined
      const relu = c % 2 === 1
      const batch = Math.max(aB, bB)
      const d = { batch, aBatch: aB, bBatch: bB, M, N, K, ta, tb, relu }
      const out = outputs((impl, o) => impl.matmul(a.values as Float32Array, b.values as Float32Array, o, d, bias?.values as Float32Array | undefined), batch * M * N, `matmul ${JSON.stringify(d)}`)
      nans += canonical(out, 'matmul')
      const kernel = bias !== undefined || relu ? '_FusedMatMul' : 'BatchMatMul'
      const outShape = [...(a.shape.length > 2 || b.shape.length > 2 ? [batch] : []), M, N]
      const op: OpShape = { kernel, attrs: { transposeA: ta, transposeB: tb, ...(kernel === '_FusedMatMul' ? { activation: relu ? 'relu' : 'linear' } : {}) }, inputs: [a, b, ...(bias !== undefined ? [bias] : [])].map(t => ({ shape: t.shape, dtype: t.dtype })), output: { shape: outShape, dtype: 'float32' } }
      checked += checkOp(WASM_PSK_RUNTIME, op, [a, b, ...(bias !== undefined ? [bias] : [])], out, 100000)
    }
    expect(nans).toBeGreaterThan(10)
    expect(checked).toBeGreaterThan(5000)
  })

  function geom (B: number, H: number, W: number, CI: number, kh: number, kw: number, CO: number, st: number, pad: 'valid' | 'same'): ConvGeom {
    const p = convPads(H, W, kh, kw, [st, st], pad)
    return { B, H, W, CI, kh, kw, CO, OH: p.outH, OW: p.outW, sh: st, sw: st, padTop: p.padTop, padLeft: p.padLeft }
  }
  const convCases = (): Array<{ g: ConvGeom, pad: 'valid' | 'same', st: number }> => {
    const out = []
    const fixed: Array<[number, number, number, number, number, number, number, number, 'valid' | 'same']> = [[2, 9, 8, 1, 3, 3, 8, 1, 'valid'], [2, 9, 9, 8, 3, 3, 16, 1, 'valid'], [1, 7, 6, 3, 3, 3, 4, 2, 'same'], [3, 6, 7, 2, 2, 3, 5, 1, 'same'], [2, 5, 5, 9, 1, 1, 11, 1, 'valid'], [8, 13, 13, 8, 3, 3, 16, 1, 'valid']]
    // the native kernels' blocks: output channels in vectors of 16 and 8 with the rest one by one (CO 16, 24, 40, 17, 25),
    // rows of 24/6/8 pixels across output rows with remainders (W 30), input channels 16 + 8 + rest for backprop input
    // (CI 16, 27), padded borders around interior pixels, strides 2 and 5x5 windows (more pixel classes), and sizes
    // above the addon's 2-thread split with the filter's rows split inside a tap (K 27, CO 17); a 36x36 window gives backprop
    // input more than 64 row classes (their pixels go element by element)
    fixed.push([2, 12, 30, 3, 3, 3, 24, 1, 'same'], [1, 11, 30, 16, 3, 3, 40, 1, 'valid'], [2, 9, 31, 27, 3, 3, 17, 1, 'same'], [2, 14, 13, 5, 5, 5, 25, 2, 'same'],
      [1, 17, 19, 16, 5, 3, 16, 2, 'valid'], [8, 16, 16, 3, 3, 3, 17, 1, 'valid'], [1, 70, 66, 1, 36, 36, 2, 1, 'valid'], [4, 15, 14, 24, 3, 3, 8, 1, 'same'], [1, 30, 7, 1, 3, 3, 32, 1, 'same'])
    for (const [B, H, W, CI, kh, kw, CO, st, pad] of fixed) out.push({ g: geom(B, H, W, CI, kh, kw, CO, st, pad), pad, st })
    for (let c = 0; c < 8; c++) {
      const pad = rand() < 0.5 ? 'valid' as const : 'same' as const; const st = int(1, 2)
      const kh = int(1, 3); const kw = int(1, 3)
      out.push({ g: geom(int(1, 3), int(kh, 9), int(kw, 9), int(1, 10), kh, kw, int(1, 17), st, pad), pad, st })
    }
    return out
  }

  it('Conv2D, Conv2DBackpropInput, Conv2DBackpropFilter: strides, padding, odd channel counts, special values', () => {
    let nans = 0; let checked = 0
    for (const [n, { g, pad, st }] of convCases().entries()) {
      const special = n % 2 === 0 ? 0.03 : 0
      const x = tensor([g.B, g.H, g.W, g.CI], special); const w = tensor([g.kh, g.kw, g.CI, g.CO], special); const dy = tensor([g.B, g.OH, g.OW, g.CO], special)
      const attrs = { strides: [st, st], pad, dataFormat: 'NHWC', dilations: [1, 1] }
      const shape = (t: TensorData): { shape: number[], dtype: 'float32' } => ({ shape: t.shape, dtype: 'float32' })
      const y = outputs((impl, o) => impl.conv2d(x.values as Float32Array, w.values as Float32Array, o, g), g.B * g.OH * g.OW * g.CO, `conv2d ${JSON.stringify(g)}`)
      checked += checkOp(WASM_PSK_RUNTIME, { kernel: 'Conv2D', attrs, inputs: [shape(x), shape(w)], output: { shape: [g.B, g.OH, g.OW, g.CO], dtype: 'float32' } }, [x, w], y, 100000)
      const dx = outputs((impl, o) => impl.conv2dBackpropInput(dy.values as Float32Array, w.values as Float32Array, o, g), g.B * g.H * g.W * g.CI, `backprop input ${JSON.stringify(g)}`)
      checked += checkOp(WASM_PSK_RUNTIME, { kernel: 'Conv2DBackpropInput', attrs: { ...attrs, inputShape: x.shape }, inputs: [shape(dy), shape(w)], output: { shape: x.shape, dtype: 'float32' } }, [dy, w], dx, 100000)
      const dw = outputs((impl, o) => impl.conv2dBackpropFilter(x.values as Float32Array, dy.values as Float32Array, o, g), g.kh * g.kw * g.CI * g.CO, `backprop filter ${JSON.stringify(g)}`)
      checked += checkOp(WASM_PSK_RUNTIME, { kernel: 'Conv2DBackpropFilter', attrs: { ...attrs, filterShape: w.shape }, inputs: [shape(x), shape(dy)], output: { shape: w.shape, dtype: 'float32' } }, [x, dy], dw, 100000)
      nans += canonical(y, 'conv2d') + canonical(dx, 'backprop input') + canonical(dw, 'backprop filter')
    }
    expect(nans).toBeGreaterThan(10)
    expect(checked).toBeGreaterThan(3000)
  })

  it('MaxPoolGrad: windows 2x2 and 3x3, strides, padding, ties and NaNs in windows', () => {
    let checked = 0
    // windows apart and tiling (written once, no separate zeroing) with uncovered rows and columns, overlapping, with
    // channels in vectors of 8 and one by one (C 12), above the 2-thread split (channels split over the threads), and
    // 9x9 windows (more than 64 taps: scanned in place)
    for (const [B, H, W, C, k, st, pad] of [[16, 26, 26, 8, 2, 2, 'valid'], [2, 8, 8, 3, 2, 2, 'valid'], [1, 7, 5, 8, 2, 2, 'same'], [2, 6, 6, 4, 3, 1, 'valid'], [1, 5, 7, 2, 3, 2, 'same'],
      [3, 11, 9, 16, 2, 2, 'valid'], [2, 7, 9, 12, 2, 2, 'same'], [2, 9, 8, 8, 2, 3, 'valid'], [32, 26, 26, 16, 2, 2, 'valid'], [12, 11, 11, 24, 2, 2, 'valid'],
      [1, 12, 11, 9, 9, 3, 'same']] as const) {
      const p = convPads(H, W, k, k, [st, st], pad)
      const g: ConvGeom = { B, H, W, CI: C, kh: k, kw: k, CO: C, OH: p.outH, OW: p.outW, sh: st, sw: st, padTop: p.padTop, padLeft: p.padLeft }
      const x = tensor([B, H, W, C], 0.1)
      // ties: some windows hold equal values
      const xv = x.values as Float32Array
      for (let i = 0; i + 1 < xv.length; i += 7) xv[i + 1] = xv[i]
      const dy = tensor([B, p.outH, p.outW, C], 0.03)
      const dx = outputs((impl, o) => impl.maxPoolGrad(dy.values as Float32Array, xv, o, g), B * H * W * C, `maxpool grad ${JSON.stringify(g)}`)
      canonical(dx, 'maxpool grad')
      const yShape = { shape: [B, p.outH, p.outW, C], dtype: 'float32' as const }
      checked += checkOp(WASM_PSK_RUNTIME, { kernel: 'MaxPoolGrad', attrs: { filterSize: [k, k], strides: [st, st], pad }, inputs: [{ shape: dy.shape, dtype: 'float32' }, { shape: x.shape, dtype: 'float32' }, yShape], output: { shape: x.shape, dtype: 'float32' } }, [dy, x, { ...yShape, values: new Float32Array(B * p.outH * p.outW * C) }], dx, 100000)
    }
    expect(checked).toBeGreaterThan(500)
  })

  it('a NaN output is the canonical 0x7fc00000 whatever NaNs went in; Inf - Inf inside a sum gives it too', () => {
    const d = { batch: 1, aBatch: 1, bBatch: 1, M: 1, N: 3, K: 2, ta: false, tb: false, relu: false }
    const a = new Float32Array(new Uint32Array([0x3f800000, 0x3f800000]).buffer)
    const b = new Float32Array(new Uint32Array([0xffc01234, 0x7f800000, 0x80000000, 0x7f800001, 0xff800000, 0x80000000]).buffer) // [[-NaN', Inf, -0], [sNaN, -Inf, -0]]
    const out = outputs((impl, o) => impl.matmul(a, b, o, d), 3, 'nan matmul')
    expect([...bitsOfArray(out)].map(hex)).toEqual([hex(CANONICAL_NAN), hex(CANONICAL_NAN), hex(0)]) // -0 + -0 from +0 is +0
  })
})

describe('psk1 on the tfjs wasm backend', () => {
  beforeAll(async () => { await initBackend('wasm', WASM_PSK_RUNTIME) })

  it('the backend runs the psk1 kernels: each equals its reference', () => {
    const a = tensor([2, 5, 60], 0.02); const b = tensor([2, 60, 7], 0.02)
    expect(check(WASM_PSK_RUNTIME, 'BatchMatMul', ['a', 'b'], [a, b], { transposeA: false, transposeB: false })).toBeGreaterThan(50)
    expect(check(WASM_PSK_RUNTIME, 'BatchMatMul', ['a', 'b'], [tensor([60, 5], 0), tensor([7, 60], 0)], { transposeA: true, transposeB: true })).toBeGreaterThan(30)
    expect(check(WASM_PSK_RUNTIME, '_FusedMatMul', ['a', 'b', 'bias'], [tensor([1, 9, 33], 0.02), tensor([1, 33, 20], 0.02), tensor([20], 0)], { transposeA: false, transposeB: false, activation: 'relu' })).toBeGreaterThan(100)
    const x = tensor([2, 9, 8, 3], 0.02); const w = tensor([3, 3, 3, 8], 0.02); const dy = tensor([2, 7, 6, 8], 0.02)
    check(WASM_PSK_RUNTIME, 'Conv2D', ['x', 'filter'], [x, w], { strides: [1, 1], pad: 'valid', dataFormat: 'NHWC', dilations: [1, 1] })
    check(WASM_PSK_RUNTIME, 'Conv2DBackpropInput', ['dy', 'filter'], [dy, w], { strides: [1, 1], pad: 'valid', dataFormat: 'NHWC', inputShape: x.shape })
    check(WASM_PSK_RUNTIME, 'Conv2DBackpropFilter', ['x', 'dy'], [x, dy], { strides: [1, 1], pad: 'valid', dataFormat: 'NHWC', filterShape: w.shape })
    check(WASM_PSK_RUNTIME, 'MaxPoolGrad', ['dy', 'input', 'output'], [tensor([2, 4, 4, 3], 0), tensor([2, 9, 8, 3], 0), tensor([2, 4, 4, 3], 0)], { filterSize: [2, 2], strides: [2, 2], pad: 'valid' })
  })

  it('Sum over every axis but the last (bias gradients) is native with tfjs-wasm Sum\'s bits, NaNs included', () => {
    const native = loadNative(1)
    if ('error' in native || native.sumCols === undefined) throw new Error('the psk1 addon has no sumCols')
    let checked = 0
    // columns in vectors of 16 and 8 and one by one; a column with Inf and -Inf before any NaN (x86's default NaN),
    // columns whose first NaN has a payload or a sign, NaNs only in later rows
    for (const shape of [[3, 7, 5, 8], [2, 4, 3, 16], [5, 25], [9, 3, 19], [4, 1], [6, 2, 3, 40], [64, 26, 26, 8]]) {
      const x = tensor(shape, shape[0] === 64 ? 0.0001 : 0.05)
      const u = new Uint32Array((x.values as Float32Array).buffer)
      const C = shape[shape.length - 1]
      if (u.length > 2 * C) { u[0] = 0x7f800000; u[C] = 0xff800000; u[u.length - 1] = 0xffc01234 }
      const rank = shape.length
      const axis = Array.from({ length: rank - 1 }, (_, i) => i)
      const out = runBackend('Sum', ['x'], [x], { axis, keepDims: false })
      // the wasm kernel itself: the same sums over the innermost axes of the transposed tensor (no native path)
      const xt = tf.tensor(x.values as Float32Array, shape).transpose([rank - 1, ...axis])
      const wasm = tf.engine().runKernel('Sum', { x: xt }, { axis: axis.map(a => a + 1), keepDims: false }) as tf.Tensor
      const direct = new Float32Array(C)
      native.sumCols(x.values as Float32Array, direct, u.length / C, C)
      sameBits(out.values as Float32Array, wasm.dataSync() as Float32Array, `Sum ${JSON.stringify(shape)}: backend vs the wasm kernel`)
      sameBits(direct, wasm.dataSync() as Float32Array, `Sum ${JSON.stringify(shape)}: native vs the wasm kernel`)
      xt.dispose(); wasm.dispose()
      checked += checkOp(WASM_PSK_RUNTIME, { kernel: 'Sum', attrs: { axis, keepDims: false }, inputs: [{ shape, dtype: 'float32' }], output: { shape: [C], dtype: 'float32' } }, [x], out.values, 1000)
      expect(runBackend('Sum', ['x'], [x], { axis, keepDims: true }).shape).toEqual([...axis.map(() => 1), C])
    }
    expect(checked).toBeGreaterThan(100)
  })

  it('tfjs-wasm\'s elementwise kernels run natively with its bits: every broadcast, special values, NaN op NaN', () => {
    const native = loadNative(1)
    if ('error' in native || native.binary === undefined || native.unary === undefined) throw new Error('the psk1 addon has no elementwise kernels')
    /** runs `kernel` with tfjs-wasm's own kernel function in place of the native one */
    const wasmRun = (kernel: string, names: string[], inputs: TensorData[], attrs: Record<string, unknown>): TensorData => {
      const cfg = tf.getKernel(kernel, 'wasm'); const own = wasmElementwiseKernel(kernel)
      if (cfg === undefined || own === undefined) throw new Error(`${kernel}: no native kernel registered over the wasm one`)
      tf.unregisterKernel(kernel, 'wasm'); tf.registerKernel({ ...cfg, kernelFunc: own })
      try { return runBackend(kernel, names, inputs, attrs) } finally { tf.unregisterKernel(kernel, 'wasm'); tf.registerKernel(cfg) }
    }
    const crossed = (f: (i: number) => number): TensorData => ({ shape: [SPECIALS.length ** 2], dtype: 'float32', values: new Float32Array(Uint32Array.from({ length: SPECIALS.length ** 2 }, (_, i) => f(i)).buffer) })
    // the same shape, a scalar either side (a scalar a: XNNPACK's swapped operands), rows of 8, 16, 10 over the last
    // axis (leading 1s too), and cases left to the wasm kernel (one element, general broadcasting, a row in a)
    const shapes: Array<[number[], number[]]> = [
      [[64, 26, 26, 8], [8]], [[5, 7, 16], [16]], [[3, 10], [1, 10]], [[37], [37]], [[4, 9], [4, 9]], [[40], []], [[40], [1]], [[], [40]], [[1], [33]],
      [[6, 1], [6, 1]], [[1], [1]], [[2, 3, 1], [1, 3, 4]], [[8], [5, 8]], [[10], [1, 1, 10]], [[3, 200], [200]]
    ]
    let checked = 0
    for (const name of ELEMENTWISE_BINARY) {
      const cases: Array<[TensorData, TensorData]> = [
        [crossed(i => SPECIALS[i % SPECIALS.length]), crossed(i => SPECIALS[Math.floor(i / SPECIALS.length)])],
        ...shapes.map(([a, b]): [TensorData, TensorData] => [tensor(a, 0.2), tensor(b, 0.2)])
      ]
      for (const [a, b] of cases) {
        const what = `${name} [${a.shape.join(',')}] [${b.shape.join(',')}]`
        const got = runBackend(name, ['a', 'b'], [a, b], {})
        const want = wasmRun(name, ['a', 'b'], [a, b], {})
        expect(got.shape, what).toEqual(want.shape)
        sameBits(got.values as Float32Array, want.values as Float32Array, `${what}: backend vs the wasm kernel`)
        checked += check(WASM_PSK_RUNTIME, name, ['a', 'b'], [a, b], {}, 200)
      }
    }
    for (const name of ELEMENTWISE_UNARY) {
      for (const x of [crossed(i => SPECIALS[i % SPECIALS.length]), tensor([1000], 0.2), tensor([64, 26, 26, 8], 0.01), tensor([7], 0.5)]) {
        for (const alpha of name === 'Step' ? [0, 0.3] : [0]) {
          const attrs = name === 'Step' ? { alpha } : {}
          const what = `${name} [${x.shape.join(',')}] ${JSON.stringify(attrs)}`
          const got = runBackend(name, ['x'], [x], attrs)
          sameBits(got.values as Float32Array, wasmRun(name, ['x'], [x], attrs).values as Float32Array, `${what}: backend vs the wasm kernel`)
          // the addon directly: the backend's path above may have been the wasm kernel
          const direct = new Float32Array(got.values.length)
          native.unary(x.values as Float32Array, direct, ELEMENTWISE_UNARY.indexOf(name), alpha)
          sameBits(direct, got.values as Float32Array, `${what}: native vs the backend`)
          checked += check(WASM_PSK_RUNTIME, name, ['x'], [x], attrs, 200)
        }
      }
    }
    // int32 operands stay on the wasm kernels
    const ints: TensorData = { shape: [5], dtype: 'int32', values: Int32Array.of(-3, 0, 7, -1, 2) }
    expect(Array.from(runBackend('Add', ['a', 'b'], [ints, ints], {}).values)).toEqual([-6, 0, 14, -2, 4])
    expect(Array.from(runBackend('Relu', ['x'], [ints], {}).values)).toEqual([0, 0, 7, 0, 2])
    expect(checked).toBeGreaterThan(3000)
  })

  it('every op of real MLP Adam and cnn SGD steps has a reference that equals the backend', async () => {
    for (const [model, optimizer, batchSize] of [['mlp', 'adam', 64], ['cnn', 'sgd', 4]] as const) {
      const ds = syntheticDataset(6, 256, model === 'mlp' ? 16 : 8)
      const t = await Trainer.create(newProgram({ model, dataset: datasetRef(ds), steps: 5, optimizer, batchSize, runtime: WASM_PSK_RUNTIME }), ds)
      t.runStep()
      const tr = tapeStep(t)
      const missing = new Set<string>(); const seen = new Set<string>()
      for (const e of tr.entries) {
        if (e.kernel === STATE_PSEUDO_KERNEL) continue
        if (!supportsElement(WASM_PSK_RUNTIME, e.kernel)) { missing.add(e.kernel); continue }
        seen.add(e.kernel)
        const v = tr.values[e.index]
        checkOp(WASM_PSK_RUNTIME, opShapeOf(e), v.inputs, v.outputs[0].values, 150)
      }
      expect([...missing]).toEqual([])
      for (const k of model === 'mlp' ? ['_FusedMatMul', 'BatchMatMul'] : ['Conv2D', 'Conv2DBackpropFilter', 'Conv2DBackpropInput', 'MaxPoolGrad']) expect(seen.has(k)).toBe(true)
      t.dispose()
    }
  })

  it('element claims on psk1 ops: the honest bits win, a forged element or operand loses', async () => {
    const ds = syntheticDataset(8, 128, 8)
    const t = await Trainer.create(newProgram({ model: 'cnn', dataset: datasetRef(ds), steps: 3, optimizer: 'adam', batchSize: 4, runtime: WASM_PSK_RUNTIME }), ds)
    const tr = tapeStep(t)
    let n = 0
    for (const e of tr.entries) {
      if (!['BatchMatMul', '_FusedMatMul', 'Conv2D', 'Conv2DBackpropInput', 'MaxPoolGrad'].includes(e.kernel)) continue
      const v = tr.values[e.index]
      const flat = (e.index * 7919) % v.outputs[0].values.length
      const good = buildElementClaim(WASM_PSK_RUNTIME, e, v.inputs, flat, bitsAt(v.outputs[0].values, flat))
      expect(checkElementClaim(WASM_PSK_RUNTIME, e, good)).toMatchObject({ valid: true })
      const wrong = checkElementClaim(WASM_PSK_RUNTIME, e, { ...good, bits: (good.bits ^ 1) >>> 0 })
      expect(wrong.valid).toBe(false); expect(wrong.reason).toMatch(/differs/)
      const bad = { ...good, proofs: good.proofs.map((p, i) => i === 0 ? { ...p, bytes: p.bytes.map((b, j) => j === 0 ? b ^ 1 : b) } : p) }
      expect(checkElementClaim(WASM_PSK_RUNTIME, e, bad).valid).toBe(false)
      n++
    }
    expect(n).toBeGreaterThan(4)
    t.dispose()
  })
})
