import { convPads } from './conv.js'
import { fullyConnected, igemm } from './xnn-order.js'
import { addC, mulC } from './dot.js'
import { add, bitsOf, bitsView, isNaNBits, mul, stdMax as pmax, stdMin as pmin, valueOf } from './f32.js'
import { checkFlat, unravel } from './shape.js'
import { ReferenceError, type KernelRef, type OperandRef, type OpShape } from './types.js'

// Conv net kernels of the wasm runtime (NHWC, dilation 1). A pixel of an NHWC
// tensor [B,H,W,C] is one row of its matrix view [B*H*W, C], so window-based
// ops read a list of pixel rows. A filter [kh,kw,CI,CO] has rows (r,c,ci) of
// CO values and columns of kh*kw*CI values (one output channel).
//
// Conv2D: acc = 0; for r, c (padding reads +0), ci: acc = fround(acc + fround(x*w)).
// MaxPool: XNNPACK's pmax tree (see xnnMaxPool).
// MaxPoolGrad: for each window (oy, ox) covering the pixel, in ascending
//   order, acc = fround(acc + dy * mask), mask = 1 if this element is the
//   window's gradArgmax, else 0.
// Conv2DBackpropInput: dx[b,y,x,ci] = sum over contributing (oy, ox) ascending,
//   then co, of dy[b,oy,ox,co] * w[r,c,ci,co], float32 accumulation.

type Strides = [number, number] | number
type Pad = 'valid' | 'same' | number

function pair (v: unknown, what: string): [number, number] {
  if (typeof v === 'number') return [v, v]
  if (Array.isArray(v) && v.length === 2) return [Number(v[0]), Number(v[1])]
  throw new ReferenceError(`bad ${what}: ${JSON.stringify(v)}`)
}

export function checkNhwc (op: OpShape): void {
  if (op.output.dtype !== 'float32' || op.inputs.some(i => i.dtype !== 'float32')) throw new ReferenceError(`${op.kernel}: only float32 has an element reference`)
  const df = op.attrs.dataFormat
  if (df !== undefined && df !== 'NHWC' && df !== 'channelsLast') throw new ReferenceError(`${op.kernel}: only NHWC`)
  const d = op.attrs.dilations
  if (d !== undefined && pair(d, 'dilations').some(x => x !== 1)) throw new ReferenceError(`${op.kernel}: dilation is not supported`)
}

