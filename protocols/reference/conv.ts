// Conv2DBackpropFilter (NHWC, dilation 1) as registered for the wasm runtime
// by node/train/wasm-kernels.ts: dW[r,c,i,o] = sum over (b, y, x) in that loop
// order of x[b, y*sh + r - padTop, x*sw + c - padLeft, i] * dy[b, y, x, o],
// accumulated in float64, rounded to float32 once at the end. A NaN result is
// stored as DEFAULT_NAN (0xffc00000): JS double arithmetic gives NaNs no
// defined bits, so this kernel (ours, not the pinned .wasm) fixes them.

import { DEFAULT_NAN } from './f32.js'

export interface ConvPadInfo { padTop: number, padLeft: number, strideH: number, strideW: number, outH: number, outW: number }

export function convPads (inH: number, inW: number, kh: number, kw: number, strides: [number, number] | number, pad: 'valid' | 'same' | number, dimRoundingMode?: string): ConvPadInfo {
  const [sh, sw] = typeof strides === 'number' ? [strides, strides] : strides
  if (typeof pad === 'number') {
    const round = dimRoundingMode === 'ceil' ? Math.ceil : dimRoundingMode === 'round' ? Math.round : Math.floor
    const outH = round((inH - kh + 2 * pad) / sh + 1); const outW = round((inW - kw + 2 * pad) / sw + 1)
    return { padTop: pad, padLeft: pad, strideH: sh, strideW: sw, outH, outW }
  }
  if (pad === 'valid') return { padTop: 0, padLeft: 0, strideH: sh, strideW: sw, outH: Math.ceil((inH - kh + 1) / sh), outW: Math.ceil((inW - kw + 1) / sw) }
  if (pad === 'same') {
    const outH = Math.ceil(inH / sh); const outW = Math.ceil(inW / sw)
    const padAlongH = Math.max(0, (outH - 1) * sh + kh - inH)
    const padAlongW = Math.max(0, (outW - 1) * sw + kw - inW)
    return { padTop: Math.floor(padAlongH / 2), padLeft: Math.floor(padAlongW / 2), strideH: sh, strideW: sw, outH, outW }
  }
  throw new Error(`unsupported pad ${JSON.stringify(pad)}`)
}

export interface Conv2DFilterAttrs { strides: [number, number] | number, pad: 'valid' | 'same' | number, dimRoundingMode?: string, filterShape: [number, number, number, number] }

/** One element dW[r, c, i, o] from column i of x and column o of dy (matrix views). */
export function conv2dBackpropFilterElement (
  xShape: readonly number[], dyShape: readonly number[], a: Conv2DFilterAttrs, r: number, c: number, xCol: ArrayLike<number>, dyCol: ArrayLike<number>
): number {
  const [B, H, W] = xShape
  const [, OH, OW] = dyShape
  const [kh, kw] = a.filterShape
  const p = convPads(H, W, kh, kw, a.strides, a.pad, a.dimRoundingMode)
  let acc = 0
  for (let b = 0; b < B; b++) {
    for (let y = 0; y < OH; y++) {
      const iy = y * p.strideH + r - p.padTop
      if (iy < 0 || iy >= H) continue
      for (let x = 0; x < OW; x++) {
        const ix = x * p.strideW + c - p.padLeft
        if (ix < 0 || ix >= W) continue
        acc += xCol[(b * H + iy) * W + ix] * dyCol[(b * OH + y) * OW + x]
      }
    }
  }
  return Math.fround(acc)
}

export function conv2dBackpropFilterValues (
  xShape: readonly number[], x: Float32Array, dyShape: readonly number[], dy: Float32Array, a: Conv2DFilterAttrs
): Float32Array {
  const [B, H, W, CI] = xShape
  const [, OH, OW, CO] = dyShape
  const [kh, kw] = a.filterShape
  const p = convPads(H, W, kh, kw, a.strides, a.pad, a.dimRoundingMode)
  const out = new Float32Array(kh * kw * CI * CO)
  const outBits = new Uint32Array(out.buffer)
  const acc = new Float64Array(CO)
  for (let r = 0; r < kh; r++) {
    for (let c = 0; c < kw; c++) {
      for (let i = 0; i < CI; i++) {
        acc.fill(0)
        // same per-element summation order as conv2dBackpropFilterElement: (b, y, x)
        for (let b = 0; b < B; b++) {
          for (let y = 0; y < OH; y++) {
            const iy = y * p.strideH + r - p.padTop
            if (iy < 0 || iy >= H) continue
            for (let xx = 0; xx < OW; xx++) {
              const ix = xx * p.strideW + c - p.padLeft
              if (ix < 0 || ix >= W) continue
              const xv = x[((b * H + iy) * W + ix) * CI + i]
              const dyBase = ((b * OH + y) * OW + xx) * CO
              for (let o = 0; o < CO; o++) acc[o] += xv * dy[dyBase + o]
            }
          }
        }
        const base = ((r * kw + c) * CI + i) * CO
        for (let o = 0; o < CO; o++) {
          const v = acc[o]
          if (v === v) out[base + o] = v // eslint-disable-line no-self-compare
          else outBits[base + o] = DEFAULT_NAN
        }
      }
    }
  }
  return out
}
