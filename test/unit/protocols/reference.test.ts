import { beforeAll, describe, expect, it } from 'vitest'
import * as tf from '@tensorflow/tfjs'
import { proveSlice, sliceBytes, valuesFromBytes, verifySlice, commitTensor, type TensorData, type TypedValues } from '../../../protocols/commit/index.js'
import { CPU_RUNTIME, WASM_RUNTIME, newProgram } from '../../../protocols/program/index.js'
import { buildElementClaim, checkElementClaim } from '../../../protocols/reference/claim.js'
import { computeElement, computeElementBits, elementOperands, opShapeOf, supportsElement, type OpShape } from '../../../protocols/reference/index.js'
import { UNARY_BITS } from '../../../protocols/reference/elementwise.js'
import { STATE_PSEUDO_KERNEL } from '../../../protocols/tape/index.js'
import { initBackend } from '../../../node/train/backend.js'
import { datasetRef, syntheticDataset } from '../../../node/train/dataset.js'
import { Trainer } from '../../../node/train/trainer.js'
import { tapeStep } from '../../../node/train/tape-recorder.js'
import { bitsAt, check as sharedCheck, checkOp as sharedCheckOp, hex, runBackend } from './ref-check.js'

// Every element reference is checked against the wasm backend bit for bit,
// on random shapes and on every op of real recorded training steps.

let rngState = 12345
function rand (): number { rngState = (Math.imul(rngState, 1664525) + 1013904223) >>> 0; return rngState / 2 ** 32 }
function randn (shape: number[], scale = 2, specials = true): TensorData {
  const n = shape.reduce((a, b) => a * b, 1)
  const v = new Float32Array(n)
  for (let i = 0; i < n; i++) v[i] = (rand() - 0.5) * 2 * scale
  if (specials && n > 4) { v[0] = -0; v[1] = 0; v[2] = 1e-30; v[3] = -1e-30 }
  return { shape, dtype: 'float32', values: v }
}

function checkOp (
  runtime: string, op: OpShape, inputs: TensorData[], out: TypedValues, limit = 400
): number { return sharedCheckOp(runtime, op, inputs, out, limit) }
function check (
  kernel: string, names: string[], inputs: TensorData[], attrs: Record<string, unknown> = {}, runtime = WASM_RUNTIME
): number { return sharedCheck(runtime, kernel, names, inputs, attrs) }

