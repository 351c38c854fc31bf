import type { TypedValues } from '../commit/tensor.js'
import { convPads } from './conv.js'
import { bitsOf } from './f32.js'
import { checkF32, coords, dims, operandsOf, reluOf, vectors } from './matmul.js'
import { POOL_CONV, checkNhwc, conv2dOperands, windowRows } from './pool-conv.js'
import { CANONICAL_NAN } from './psk-kernels.js'
import { checkFlat, unravel } from './shape.js'
import { ReferenceError, type KernelRef, type OpShape } from './types.js'

// Element references of the psk1 kernels (tfjs-wasm@4.22.0-simd+psk1): the
// loops of psk-kernels.ts for one output element. The operands are the same
// rows and columns the tfjs-wasm references read; the value is one sequential
// float32 reduction from +0 (fround after every multiply and add), and a NaN
// result is CANONICAL_NAN whatever the operands' NaN bits.

type Strides = [number, number] | number
type Pad = 'valid' | 'same' | number

function f32 (v: TypedValues): Float32Array {
  if (!(v instanceof Float32Array)) throw new ReferenceError('float32 operand expected')
  return v
}

function result (v: number): number {
  return Number.isNaN(v) ? CANONICAL_NAN : bitsOf(v)
}

function geometry (op: OpShape, xShape: number[], kh: number, kw: number): ReturnType<typeof convPads> {
  const [, H, W] = xShape
  return convPads(H, W, kh, kw, op.attrs.strides as Strides, op.attrs.pad as Pad, op.attrs.dimRoundingMode as string | undefined)
}

const MATMUL: KernelRef = {
  operands: operandsOf,
  computeBits (op, flat, opsIn) {
    checkF32(op)
    const d = dims(op)
    const { b } = coords(op, flat, d)
    const ops = opsIn.map(f32)
    const { a, bv } = vectors(op, d, b, ops)
    let acc = 0
    for (let k = 0; k < d.K; k++) acc = Math.fround(acc + Math.fround(a(k) * bv(k)))
    if (ops.length > 2) acc = Math.fround(acc + (ops[2].length === 1 ? ops[2][0] : ops[2][flat % d.N]))
    if (reluOf(op) && !(acc > 0) && !Number.isNaN(acc)) acc = 0
    return result(acc)
  }
}

const CONV2D: KernelRef = {
  operands (op, flat) {
    checkNhwc(op)
    return conv2dOperands(op, flat)
  },
  computeBits (op, flat, opsIn) {
    checkNhwc(op)
    const ops = opsIn.map(f32)
    const [B, H, W, CI] = op.inputs[0].shape; const [kh, kw] = op.inputs[1].shape
    const [b, oy, ox] = unravel(flat, op.output.shape)
    // windowRows lists the in-image taps in (r, c) order: the kernel's order
    const rows = windowRows(B, H, W, kh, kw, op.attrs.strides as Strides, op.attrs.pad as Pad, b, oy, ox)
    const wcol = ops[ops.length - 1]
    let acc = 0
    rows.forEach((t, n) => {
      const x = ops[n]; const wo = (t.r * kw + t.c) * CI
      for (let ci = 0; ci < CI; ci++) acc = Math.fround(acc + Math.fround(x[ci] * wcol[wo + ci]))
    })
    return result(acc)
  }
}

const CONV2D_BACKPROP_INPUT: KernelRef = {
  // the (dy row, filter row) pairs of the windows covering the pixel, (oy, ox) ascending: the kernel's order
  operands: POOL_CONV.Conv2DBackpropInput.operands,
  computeBits (op, flat, opsIn) {
    checkNhwc(op)
    const ops = opsIn.map(f32)
    const CO = op.inputs[0].shape[3]
    let acc = 0
    for (let t = 0; t + 1 < ops.length; t += 2) {
      const dy = ops[t]; const w = ops[t + 1]
      for (let co = 0; co < CO; co++) acc = Math.fround(acc + Math.fround(dy[co] * w[co]))
    }
    return result(acc)
  }
}

