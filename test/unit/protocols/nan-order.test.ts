import { beforeAll, describe, expect, it } from 'vitest'
import type { TensorData } from '../../../protocols/commit/index.js'
import { WASM_RUNTIME } from '../../../protocols/program/index.js'
import { initBackend } from '../../../node/train/backend.js'
import { check, f32FromBits, refusedAmbiguousNaN } from './ref-check.js'

// Which NaN survives when two different NaNs meet in an accumulating kernel
// depends on the operand order of the compiled micro-kernel (see
// protocols/reference/xnn-order.ts). Every pair of positions is tried on
// every row of the tiles, and every output element's bits are compared.

const W = WASM_RUNTIME
const ONE = 0x3f800000
const NA1 = 0x7fc00001; const NA2 = 0xffc00002; const NB = 0xffc00003

describe('two different NaNs meeting: reference bits = wasm backend bits', () => {
  beforeAll(async () => { await initBackend('wasm') })

  it('MatMul, every path: two different NaNs at every pair of k positions, and in one product, on every row of the tiles', () => {
    const ONE = 0x3f800000
    let fcRefused = 0
    for (const [ta, tb, batch] of [[false, false, 1], [true, false, 1], [false, true, 1], [false, false, 2]] as const) {
      for (const K of [1, 2, 3, 4, 5, 8, 9, 13, 50]) {
        for (const M of [1, 2, 5, 9]) {
          const N = 3
          const build = (setA: (k: number) => number, setB: (k: number) => number): TensorData[] => {
            const a = new Array(batch * M * K).fill(ONE); const b = new Array(batch * K * N).fill(ONE)
            for (let bt = 0; bt < batch; bt++) {
              for (let r = 0; r < M; r++) for (let k = 0; k < K; k++) a[bt * M * K + (ta ? k * M + r : r * K + k)] = setA(k)
              for (let c = 0; c < N; c++) for (let k = 0; k < K; k++) b[bt * K * N + (tb ? c * K + k : k * N + c)] = setB(k)
            }
            return [f32FromBits(a, ta ? [batch, K, M] : [batch, M, K]), f32FromBits(b, tb ? [batch, N, K] : [batch, K, N])]
          }
          const attrs = { transposeA: ta, transposeB: tb }
          const before = refusedAmbiguousNaN.get('BatchMatMul') ?? 0
          for (let i = 0; i < K; i++) {
            for (let j = i + 1; j < K; j++) check(W, 'BatchMatMul', ['a', 'b'], build(k => k === i ? NA1 : k === j ? NA2 : ONE, () => ONE), attrs, Infinity)
            check(W, 'BatchMatMul', ['a', 'b'], build(k => k === i ? NA1 : ONE, k => k === i ? NB : ONE), attrs, Infinity)
          }
          if (!ta && !tb && batch === 1) fcRefused += (refusedAmbiguousNaN.get('BatchMatMul') ?? 0) - before
        }
      }
    }
    // the fully-connected path (no transpose, batch 1) is modelled operand by operand: nothing refused
    expect(fcRefused).toBe(0)
  })

  it('Conv2D: GEMM (1x1), IGEMM (strided, padded, one or more channels), every pair of window positions', () => {
    const before = refusedAmbiguousNaN.get('Conv2D') ?? 0
    for (const [B, HW, kh, CI, CO, st, pad] of [[1, 3, 3, 1, 2, 1, 'valid'], [1, 2, 2, 1, 3, 1, 'valid'], [1, 5, 3, 1, 2, 2, 'valid'], [1, 4, 3, 1, 2, 1, 'valid'], [1, 3, 3, 2, 2, 1, 'valid'], [1, 5, 3, 5, 3, 1, 'valid'], [2, 4, 2, 6, 9, 1, 'valid'],
      [1, 3, 1, 6, 3, 1, 'valid'], [1, 5, 1, 5, 3, 2, 'valid'], [1, 5, 3, 3, 2, 2, 'same'], [1, 4, 3, 1, 2, 1, 'same']] as Array<[number, number, number, number, number, number, 'valid' | 'same']>) {
      const T = kh * kh * CI
      const attrs = { strides: [st, st], pad, dataFormat: 'NHWC', dilations: [1, 1] }
      // window position t = (r, c, ci) of the output pixel at the image's top-left corner
      const xAt = (t: number): number => (Math.floor(t / (kh * CI)) * HW + Math.floor(t / CI) % kh) * CI + t % CI
      const build = (xs: Map<number, number>, ws: Map<number, number>): TensorData[] => {
        const x = new Array(B * HW * HW * CI).fill(ONE); const w = new Array(T * CO).fill(ONE)
        for (let b = 0; b < B; b++) for (const [t, v] of xs) x[b * HW * HW * CI + xAt(t)] = v
        for (const [t, v] of ws) for (let co = 0; co < CO; co++) w[t * CO + co] = v
        return [f32FromBits(x, [B, HW, HW, CI]), f32FromBits(w, [kh, kh, CI, CO])]
      }
      for (let i = 0; i < T; i++) {
        for (let j = i + 1; j < T; j++) check(W, 'Conv2D', ['x', 'filter'], build(new Map([[i, NA1], [j, NA2]]), new Map()), attrs, Infinity)
        check(W, 'Conv2D', ['x', 'filter'], build(new Map([[i, NA1]]), new Map([[i, NB]])), attrs, Infinity)
      }
    }
    // every micro-kernel's order is modelled: nothing refused
    expect((refusedAmbiguousNaN.get('Conv2D') ?? 0) - before).toBe(0)
  })
})
