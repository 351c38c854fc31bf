import { BINARY_KERNELS, ELEMENTWISE, binaryRef, unaryRef } from './elementwise.js'
import { isNaNBits, lt, valueOf } from './f32.js'
import { CPU_MATMUL } from './matmul.js'
import { ReferenceError, type KernelRef } from './types.js'

// tfjs-cpu@4.22.0: plain JS kernels. Binary/unary float ops are computed in
// float64 and stored as float32, which equals the float32 op for + - * /
// (see elementwise.ts); Maximum/Minimum are Math.max/Math.min (-0 < +0),
// Relu is Math.max(0, x); Exp
// and Log use Math.exp/Math.log (engine-dependent), so they are not listed.
// A NaN's bits on this runtime come from the JS engine's double arithmetic,
// which fixes none (they vary with the engine and its JIT tier): an element
// whose value is a NaN has no reference here (refused, never guessed).

function noNaN (ref: KernelRef, kernel: string): KernelRef {
  return {
    operands: ref.operands,
    computeBits (op, flat, ops) {
      const b = ref.computeBits(op, flat, ops)
      if (op.output.dtype === 'float32' && isNaNBits(b)) throw new ReferenceError(`cpu ${kernel}: a NaN result has no defined bits on the cpu runtime`)
      return b
    }
  }
}

const NAN_OUT = 0x7fc00000 // only a marker for noNaN: never returned
const isNegZero = (x: number): boolean => x === 0x80000000
/** Math.max on float32 bits: NaN if either is NaN, +0 over -0. */
function mathMax (a: number, b: number): number {
  if (isNaNBits(a) || isNaNBits(b)) return NAN_OUT
  if (valueOf(a) === 0 && valueOf(b) === 0) return isNegZero(a) ? b : a
  return lt(a, b) ? b : a
}
/** Math.min on float32 bits: NaN if either is NaN, -0 under +0. */
function mathMin (a: number, b: number): number {
  if (isNaNBits(a) || isNaNBits(b)) return NAN_OUT
  if (valueOf(a) === 0 && valueOf(b) === 0) return isNegZero(a) ? a : b
  return lt(b, a) ? b : a
}

export const CPU: Record<string, KernelRef> = {
  ...Object.fromEntries(BINARY_KERNELS.filter(k => k !== 'Maximum' && k !== 'Minimum').map(k => [k, noNaN(ELEMENTWISE[k], k)])),
  Maximum: noNaN(binaryRef('Maximum', mathMax), 'Maximum'),
  Minimum: noNaN(binaryRef('Minimum', mathMin), 'Minimum'),
  Identity: ELEMENTWISE.Identity,
  Reshape: ELEMENTWISE.Reshape,
  Neg: noNaN(ELEMENTWISE.Neg, 'Neg'),
  Relu: noNaN(unaryRef('Relu', x => mathMax(0, x)), 'Relu'),
  BatchMatMul: CPU_MATMUL
}