const CONV2D_BACKPROP_FILTER: KernelRef = {
  operands (op, flat) {
    checkNhwc(op); checkFlat(flat, op.output.shape)
    const [, , i, o] = unravel(flat, op.output.shape)
    return [{ input: 0, axis: 'col', index: i }, { input: 1, axis: 'col', index: o }]
  },
  computeBits (op, flat, opsIn) {
    checkNhwc(op)
    const [xCol, dyCol] = opsIn.map(f32)
    const [B, H, W] = op.inputs[0].shape; const [, OH, OW] = op.inputs[1].shape
    const [kh, kw] = op.output.shape
    const [r, c] = unravel(flat, op.output.shape)
    const p = geometry(op, op.inputs[0].shape, kh, kw)
    let acc = 0
    for (let b = 0; b < B; b++) {
      for (let y = 0; y < OH; y++) {
        const iy = y * p.strideH + r - p.padTop
        if (iy < 0 || iy >= H) continue
        for (let x = 0; x < OW; x++) {
          const ix = x * p.strideW + c - p.padLeft
          if (ix < 0 || ix >= W) continue
          acc = Math.fround(acc + Math.fround(xCol[(b * H + iy) * W + ix] * dyCol[(b * OH + y) * OW + x]))
        }
      }
    }
    return result(acc)
  }
}

function pair (v: unknown, what: string): [number, number] {
  if (typeof v === 'number') return [v, v]
  if (Array.isArray(v) && v.length === 2) return [Number(v[0]), Number(v[1])]
  throw new ReferenceError(`bad ${what}: ${JSON.stringify(v)}`)
}

const MAXPOOL_GRAD: KernelRef = {
  // per covering window, (oy, ox) ascending: its in-image input rows in (r, c) order, then its dy row
  operands: POOL_CONV.MaxPoolGrad.operands,
  computeBits (op, flat, opsIn) {
    checkNhwc(op)
    const ops = opsIn.map(f32)
    const [B, H, W, C] = op.inputs[1].shape; const [, OH, OW] = op.inputs[0].shape
    const [kh, kw] = pair(op.attrs.filterSize, 'filterSize')
    const [b, y, x, ch] = unravel(flat, op.output.shape)
    const p = geometry(op, op.inputs[1].shape, kh, kw)
    let acc = 0; let k = 0
    for (let oy = 0; oy < OH; oy++) {
      for (let ox = 0; ox < OW; ox++) {
        const r = y - (oy * p.strideH - p.padTop); const c = x - (ox * p.strideW - p.padLeft)
        if (r < 0 || r >= kh || c < 0 || c >= kw) continue
        const win = windowRows(B, H, W, kh, kw, op.attrs.strides as Strides, op.attrs.pad as Pad, b, oy, ox)
        // the window's argmax: the first tap holding the greatest value, a NaN counting as greatest
        let best = -1; let bv = 0
        win.forEach((_, n) => { const v = ops[k + n][ch]; if (best < 0 || (Number.isNaN(v) && !Number.isNaN(bv)) || v > bv) { best = n; bv = v } })
        if (best >= 0 && win[best].row * C + ch === flat) acc = Math.fround(acc + ops[k + win.length][ch])
        k += win.length + 1
      }
    }
    return result(acc)
  }
}

/** The kernels psk1 replaces; every other kernel is tfjs-wasm's, with its references. */
export const PSK_KERNELS: Record<string, KernelRef> = {
  BatchMatMul: MATMUL,
  _FusedMatMul: MATMUL,
  Conv2D: CONV2D,
  Conv2DBackpropInput: CONV2D_BACKPROP_INPUT,
  Conv2DBackpropFilter: CONV2D_BACKPROP_FILTER,
  MaxPoolGrad: MAXPOOL_GRAD
}
