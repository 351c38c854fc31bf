// The psk1 kernels in JavaScript: the same arithmetic as node/train/native
// (psk-kernels.c), element for element, so a peer without the native addon
// computes the same bits (slowly). Every output element is one sequential
// float32 reduction: acc = +0, then acc = fround(acc + fround(a * b)) in the
// kernel's fixed order (storing into a Float32Array is the fround); a NaN
// output is written as CANONICAL_NAN. The element references (psk.ts) are the
// same loops for one element.

/** The one NaN a psk1 kernel writes: the NaN-ness of an IEEE sum does not depend on payloads, its bits do (C gives no payload guarantee). */
export const CANONICAL_NAN = 0x7fc00000

export function canonicalNaN (out: Float32Array, from = 0, to = out.length): void {
  const u = new Uint32Array(out.buffer, out.byteOffset, out.length)
  for (let i = from; i < to; i++) if ((u[i] & 0x7fffffff) > 0x7f800000) u[i] = CANONICAL_NAN
}

export interface MatMulDims { batch: number, aBatch: number, bBatch: number, M: number, N: number, K: number, ta: boolean, tb: boolean, relu: boolean }

/** out[b,i,j] = Σ_k A(b,i,k)·B(b,k,j) in k order, then + bias[j] (bias of 1 or N values), then relu (NaN kept, −0 → +0). */
export function pskMatMul (a: Float32Array, b: Float32Array, out: Float32Array, d: MatMulDims, bias?: Float32Array): void {
  const { M, N, K } = d
  if (a.length !== d.aBatch * M * K || b.length !== d.bBatch * K * N || out.length !== d.batch * M * N) throw new RangeError('psk matmul: sizes do not match')
  if (bias !== undefined && bias.length !== 1 && bias.length !== N) throw new RangeError('psk matmul: bias must have 1 or N values')
  const row = new Float32Array(N)
  const bk = new Float32Array(N)
  for (let bt = 0; bt < d.batch; bt++) {
    const ao = (d.aBatch === 1 ? 0 : bt) * M * K; const bo = (d.bBatch === 1 ? 0 : bt) * K * N
    for (let i = 0; i < M; i++) {
      row.fill(0)
      for (let k = 0; k < K; k++) {
        const av = d.ta ? a[ao + k * M + i] : a[ao + i * K + k]
        let bv: Float32Array
        if (d.tb) { for (let j = 0; j < N; j++) bk[j] = b[bo + j * K + k]; bv = bk } else bv = b.subarray(bo + k * N, bo + k * N + N)
        for (let j = 0; j < N; j++) row[j] = row[j] + Math.fround(av * bv[j])
      }
      if (bias !== undefined) for (let j = 0; j < N; j++) row[j] = row[j] + bias[bias.length === 1 ? 0 : j]
      if (d.relu) for (let j = 0; j < N; j++) { const v = row[j]; if (!(v > 0) && v === v) row[j] = 0 } // eslint-disable-line no-self-compare
      out.set(row, (bt * M + i) * N)
    }
  }
  canonicalNaN(out)
}

/** NHWC geometry: x [B,H,W,CI], filter [kh,kw,CI,CO], y [B,OH,OW,CO]; padTop/padLeft from convPads. */
export interface ConvGeom {
  B: number
  H: number
  W: number
  CI: number
  kh: number
  kw: number
  CO: number
  OH: number
  OW: number
  sh: number
  sw: number
  padTop: number
  padLeft: number
}

/** y[b,oy,ox,co] = Σ over taps (r, c) inside the image in ascending order, then ci, of x·w. */
export function pskConv2D (x: Float32Array, w: Float32Array, out: Float32Array, g: ConvGeom): void {
  const { CI, CO } = g
  const acc = new Float32Array(CO)
  for (let b = 0; b < g.B; b++) {
    for (let oy = 0; oy < g.OH; oy++) {
      for (let ox = 0; ox < g.OW; ox++) {
        acc.fill(0)
        for (let r = 0; r < g.kh; r++) {
          const iy = oy * g.sh + r - g.padTop
          if (iy < 0 || iy >= g.H) continue
          for (let c = 0; c < g.kw; c++) {
            const ix = ox * g.sw + c - g.padLeft
            if (ix < 0 || ix >= g.W) continue
            const xo = ((b * g.H + iy) * g.W + ix) * CI; const wo = (r * g.kw + c) * CI * CO
            for (let ci = 0; ci < CI; ci++) {
              const xv = x[xo + ci]; const wr = wo + ci * CO
              for (let co = 0; co < CO; co++) acc[co] = acc[co] + Math.fround(xv * w[wr + co])
            }
          }
        }
        out.set(acc, ((b * g.OH + oy) * g.OW + ox) * CO)
      }
    }
  }
  canonicalNaN(out)
}

