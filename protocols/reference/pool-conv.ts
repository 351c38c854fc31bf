import type { TypedValues } from '../commit/tensor.js'
import { convPads } from './conv.js'
import { checkFlat, unravel } from './shape.js'
import { ReferenceError, type KernelRef, type OperandRef, type OpShape } from './types.js'

// Conv net kernels of the wasm runtime (NHWC, dilation 1). A pixel of an NHWC
// tensor [B,H,W,C] is one row of its matrix view [B*H*W, C], so window-based
// ops read a list of pixel rows. A filter [kh,kw,CI,CO] has rows (r,c,ci) of
// CO values and columns of kh*kw*CI values (one output channel).
//
// Conv2D: acc = 0; for r, c (inside the image), ci: acc = fround(acc + fround(x*w)).
// MaxPool: the first of the maximal values in (r, c) window order.
// MaxPoolGrad: for each window (oy, ox) covering the pixel, in ascending
//   order, acc = fround(acc + dy) if this element is the window's gradArgmax.
// Conv2DBackpropInput: dx[b,y,x,ci] = sum over contributing (oy, ox) ascending,
//   then co, of dy[b,oy,ox,co] * w[r,c,ci,co], float32 accumulation.

type Strides = [number, number] | number
type Pad = 'valid' | 'same' | number
const f = Math.fround

function pair (v: unknown, what: string): [number, number] {
  if (typeof v === 'number') return [v, v]
  if (Array.isArray(v) && v.length === 2) return [Number(v[0]), Number(v[1])]
  throw new ReferenceError(`bad ${what}: ${JSON.stringify(v)}`)
}

function checkNhwc (op: OpShape): void {
  const df = op.attrs.dataFormat
  if (df !== undefined && df !== 'NHWC' && df !== 'channelsLast') throw new ReferenceError(`${op.kernel}: only NHWC`)
  const d = op.attrs.dilations
  if (d !== undefined && pair(d, 'dilations').some(x => x !== 1)) throw new ReferenceError(`${op.kernel}: dilation is not supported`)
}

/** Input pixels (row indices) of the window of output pixel (b, oy, ox), in (r, c) order, with their (r, c). */
function windowRows (B: number, H: number, W: number, kh: number, kw: number, strides: Strides, pad: Pad, b: number, oy: number, ox: number): Array<{ row: number, r: number, c: number }> {
  const p = convPads(H, W, kh, kw, strides, pad)
  const out: Array<{ row: number, r: number, c: number }> = []
  for (let r = 0; r < kh; r++) {
    const iy = oy * p.strideH + r - p.padTop
    if (iy < 0 || iy >= H) continue
    for (let c = 0; c < kw; c++) {
      const ix = ox * p.strideW + c - p.padLeft
      if (ix < 0 || ix >= W) continue
      out.push({ row: (b * H + iy) * W + ix, r, c })
    }
  }
  void B
  return out
}

const CONV2D: KernelRef = {
  operands (op, flat) {
    checkNhwc(op); checkFlat(flat, op.output.shape)
    const [B, H, W] = op.inputs[0].shape; const [kh, kw] = op.inputs[1].shape
    const [b, oy, ox, o] = unravel(flat, op.output.shape)
    const rows = windowRows(B, H, W, kh, kw, op.attrs.strides as Strides, op.attrs.pad as Pad, b, oy, ox)
    return [...rows.map(w => ({ input: 0, axis: 'row' as const, index: w.row })), { input: 1, axis: 'col', index: o }]
  },
  compute (op, flat, ops) {
    const [B, H, W, CI] = op.inputs[0].shape; const [kh, kw] = op.inputs[1].shape
    const [b, oy, ox] = unravel(flat, op.output.shape)
    const rows = windowRows(B, H, W, kh, kw, op.attrs.strides as Strides, op.attrs.pad as Pad, b, oy, ox)
    const wcol = ops[ops.length - 1]
    let acc = 0
    rows.forEach((w, i) => {
      for (let ci = 0; ci < CI; ci++) acc = f(acc + f(ops[i][ci] * wcol[(w.r * kw + w.c) * CI + ci]))
    })
    return acc
  }
}

function poolGeom (op: OpShape, xShape: number[]): { kh: number, kw: number } {
  checkNhwc(op)
  const [kh, kw] = pair(op.attrs.filterSize, 'filterSize')
  if (xShape.length !== 4) throw new ReferenceError(`${op.kernel}: NHWC input needed`)
  return { kh, kw }
}

function firstMax (rows: TypedValues[], ch: number): number {
  let best = 0; let m = rows[0][ch]
  for (let i = 1; i < rows.length; i++) if (rows[i][ch] > m) { m = rows[i][ch]; best = i }
  return best
}

// MaxPoolGrad's own argmax (measured on the pinned runtime, including its
// quirks): the running max starts at FLT_MIN (the smallest positive normal, as
// C++ numeric_limits<float>::min()) with index 0 of the whole tensor, ties go
// to the later position (>=). So a window whose values are all <= 0 (common
// after relu) sends its gradient to element 0 of dx, i.e. nowhere unless the
// window holds that element.
const FLT_MIN = 1.1754943508222875e-38
function gradArgmax (rows: TypedValues[], ch: number): number {
  let best = -1; let m = FLT_MIN
  for (let i = 0; i < rows.length; i++) if (rows[i][ch] >= m) { m = rows[i][ch]; best = i }
  return best
}

