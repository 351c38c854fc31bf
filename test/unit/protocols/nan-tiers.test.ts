import { beforeAll, describe, it } from 'vitest'
import type { TensorData } from '../../../protocols/commit/index.js'
import { WASM_RUNTIME } from '../../../protocols/program/index.js'
import { initBackend } from '../../../node/train/backend.js'
import { check, f32FromBits, runBackend } from './ref-check.js'

// V8 first runs wasm with its baseline compiler (Liftoff) and later swaps in
// optimised code (TurboFan), which may commute an f32 add's operands. The
// modelled NaN orders must hold under both: each case is checked on the first
// calls of this fresh process (vitest forks one per file) and again after
// enough calls for tier-up. (In tfjs's own blocked MatMul and
// Conv2DBackpropInput loops they do change, which is why those are refused.)

const ONE = 0x3f800000; const NA1 = 0x7fc00001; const NA2 = 0xffc00002
const ones = (n: number): number[] => new Array(n).fill(ONE)
function withNaNs (n: number, at: Array<[number, number]>): number[] { const a = ones(n); for (const [i, v] of at) a[i] = v; return a }

interface Case { kernel: string, names: string[], inputs: () => TensorData[], attrs: Record<string, unknown> }
const x5 = f32FromBits(new Array(25).fill(0).map((_, i) => 0x3f800000 + i * 0x10000), [1, 5, 5, 1])
const cases: Case[] = []
for (let j = 1; j < 13; j++) {
  cases.push({ kernel: 'Sum', names: ['x'], inputs: () => [f32FromBits(withNaNs(13, [[0, NA1], [j, NA2]]), [1, 13])], attrs: { axis: [1] } })
  cases.push({ kernel: 'BatchMatMul', names: ['a', 'b'], inputs: () => [f32FromBits(Array.from({ length: 5 }, () => withNaNs(13, [[0, NA1], [j, NA2]])).flat(), [1, 5, 13]), f32FromBits(ones(39), [1, 13, 3])], attrs: { transposeA: false, transposeB: false } })
  cases.push({ kernel: 'Conv2D', names: ['x', 'filter'], inputs: () => [f32FromBits(withNaNs(45, [[0, NA1], [j, NA2]]), [1, 3, 3, 5]), f32FromBits(ones(90), [3, 3, 5, 2])], attrs: { strides: [1, 1], pad: 'valid', dataFormat: 'NHWC', dilations: [1, 1] } })
}
for (const j of [1, 4, 5]) {
  const y = (): TensorData => runBackend('MaxPool', ['x'], [x5], { filterSize: [2, 2], strides: [1, 1], pad: 'valid' })
  cases.push({ kernel: 'MaxPoolGrad', names: ['dy', 'input', 'output'], inputs: () => [f32FromBits(withNaNs(16, [[0, NA1], [j, NA2]]), [1, 4, 4, 1]), x5, y()], attrs: { filterSize: [2, 2], strides: [1, 1], pad: 'valid' } })
}
for (const k of ['Add', 'Sub', 'Multiply', 'RealDiv', 'Maximum', 'Minimum']) {
  cases.push({ kernel: k, names: ['a', 'b'], inputs: () => [f32FromBits([NA1, NA1, ONE, NA1]), f32FromBits([NA2, ONE, NA2, NA2])], attrs: {} })
  cases.push({ kernel: k, names: ['a', 'b'], inputs: () => [f32FromBits([NA1], []), f32FromBits([NA2, ONE, NA2, NA2])], attrs: {} })
}

describe('modelled NaN orders hold before and after V8 tiers the wasm up', () => {
  beforeAll(async () => { await initBackend('wasm') })

  it('first calls (baseline code), then after 300 more calls of every kernel', () => {
    for (const c of cases) check(WASM_RUNTIME, c.kernel, c.names, c.inputs(), c.attrs, Infinity)
    for (let r = 0; r < 300; r++) for (const c of cases) runBackend(c.kernel, c.names, c.inputs(), c.attrs)
    for (const c of cases) check(WASM_RUNTIME, c.kernel, c.names, c.inputs(), c.attrs, Infinity)
  })
})