/** dx[b,y,x,ci] = Σ over the windows covering (y, x), (oy, ox) ascending, then co, of dy·w. */
export function pskConv2DBackpropInput (dy: Float32Array, w: Float32Array, dx: Float32Array, g: ConvGeom): void {
  const { CI, CO } = g
  for (let b = 0; b < g.B; b++) {
    for (let y = 0; y < g.H; y++) {
      for (let x = 0; x < g.W; x++) {
        const o = ((b * g.H + y) * g.W + x) * CI
        for (let ci = 0; ci < CI; ci++) {
          let acc = 0
          for (let oy = 0; oy < g.OH; oy++) {
            const r = y + g.padTop - oy * g.sh
            if (r >= g.kh) continue
            if (r < 0) break
            for (let ox = 0; ox < g.OW; ox++) {
              const c = x + g.padLeft - ox * g.sw
              if (c >= g.kw) continue
              if (c < 0) break
              const d = ((b * g.OH + oy) * g.OW + ox) * CO; const wr = ((r * g.kw + c) * CI + ci) * CO
              for (let co = 0; co < CO; co++) acc = Math.fround(acc + Math.fround(dy[d + co] * w[wr + co]))
            }
          }
          dx[o + ci] = acc
        }
      }
    }
  }
  canonicalNaN(dx)
}

/** dw[r,c,ci,co] = Σ over (b, oy, ox) ascending whose tap (r, c) is inside the image, of x·dy. */
export function pskConv2DBackpropFilter (x: Float32Array, dy: Float32Array, dw: Float32Array, g: ConvGeom): void {
  const { CI, CO } = g
  dw.fill(0)
  for (let b = 0; b < g.B; b++) {
    for (let oy = 0; oy < g.OH; oy++) {
      for (let ox = 0; ox < g.OW; ox++) {
        const d = ((b * g.OH + oy) * g.OW + ox) * CO
        for (let r = 0; r < g.kh; r++) {
          const iy = oy * g.sh + r - g.padTop
          if (iy < 0 || iy >= g.H) continue
          for (let c = 0; c < g.kw; c++) {
            const ix = ox * g.sw + c - g.padLeft
            if (ix < 0 || ix >= g.W) continue
            const xo = ((b * g.H + iy) * g.W + ix) * CI; const ao = (r * g.kw + c) * CI * CO
            for (let ci = 0; ci < CI; ci++) {
              const xv = x[xo + ci]; const a = ao + ci * CO
              for (let co = 0; co < CO; co++) dw[a + co] = dw[a + co] + Math.fround(xv * dy[d + co])
            }
          }
        }
      }
    }
  }
  canonicalNaN(dw)
}

/**
 * MaxPoolGrad (g.CI = g.CO = channels): dx[b,y,x,ch] = Σ over the windows
 * covering (y, x), (oy, ox) ascending, of dy[b,oy,ox,ch] where (y, x) is the
 * window's argmax: the first in-image tap in (r, c) order holding the greatest
 * value, a NaN counting as greatest (the first NaN).
 */
export function pskMaxPoolGrad (dy: Float32Array, x: Float32Array, dx: Float32Array, g: ConvGeom): void {
  const C = g.CI
  dx.fill(0)
  for (let b = 0; b < g.B; b++) {
    for (let oy = 0; oy < g.OH; oy++) {
      for (let ox = 0; ox < g.OW; ox++) {
        const d = ((b * g.OH + oy) * g.OW + ox) * C
        for (let ch = 0; ch < C; ch++) {
          const best = windowArgmax(g, x, b, oy, ox, ch)
          if (best >= 0) dx[best] = dx[best] + dy[d + ch]
        }
      }
    }
  }
  canonicalNaN(dx)
}

/** The flat index in x of the window's argmax for channel ch (−1 for a window wholly outside the image). */
export function windowArgmax (g: Pick<ConvGeom, 'H' | 'W' | 'CI' | 'kh' | 'kw' | 'sh' | 'sw' | 'padTop' | 'padLeft'>, x: ArrayLike<number>, b: number, oy: number, ox: number, ch: number): number {
  let best = -1; let bv = 0
  for (let r = 0; r < g.kh; r++) {
    const iy = oy * g.sh + r - g.padTop
    if (iy < 0 || iy >= g.H) continue
    for (let c = 0; c < g.kw; c++) {
      const ix = ox * g.sw + c - g.padLeft
      if (ix < 0 || ix >= g.W) continue
      const at = ((b * g.H + iy) * g.W + ix) * g.CI + ch
      const v = x[at]
      if (best < 0 || (Number.isNaN(v) && !Number.isNaN(bv)) || v > bv) { best = at; bv = v }
    }
  }
  return best
}