const MAXPOOL: KernelRef = {
  operands (op, flat) {
    checkFlat(flat, op.output.shape)
    const [B, H, W] = op.inputs[0].shape; const { kh, kw } = poolGeom(op, op.inputs[0].shape)
    const [b, oy, ox] = unravel(flat, op.output.shape)
    return windowRows(B, H, W, kh, kw, op.attrs.strides as Strides, op.attrs.pad as Pad, b, oy, ox).map(w => ({ input: 0, axis: 'row' as const, index: w.row }))
  },
  compute (op, flat, ops) {
    const ch = unravel(flat, op.output.shape)[3]
    return ops[firstMax(ops, ch)][ch]
  }
}

/** Output pixels (oy, ox) whose window covers input pixel (y, x), ascending. */
function coveringWindows (H: number, W: number, OH: number, OW: number, kh: number, kw: number, strides: Strides, pad: Pad, y: number, x: number): Array<[number, number]> {
  const p = convPads(H, W, kh, kw, strides, pad)
  const out: Array<[number, number]> = []
  for (let oy = 0; oy < OH; oy++) {
    const r = y - (oy * p.strideH - p.padTop)
    if (r < 0 || r >= kh) continue
    for (let ox = 0; ox < OW; ox++) {
      const c = x - (ox * p.strideW - p.padLeft)
      if (c < 0 || c >= kw) continue
      out.push([oy, ox])
    }
  }
  return out
}

// MaxPoolGrad inputs (trace order): dy [B,OH,OW,C], input [B,H,W,C], output.
// Operands: per covering window, its input pixel rows, then its dy row.
const MAXPOOL_GRAD: KernelRef = {
  operands (op, flat) {
    checkFlat(flat, op.output.shape)
    const [B, H, W] = op.inputs[1].shape; const [, OH, OW] = op.inputs[0].shape
    const { kh, kw } = poolGeom(op, op.inputs[1].shape)
    const [b, y, x] = unravel(flat, op.output.shape)
    const refs: OperandRef[] = []
    for (const [oy, ox] of coveringWindows(H, W, OH, OW, kh, kw, op.attrs.strides as Strides, op.attrs.pad as Pad, y, x)) {
      for (const w of windowRows(B, H, W, kh, kw, op.attrs.strides as Strides, op.attrs.pad as Pad, b, oy, ox)) refs.push({ input: 1, axis: 'row', index: w.row })
      refs.push({ input: 0, axis: 'row', index: (b * OH + oy) * OW + ox })
    }
    return refs
  },
  compute (op, flat, ops) {
    const [B, H, W] = op.inputs[1].shape; const [, OH, OW] = op.inputs[0].shape
    const { kh, kw } = poolGeom(op, op.inputs[1].shape)
    const [b, y, x, ch] = unravel(flat, op.output.shape)
    const C = op.output.shape[3]
    let acc = 0; let k = 0
    for (const [oy, ox] of coveringWindows(H, W, OH, OW, kh, kw, op.attrs.strides as Strides, op.attrs.pad as Pad, y, x)) {
      const win = windowRows(B, H, W, kh, kw, op.attrs.strides as Strides, op.attrs.pad as Pad, b, oy, ox)
      const rows = ops.slice(k, k + win.length)
      const dy = ops[k + win.length][ch]
      k += win.length + 1
      const best = gradArgmax(rows, ch)
      const absolute = best < 0 ? 0 : win[best].row * C + ch
      if (absolute === flat) acc = f(acc + dy)
    }
    return acc
  }
}

// Conv2DBackpropInput inputs (trace order): dy [B,OH,OW,CO], filter [kh,kw,CI,CO].
function contributions (op: OpShape, y: number, x: number): Array<{ oy: number, ox: number, r: number, c: number }> {
  const [B, H, W] = op.attrs.inputShape as number[]
  const [, OH, OW] = op.inputs[0].shape; const [kh, kw] = op.inputs[1].shape
  void B
  const p = convPads(H, W, kh, kw, op.attrs.strides as Strides, op.attrs.pad as Pad, op.attrs.dimRoundingMode as string | undefined)
  return coveringWindows(H, W, OH, OW, kh, kw, op.attrs.strides as Strides, op.attrs.pad as Pad, y, x)
    .map(([oy, ox]) => ({ oy, ox, r: y - (oy * p.strideH - p.padTop), c: x - (ox * p.strideW - p.padLeft) }))
}

const CONV2D_BACKPROP_INPUT: KernelRef = {
  operands (op, flat) {
    checkNhwc(op); checkFlat(flat, op.output.shape)
    const [, OH, OW] = op.inputs[0].shape; const [, kw, CI] = op.inputs[1].shape
    const [b, y, x, ci] = unravel(flat, op.output.shape)
    const refs: OperandRef[] = []
    for (const t of contributions(op, y, x)) {
      refs.push({ input: 0, axis: 'row', index: (b * OH + t.oy) * OW + t.ox })
      refs.push({ input: 1, axis: 'row', index: (t.r * kw + t.c) * CI + ci })
    }
    return refs
  },
  compute (op, flat, ops) {
    const CO = op.inputs[0].shape[3]
    const [, y, x] = unravel(flat, op.output.shape)
    const n = contributions(op, y, x).length
    let acc = 0
    for (let t = 0; t < n; t++) {
      const dy = ops[2 * t]; const w = ops[2 * t + 1]
      for (let co = 0; co < CO; co++) acc = f(acc + f(dy[co] * w[co]))
    }
    return acc
  }
}

export const POOL_CONV: Record<string, KernelRef> = {
  Conv2D: CONV2D,
  MaxPool: MAXPOOL,
  MaxPoolGrad: MAXPOOL_GRAD,
  Conv2DBackpropInput: CONV2D_BACKPROP_INPUT
}
