import type { TypedValues } from '../commit/tensor.js'
import { add, bitsOf, bitsView, div, isNaNBits, mul, quiet, reluBits, sqrt, sub, stdMax, stdMin, valueOf, DEFAULT_NAN } from './f32.js'
import { expf, logf } from './musl.js'
import { broadcastIndex, checkFlat, rowOf, unravel } from './shape.js'
import { encodeBits, ReferenceError, type KernelRef, type OpShape } from './types.js'

// Elementwise kernels: one output element reads one element of each input
// (after numpy broadcasting); the operand is the input row that holds it.
// float32 ops work on bit patterns (f32.ts) so NaN signs and payloads, -0 and
// subnormals are exactly the runtime's (measured: test/unit/protocols/special-values.test.ts).

const f = Math.fround

// tfjs-wasm's Cast copies with TypedArray.set: int32 is ToInt32 (NaN, ±Inf → 0,
// modulo 2^32), bool is ToUint8 (modulo 256: -1 → 255, 0.5 → 0).
function castValue (v: number, to: string): number {
  if (to === 'float32') return f(v)
  if (to === 'int32') return v | 0
  if (to === 'bool') return (v | 0) & 0xff
  throw new ReferenceError(`Cast to ${to} is not supported`)
}

const SIGN = 0x80000000

/** float32 -> float32 unary ops on bits. */
export const UNARY_BITS: Record<string, (x: number, attrs: Record<string, unknown>) => number> = {
  Identity: x => x,
  Reshape: x => x,
  Neg: x => (x ^ SIGN) >>> 0, // sign flip, payload kept (also on NaN)
  Relu: x => reluBits(x), // integer max with 0: -0 and -NaN give +0, +NaN is kept as is
  Square: x => mul(x, x),
  Sqrt: x => sqrt(x),
  Exp: x => (isNaNBits(x) ? quiet(x) : bitsOf(expf(valueOf(x)))), // musl: x + x on NaN
  // musl logf: -0/+0 → -Inf, NaN → (x-x)/(x-x) = x quietened, other negatives (and -Inf) → 0/0 = default NaN
  Log: x => (isNaNBits(x) ? quiet(x) : (x & 0x7fffffff) !== 0 && (x & SIGN) !== 0 ? DEFAULT_NAN : bitsOf(logf(valueOf(x)))),
  Abs: x => (x & 0x7fffffff) >>> 0,
  Step: (x, a) => (isNaNBits(x) ? x : valueOf(x) > 0 ? bitsOf(1) : bitsOf(f(Number(a.alpha ?? 0)))) // NaN is passed through untouched
}

/** Numeric unary ops for non-float32 inputs or outputs (int32/bool). */
const UNARY_NUM: Record<string, (x: number, attrs: Record<string, unknown>) => number> = {
  Identity: x => x,
  Reshape: x => x,
  Neg: x => -x,
  Abs: x => Math.abs(x),
  Relu: x => (x > 0 ? x : 0),
  Cast: (x, a) => castValue(x, String(a.dtype))
}

/** float32 binary ops on bits. */
export const BINARY_BITS: Record<string, (a: number, b: number) => number> = {
  Add: add,
  Sub: sub,
  Multiply: mul,
  RealDiv: div,
  // C++ std::max / std::min as compiled into the runtime: on ties and NaN the first operand wins, bits kept
  Maximum: stdMax,
  Minimum: stdMin
}

// XNNPACK computes a commutative op with its operands swapped when input a is
// the broadcast one along the innermost non-1 output dimension (it calls the
// "vector op scalar" kernel with b as the vector). Only visible on NaN + NaN.
const COMMUTATIVE = new Set(['Add', 'Multiply'])
function swapped (op: OpShape): boolean {
  if (!COMMUTATIVE.has(op.kernel)) return false
  const out = op.output.shape
  let d = out.length - 1
  while (d >= 0 && out[d] === 1) d--
  if (d < 0) return true // one element: both operands "broadcast", a is taken as the scalar
  const a = op.inputs[0].shape
  const ad = a.length - (out.length - d)
  return ad < 0 || a[ad] === 1
}

const BINARY_NUM: Record<string, (a: number, b: number) => number> = {
  Add: (a, b) => a + b,
  Sub: (a, b) => a - b,
  Multiply: (a, b) => a * b,
  RealDiv: (a, b) => a / b,
  Maximum: (a, b) => (a < b ? b : a),
  Minimum: (a, b) => (b < a ? b : a)
}
export const BINARY_KERNELS = Object.keys(BINARY_BITS)

/** The reference of unary kernel `kernel`; `bitsFn` replaces its float32 bit function (another runtime's semantics). */
export function unaryRef (kernel: string, bitsFn = UNARY_BITS[kernel]): KernelRef {
  return {
    operands (op, flat) {
      checkFlat(flat, op.output.shape)
      return [rowOf(0, op.inputs[0].shape, flat).ref]
    },
    computeBits (op, flat, ops) {
      const { pos } = rowOf(0, op.inputs[0].shape, flat)
      const inF32 = op.inputs[0].dtype === 'float32'
      if (inF32 && op.output.dtype === 'float32' && bitsFn !== undefined) return bitsFn(bitsView(ops[0])[pos], op.attrs)
      if (inF32 && op.output.dtype === 'float32' && kernel === 'Cast') return bitsView(ops[0])[pos] // float32 → float32: a copy
      const numFn = UNARY_NUM[kernel]
      if (numFn === undefined) throw new ReferenceError(`${kernel} on ${op.inputs[0].dtype} → ${op.output.dtype} has no element reference`)
      return encodeBits(op.output.dtype, numFn(ops[0][pos], op.attrs))
    }
  }
}

/** The reference of binary kernel `kernel`; `bitsFn` replaces its float32 bit function (another runtime's semantics). */
export function binaryRef (kernel: string, bitsFn = BINARY_BITS[kernel]): KernelRef {
  const locate = (op: OpShape, flat: number): Array<ReturnType<typeof rowOf>> => {
    checkFlat(flat, op.output.shape)
    if (op.inputs.length !== 2) throw new ReferenceError(`${op.kernel} needs 2 inputs`)
    const idx = unravel(flat, op.output.shape)
    return op.inputs.map((inp, i) => rowOf(i, inp.shape, broadcastIndex(idx, inp.shape)))
  }
  return {
    operands: (op, flat) => locate(op, flat).map(l => l.ref),
    computeBits (op, flat, ops: TypedValues[]) {
      const [a, b] = locate(op, flat)
      if (op.output.dtype === 'float32' && op.inputs.every(i => i.dtype === 'float32')) {
        const x = bitsView(ops[0])[a.pos]; const y = bitsView(ops[1])[b.pos]
        return swapped(op) ? bitsFn(y, x) : bitsFn(x, y)
      }
      return encodeBits(op.output.dtype, BINARY_NUM[kernel](ops[0][a.pos], ops[1][b.pos]))
    }
  }
}

export const ELEMENTWISE: Record<string, KernelRef> = {
  ...Object.fromEntries([...Object.keys(UNARY_BITS), 'Cast'].map(k => [k, unaryRef(k)])),
  ...Object.fromEntries(BINARY_KERNELS.map(k => [k, binaryRef(k)]))
}