describe('element references vs the wasm backend', () => {
  beforeAll(async () => { await initBackend('wasm') })

  it('expf and logf equal the backend on a sweep of float32 values', () => {
    const xs: number[] = [0, -0, 1, -1, 88.7, 88.72283172607422, 88.73, -87, -103.9, -104, -150, 1e-40, -1e-40, Infinity, -Infinity, NaN, 0.5, 2, 10, 1e-8]
    for (let i = 0; i < 20000; i++) xs.push((rand() - 0.5) * 200)
    const v = new Float32Array(xs.length + 5000)
    v.set(xs)
    // random bit patterns written as bits (a number would quieten signalling NaNs)
    const vb0 = new Uint32Array(v.buffer)
    for (let i = xs.length; i < v.length; i++) vb0[i] = Math.floor(rand() * 2 ** 32)
    const t = tf.tensor(v)
    const e = tf.exp(t).dataSync() as Float32Array; const l = tf.log(t).dataSync() as Float32Array
    t.dispose()
    const vb = new Uint32Array(v.buffer)
    for (let i = 0; i < v.length; i++) {
      // bits, NaNs included: the Exp/Log kernel references wrap expf/logf with the runtime's NaN rules
      const we = UNARY_BITS.Exp(vb[i], {}); const wl = UNARY_BITS.Log(vb[i], {})
      if (we !== bitsAt(e, i)) throw new Error(`Exp(${hex(vb[i])}) = ${hex(we)}, backend ${hex(bitsAt(e, i))}`)
      if (wl !== bitsAt(l, i)) throw new Error(`Log(${hex(vb[i])}) = ${hex(wl)}, backend ${hex(bitsAt(l, i))}`)
    }
  })

  it('elementwise kernels with broadcasting', () => {
    const a = randn([6, 7]); const b = randn([7]); const s = randn([]); const c = randn([6, 1])
    for (const k of ['Add', 'Sub', 'Multiply', 'RealDiv', 'Maximum', 'Minimum']) {
      check(k, ['a', 'b'], [a, b]); check(k, ['a', 'b'], [s, a]); check(k, ['a', 'b'], [a, c]); check(k, ['a', 'b'], [a, randn([6, 7])])
    }
    const z1: TensorData = { shape: [4], dtype: 'float32', values: Float32Array.of(0, -0, NaN, 1) }
    const z2: TensorData = { shape: [4], dtype: 'float32', values: Float32Array.of(-0, 0, 2, NaN) }
    for (const k of ['Maximum', 'Minimum', 'Add', 'Multiply']) { check(k, ['a', 'b'], [z1, z2]); check(k, ['a', 'b'], [z2, z1]) }
    check('Add', ['a', 'b'], [randn([6, 1]), a]); check('Multiply', ['a', 'b'], [b, a])
    for (const k of ['Neg', 'Relu', 'Square', 'Identity', 'Exp', 'Log', 'Abs']) check(k, ['x'], [randn([5, 9])])
    const sp: TensorData = { shape: [6], dtype: 'float32', values: Float32Array.of(NaN, -0, 0, Infinity, -Infinity, 1e-45) }
    for (const k of ['Neg', 'Relu', 'Square', 'Identity', 'Exp', 'Log', 'Abs', 'Sqrt']) check(k, ['x'], [sp])
    check('Step', ['x'], [sp], { alpha: 0 })
    check('Sqrt', ['x'], [randn([5, 9])])
    check('Step', ['x'], [randn([4, 8])], { alpha: 0 })
    check('Cast', ['x'], [randn([3, 5])], { dtype: 'float32' })
    check('Reshape', ['x'], [randn([4, 6])], { shape: [2, 12] })
  })

  it('reductions over the last axis or all but the last', () => {
    for (const shape of [[7, 13], [3, 4, 50], [1, 16, 10], [200]]) {
      const x = randn(shape, 3)
      const r = shape.length
      check('Sum', ['x'], [x], { axis: [r - 1], keepDims: false })
      check('Max', ['x'], [x], { reductionIndices: [r - 1], keepDims: true })
      check('Mean', ['x'], [x], { axis: [r - 1], keepDims: false })
      check('Min', ['x'], [x], { axis: [r - 1], keepDims: true })
      if (r > 1) {
        const allButLast = Array.from({ length: r - 1 }, (_, i) => i)
        check('Sum', ['x'], [x], { axis: allButLast, keepDims: false })
        check('Max', ['x'], [x], { reductionIndices: allButLast, keepDims: false })
        check('Min', ['x'], [x], { axis: allButLast, keepDims: false })
      }
    }
    check('Sum', ['x'], [randn([16])], { axis: null, keepDims: false })
  })

  it('BatchMatMul / _FusedMatMul: all transposes, K around the 48-block size, bias and relu', () => {
    for (const K of [1, 5, 47, 48, 49, 100, 130]) {
      const M = 3 + (K % 5); const N = 2 + (K % 7)
      for (const [ta, tb] of [[false, false], [true, false], [false, true], [true, true]] as const) {
        const a = randn(ta ? [K, M] : [M, K], 1); const b = randn(tb ? [N, K] : [K, N], 1)
        check('BatchMatMul', ['a', 'b'], [a, b], { transposeA: ta, transposeB: tb })
        const a3 = { ...a, shape: [1, ...a.shape] }; const b3 = { ...b, shape: [1, ...b.shape] }
        check('BatchMatMul', ['a', 'b'], [a3, b3], { transposeA: ta, transposeB: tb })
        if (!ta && !tb) {
          check('_FusedMatMul', ['a', 'b', 'bias'], [a3, b3, randn([N], 1)], { transposeA: false, transposeB: false, activation: 'relu', leakyreluAlpha: 0.2 })
          check('_FusedMatMul', ['a', 'b', 'bias'], [a3, b3, randn([N], 1)], { transposeA: false, transposeB: false, activation: 'linear', leakyreluAlpha: 0.2 })
        }
      }
    }
    // batch > 1
    const a = randn([3, 4, 60], 1); const b = randn([3, 60, 5], 1)
    check('BatchMatMul', ['a', 'b'], [a, b], { transposeA: false, transposeB: false })
    const at = randn([3, 60, 4], 1)
    check('BatchMatMul', ['a', 'b'], [at, b], { transposeA: true, transposeB: false })
  })

  it('Conv2DBackpropFilter (the kernel this project adds to wasm)', () => {
    const x = randn([2, 9, 8, 3], 1); const dy = randn([2, 7, 6, 4], 1)
    check('Conv2DBackpropFilter', ['x', 'dy'], [x, dy], { strides: [1, 1], pad: 'valid', dataFormat: 'NHWC', filterShape: [3, 3, 3, 4] })
    const dy2 = randn([2, 5, 4, 4], 1)
    check('Conv2DBackpropFilter', ['x', 'dy'], [x, dy2], { strides: [2, 2], pad: 'same', dataFormat: 'NHWC', filterShape: [3, 3, 3, 4] })
  })

  it('cnn kernels: Conv2D, MaxPool, MaxPoolGrad, Conv2DBackpropInput', () => {
    for (const [pad, st] of [['valid', 1], ['same', 2], ['valid', 2]] as const) {
      const x = randn([2, 9, 8, 3], 1); const w = randn([3, 3, 3, 4], 1)
      check('Conv2D', ['x', 'filter'], [x, w], { strides: [st, st], pad, dataFormat: 'NHWC', dilations: [1, 1] })
      check('MaxPool', ['x'], [x], { filterSize: [2, 2], strides: [st, st], pad })
      const y = runBackend('MaxPool', ['x'], [x], { filterSize: [2, 2], strides: [st, st], pad })
      check('MaxPoolGrad', ['dy', 'input', 'output'], [randn(y.shape, 1), x, y], { filterSize: [2, 2], strides: [st, st], pad })
      const o = runBackend('Conv2D', ['x', 'filter'], [x, w], { strides: [st, st], pad, dataFormat: 'NHWC', dilations: [1, 1] })
      check('Conv2DBackpropInput', ['dy', 'filter'], [randn(o.shape, 1), w], { strides: [st, st], pad, dataFormat: 'NHWC', inputShape: x.shape })
    }
  })

  it('operands are provable slices of the committed input tensors', () => {
    const a = randn([5, 60], 1); const b = randn([60, 3], 1)
    const op: OpShape = { kernel: 'BatchMatMul', attrs: { transposeA: false, transposeB: false }, inputs: [{ shape: a.shape, dtype: 'float32' }, { shape: b.shape, dtype: 'float32' }], output: { shape: [5, 3], dtype: 'float32' } }
    const out = runBackend('BatchMatMul', ['a', 'b'], [a, b], op.attrs)
    const refs = elementOperands(WASM_RUNTIME, op, 7)
    const proofs = refs.map(r => proveSlice([a, b][r.input], r.axis, r.index))
    proofs.forEach((p, i) => expect(verifySlice(commitTensor([a, b][refs[i].input]).root, p)).toBe(true))
    expect(computeElementBits(WASM_RUNTIME, op, 7, proofs.map(p => valuesFromBytes('float32', sliceBytes(p))))).toBe(bitsAt(out.values, 7))
    expect(computeElement(WASM_RUNTIME, op, 7, proofs.map(p => valuesFromBytes('float32', sliceBytes(p))))).toBe(out.values[7])
    expect(refs.map(r => r.axis)).toEqual(['row', 'col'])
  })

  it('every op of real MLP SGD and Adam steps has a reference that equals the backend', async () => {
    const ds = syntheticDataset(6, 256, 16)
    for (const optimizer of ['sgd', 'adam'] as const) {
      const t = await Trainer.create(newProgram({ model: 'mlp', dataset: datasetRef(ds), steps: 5, optimizer, batchSize: 64 }), ds)
      t.runStep()
      const tr = tapeStep(t)
      const missing = new Set<string>()
      let total = 0
      for (const e of tr.entries) {
        if (e.kernel === STATE_PSEUDO_KERNEL) continue
        if (!supportsElement(WASM_RUNTIME, e.kernel)) { missing.add(e.kernel); continue }
        const v = tr.values[e.index]
        const op = opShapeOf(e)
        total += checkOp(WASM_RUNTIME, op, v.inputs, v.outputs[0].values, 300)
      }
      expect([...missing]).toEqual([])
      expect(total).toBeGreaterThan(1000)
      t.dispose()
    }
  })

  it('every op of a real cnn SGD step has a reference that equals the backend', async () => {
    const ds = syntheticDataset(7, 64, 8)
    const t = await Trainer.create(newProgram({ model: 'cnn', dataset: datasetRef(ds), steps: 3, optimizer: 'sgd', batchSize: 4 }), ds)
    const tr = tapeStep(t)
    const missing = new Set<string>()
    for (const e of tr.entries) {
      if (e.kernel === STATE_PSEUDO_KERNEL) continue
      if (!supportsElement(WASM_RUNTIME, e.kernel)) { missing.add(e.kernel); continue }
      const v = tr.values[e.index]
      const op: OpShape = {
        kernel: e.kernel, attrs: e.attrs, inputs: v.inputs.map(i => ({ shape: i.shape, dtype: i.dtype })),
        output: { shape: v.outputs[0].shape, dtype: v.outputs[0].dtype }
      }
      checkOp(WASM_RUNTIME, op, v.inputs, v.outputs[0].values, 150)
    }
    expect([...missing]).toEqual([])
    t.dispose()
  })

  it('element claims: built from a real step, checked against the tape entry only', async () => {
    const ds = syntheticDataset(8, 128, 8)
    const t = await Trainer.create(newProgram({ model: 'mlp', dataset: datasetRef(ds), steps: 3, optimizer: 'adam', batchSize: 32 }), ds)
    const tr = tapeStep(t)
    let n = 0
    for (const e of tr.entries) {
      if (!['BatchMatMul', '_FusedMatMul', 'Exp', 'Log', 'Sum', 'Add', 'RealDiv', 'Sqrt'].includes(e.kernel)) continue
      const v = tr.values[e.index]
      const flat = (e.index * 7919) % v.outputs[0].values.length
      const good = buildElementClaim(WASM_RUNTIME, e, v.inputs, flat, bitsAt(v.outputs[0].values, flat))
      expect(checkElementClaim(WASM_RUNTIME, e, good)).toMatchObject({ valid: true })
      const wrong = checkElementClaim(WASM_RUNTIME, e, { ...good, bits: (good.bits ^ 1) >>> 0 })
      expect(wrong.valid).toBe(false); expect(wrong.reason).toMatch(/differs/)
      const bad = { ...good, proofs: good.proofs.map((p, i) => i === 0 ? { ...p, bytes: p.bytes.map((b, j) => j === 0 ? b ^ 1 : b) } : p) }
      const forged = checkElementClaim(WASM_RUNTIME, e, bad)
      expect(forged.valid).toBe(false); expect(forged.reason).toMatch(/does not verify/)
      n++
    }
    expect(n).toBeGreaterThan(40)
    t.dispose()
  })

  it('unsupported cases fail clearly', () => {
    expect(supportsElement(WASM_RUNTIME, 'Softplus')).toBe(false)
    expect(supportsElement('tfjs-node@4.22.0', 'Add')).toBe(false)
    const op: OpShape = { kernel: 'Sum', attrs: { axis: [0, 1] }, inputs: [{ shape: [3, 4], dtype: 'float32' }], output: { shape: [], dtype: 'float32' } }
    expect(() => elementOperands(WASM_RUNTIME, op, 0)).toThrow(/not a single row or column/)
    const fused: OpShape = { kernel: '_FusedMatMul', attrs: { transposeA: true, transposeB: false, activation: 'linear' }, inputs: [{ shape: [4, 2], dtype: 'float32' }, { shape: [4, 3], dtype: 'float32' }, { shape: [3], dtype: 'float32' }], output: { shape: [2, 3], dtype: 'float32' } }
    expect(() => computeElement(WASM_RUNTIME, fused, 0, [new Float32Array(4), new Float32Array(4), new Float32Array(3)])).toThrow(/upstream wasm bias bug/)
    expect(() => elementOperands(WASM_RUNTIME, { ...op, kernel: 'Softplus' }, 0)).toThrow(/no element-level reference/)
    const dw: OpShape = { kernel: 'Conv2D', attrs: { strides: [1, 1], pad: 'valid' }, inputs: [{ shape: [1, 4, 4, 1], dtype: 'float32' }, { shape: [3, 3, 1, 1], dtype: 'float32' }], output: { shape: [1, 2, 2, 1], dtype: 'float32' } }
    expect(() => elementOperands(WASM_RUNTIME, dw, 0)).toThrow(/depthwise kernel/)
    expect(() => elementOperands(WASM_RUNTIME, { kernel: 'Add', attrs: {}, inputs: [{ shape: [2], dtype: 'float32' }, { shape: [2], dtype: 'float32' }], output: { shape: [2], dtype: 'float32' } }, 2)).toThrow(/out of range/)
  })
})

