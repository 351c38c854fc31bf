import { add, mul } from './f32.js'

// The operand order of XNNPACK's float32 GEMM/IGEMM micro-kernels as compiled
// into the pinned .wasm. The association order of these sums is the plain
// sequential one (checked on ordinary values); which operand of each f32
// add/mul comes first only shows when two different NaNs meet, and was
// measured position by position with NaN pairs (test/unit/protocols/
// special-values.test.ts checks every pair of positions).

// XNNPACK's fully-connected micro-kernels (1x8 for one row, 4x8 otherwise),
// as compiled into the pinned .wasm (measured operand by operand with NaN
// pairs; only two NaNs meeting can tell): k in blocks of 4, where the first
// add of a block is (product + acc) and the next three (acc + product); the
// K % 4 remainder adds (product + acc). Products are (b * a), except in the
// remainder of the 4-row kernel's rows 0 and 1 (of each tile of 4 rows): (a * b).
export function fullyConnected (K: number, M: number, i: number, a: (k: number) => number, bv: (k: number) => number, init: number): number {
  const full = K - (K % 4)
  let acc = init
  for (let k = 0; k < full; k++) {
    const p = mul(bv(k), a(k))
    acc = k % 4 === 0 ? add(p, acc) : add(acc, p)
  }
  const aFirst = M > 1 && i % 4 < 2
  for (let k = full; k < K; k++) acc = add(aFirst ? mul(a(k), bv(k)) : mul(bv(k), a(k)), acc)
  return acc
}

/**
 * IGEMM (convolution with a kernel larger than 1x1, or strided/padded): per
 * filter tap, the input channels in blocks of 4 with the same add order as
 * fullyConnected, products (w * x). `x(t, ci)` is +0 for a padded tap.
 */
export function igemm (taps: number, CI: number, x: (t: number, ci: number) => number, w: (t: number, ci: number) => number): number {
  const full = CI - (CI % 4)
  let acc = 0
  for (let t = 0; t < taps; t++) {
    for (let ci = 0; ci < full; ci++) {
      const p = mul(w(t, ci), x(t, ci))
      acc = ci % 4 === 0 ? add(p, acc) : add(acc, p)
    }
    for (let ci = full; ci < CI; ci++) acc = add(mul(w(t, ci), x(t, ci)), acc)
  }
  return acc
}