/** Input pixels (row indices) of the window of output pixel (b, oy, ox), in (r, c) order, with their (r, c). */
export function windowRows (
  B: number, H: number, W: number, kh: number, kw: number, strides: Strides, pad: Pad, b: number, oy: number, ox: number
): Array<{ row: number, r: number, c: number }> {
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

// One input and one output channel makes XNNPACK run its depthwise kernel,
// which sums the taps in another order (measured: ordinary values differ in
// the last bit): not modelled, so refused.
function checkNotDepthwise (op: OpShape): void {
  if (op.inputs[0].shape[3] === 1 && op.output.shape[3] === 1) throw new ReferenceError(`${op.kernel} with one input and one output channel runs XNNPACK's depthwise kernel: no element reference`)
}

/**
 * What Conv2D's output element `flat` reads, whatever the runtime's arithmetic: the in-image input
 * pixels of its window in (r, c) order, then the filter's column for its output channel.
 */
export function conv2dOperands (op: OpShape, flat: number): OperandRef[] {
  checkFlat(flat, op.output.shape)
  const [B, H, W] = op.inputs[0].shape; const [kh, kw] = op.inputs[1].shape
  const [b, oy, ox, o] = unravel(flat, op.output.shape)
  const rows = windowRows(B, H, W, kh, kw, op.attrs.strides as Strides, op.attrs.pad as Pad, b, oy, ox)
  return [...rows.map(w => ({ input: 0, axis: 'row' as const, index: w.row })), { input: 1, axis: 'col', index: o }]
}

const CONV2D: KernelRef = {
  operands (op, flat) {
    checkNhwc(op); checkNotDepthwise(op)
    return conv2dOperands(op, flat)
  },
  computeBits (op, flat, opsIn) {
    checkNhwc(op)
    const ops = opsIn.map(bitsView)
    const [B, H, W, CI] = op.inputs[0].shape; const [kh, kw] = op.inputs[1].shape
    const [b, oy, ox] = unravel(flat, op.output.shape)
    const rows = windowRows(B, H, W, kh, kw, op.attrs.strides as Strides, op.attrs.pad as Pad, b, oy, ox)
    const wcol = ops[ops.length - 1]
    const at = new Map(rows.map((w, i) => [w.r * kw + w.c, ops[i]]))
    // every tap of the filter, in (r, c, ci) order: a tap outside the image reads
    // XNNPACK's zero buffer, so +0 * w still counts (a NaN or ±Inf weight there gives NaN)
    const x = (t: number, ci: number): number => at.get(t)?.[ci] ?? 0
    const w = (t: number, ci: number): number => wcol[t * CI + ci]
    const [, OH, OW] = op.output.shape
    const M = B * OH * OW
    const p = convPads(H, W, kh, kw, op.attrs.strides as Strides, op.attrs.pad as Pad)
    // a 1x1 stride-1 unpadded convolution is XNNPACK's GEMM (the fully-connected kernel)
    if (
      kh === 1 && kw === 1 && p.strideH === 1 && p.strideW === 1 && p.padTop === 0 && p.padLeft === 0
    ) return fullyConnected(CI, M, (b * OH + oy) * OW + ox, ci => x(0, ci), ci => w(0, ci), 0)
    return igemm(kh * kw, CI, x, w)
  }
}

function poolGeom (op: OpShape, xShape: number[]): { kh: number, kw: number } {
  checkNhwc(op)
  const [kh, kw] = pair(op.attrs.filterSize, 'filterSize')
  if (xShape.length !== 4) throw new ReferenceError(`${op.kernel}: NHWC input needed`)
  return { kh, kw }
}

// MaxPoolGrad's own argmax (measured on the pinned runtime, including its
// quirks): the running max starts at FLT_MIN (the smallest positive normal, as
// C++ numeric_limits<float>::min()) with index 0 of the whole tensor, ties go
// to the later position (>=). So a window whose values are all <= 0 (common
// after relu) sends its gradient to element 0 of dx, i.e. nowhere unless the
// window holds that element.
const FLT_MIN = 1.1754943508222875e-38
function gradArgmax (rows: Uint32Array[], ch: number): number {
  let best = -1; let m = FLT_MIN
  for (let i = 0; i < rows.length; i++) {
    const v = rows[i][ch]
    if (!isNaNBits(v) && valueOf(v) >= m) { m = valueOf(v); best = i }
  }
  return best
}

// MaxPool is XNNPACK's 9p8x wasmsimd-x86 kernel: the window's pixels in its
// indirection order (column-major: x outer, y inner; padded positions clamped
// to the nearest edge pixel), a fixed tree of f32x4.pmax (bits kept, a NaN
// survives only where it is the first operand), then the output clamp
// pmax(-Inf, v) (a NaN becomes -Inf) and pmin(+Inf, v). Windows of more than 9
// pixels continue in passes of 8 over the clamped partial result.
const NEG_INF = bitsOf(-Infinity); const POS_INF = bitsOf(Infinity); const ONE = bitsOf(1)
function clampOut (v: number): number { return pmin(POS_INF, pmax(NEG_INF, v)) }
function xnnMaxPool (v: number[]): number {
  const at = (i: number): number => v[i < v.length ? i : 0]
  const m01 = pmax(at(1), at(0)); const m23 = pmax(at(3), at(2)); const m45 = pmax(at(5), at(4))
  const m018 = pmax(at(8), m01); const m67 = pmax(at(7), at(6))
  let out = clampOut(pmax(pmax(m45, m23), pmax(m67, m018)))
  for (let k = 9; k < v.length; k += 8) {
    const p = (i: number): number => v[k + i < v.length ? k + i : k]
    const n01 = pmax(p(1), p(0)); const n23 = pmax(p(3), p(2)); const n45 = pmax(p(5), p(4))
    const n01o = pmax(out, n01); const n67 = pmax(p(7), p(6))
    out = clampOut(pmax(pmax(n45, n23), pmax(n67, n01o)))
  }
  return out
}

/** Input rows of the window of (b, oy, ox) in XNNPACK's indirection order. */
function xnnWindowRows (H: number, W: number, kh: number, kw: number, strides: Strides, pad: Pad, b: number, oy: number, ox: number): number[] {
  const p = convPads(H, W, kh, kw, strides, pad)
  const rows: number[] = []
  for (let c = 0; c < kw; c++) {
    const ix = Math.min(Math.max(ox * p.strideW + c - p.padLeft, 0), W - 1)
    for (let r = 0; r < kh; r++) {
      const iy = Math.min(Math.max(oy * p.strideH + r - p.padTop, 0), H - 1)
      rows.push((b * H + iy) * W + ix)
    }
  }
  return rows
}

const MAXPOOL: KernelRef = {
  operands (op, flat) {
    checkFlat(flat, op.output.shape)
    const [B, H, W] = op.inputs[0].shape; const { kh, kw } = poolGeom(op, op.inputs[0].shape)
    const [b, oy, ox] = unravel(flat, op.output.shape)
    return windowRows(B, H, W, kh, kw, op.attrs.strides as Strides, op.attrs.pad as Pad, b, oy, ox).map(w => ({ input: 0, axis: 'row' as const, index: w.row }))
  },
  computeBits (op, flat, opsIn) {
    checkNhwc(op)
    const ops = opsIn.map(bitsView)
    const [B, H, W] = op.inputs[0].shape; const { kh, kw } = poolGeom(op, op.inputs[0].shape)
    const [b, oy, ox, ch] = unravel(flat, op.output.shape)
    const win = windowRows(B, H, W, kh, kw, op.attrs.strides as Strides, op.attrs.pad as Pad, b, oy, ox)
    const byRow = new Map(win.map((w, i) => [w.row, ops[i][ch]]))
    return xnnMaxPool(xnnWindowRows(H, W, kh, kw, op.attrs.strides as Strides, op.attrs.pad as Pad, b, oy, ox).map(r => byRow.get(r) as number))
  }
}

/** Output pixels (oy, ox) whose window covers input pixel (y, x), ascending. */
function coveringWindows (
  H: number, W: number, OH: number, OW: number, kh: number, kw: number, strides: Strides, pad: Pad, y: number, x: number
): Array<[number, number]> {
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

// MaxPoolGrad inputs (tape order): dy [B,OH,OW,C], input [B,H,W,C], output.
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
  computeBits (op, flat, opsIn) {
    checkNhwc(op)
    const ops = opsIn.map(bitsView)
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
      // the runtime adds dy * mask for every covering window (mask 1 or 0), so a
      // NaN or ±Inf dy reaches every pixel it covers; compiled as (dy*mask) + acc:
      // of two NaNs the later window's survives (measured)
      acc = add(mul(dy, absolute === flat ? ONE : 0), acc)
    }
    return acc
  }
}

// Conv2DBackpropInput inputs (tape order): dy [B,OH,OW,CO], filter [kh,kw,CI,CO].
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
  computeBits (op, flat, opsIn) {
    checkNhwc(op)
    const ops = opsIn.map(bitsView)
    const CO = op.inputs[0].shape[3]
    const [, y, x] = unravel(flat, op.output.shape)
    const n = contributions(op, y, x).length
    // tfjs's own C++ loop (dot += dy * w): which of two meeting NaNs survives
    // changes when V8 tiers the function up from Liftoff to TurboFan (measured),
    // so the runtime has no fixed answer there and the reference refuses (dot.ts)
    let acc = 0
    for (let t = 0; t < n; t++) {
      const dy = ops[2 * t]; const w = ops[2 * t + 1]
      for (let co = 0; co < CO; co++) acc = addC(acc, mulC(dy[co], w[co], op.kernel), op.kernel)
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