describe('cpu references vs the tfjs cpu backend', () => {
  it('BatchMatMul (48-blocks, float64 inside), binary ops, Relu/Neg', async () => {
    await initBackend('wasm')
    // one tfjs engine per process: switch it to cpu for this test and back
    await tf.setBackend('cpu')
    try {
      for (const K of [3, 47, 48, 49, 100, 130]) {
        for (const [ta, tb] of [[false, false], [true, false], [false, true]] as const) {
          const a = randn(ta ? [K, 4] : [4, K], 1); const b = randn(tb ? [5, K] : [K, 5], 1)
          expect(check('BatchMatMul', ['a', 'b'], [a, b], { transposeA: ta, transposeB: tb }, CPU_RUNTIME)).toBeGreaterThan(0)
          check('BatchMatMul', ['a', 'b'], [{ ...a, shape: [1, ...a.shape] }, { ...b, shape: [1, ...b.shape] }], { transposeA: ta, transposeB: tb }, CPU_RUNTIME)
        }
      }
      const x = randn([6, 7]); const y = randn([7])
      for (const k of ['Add', 'Sub', 'Multiply', 'RealDiv']) check(k, ['a', 'b'], [x, y], {}, CPU_RUNTIME)
      for (const k of ['Relu', 'Neg']) check(k, ['x'], [x], {}, CPU_RUNTIME)
    } finally {
      await tf.setBackend('wasm')
    }
  })
})
