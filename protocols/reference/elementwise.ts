import type { TypedValues } from '../commit/tensor.js'
import { expf, logf } from './musl.js'
import { broadcastIndex, checkFlat, rowOf, unravel } from './shape.js'
import { ReferenceError, type KernelRef, type OpShape } from './types.js'

// Elementwise kernels: one output element reads one element of each input
// (after numpy broadcasting); the operand is the input row that holds it.
// float32 results are IEEE single operations: fround of the double result is
// exact for + - * / sqrt (double has more than 2*24+2 bits).

const f = Math.fround

function castValue (v: number, to: string): number {
  if (to === 'float32') return f(v)
  if (to === 'int32') return Math.trunc(v) | 0
  if (to === 'bool') return v !== 0 ? 1 : 0
  throw new ReferenceError(`Cast to ${to} is not supported`)
}

export const UNARY: Record<string, (x: number, attrs: Record<string, unknown>) => number> = {
  Identity: x => x,
  Reshape: x => x,
  Neg: x => -x,
  Relu: x => (Number.isNaN(x) ? NaN : 0 < x ? x : 0), // wasm f32.max(x, 0): NaN stays NaN, -0 gives +0
  Square: x => f(x * x),
  Sqrt: x => f(Math.sqrt(x)),
  Exp: x => expf(x),
  Log: x => logf(x),
  Abs: x => Math.abs(x),
  Step: (x, a) => (Number.isNaN(x) ? NaN : x > 0 ? 1 : f(Number(a.alpha ?? 0))),
  Cast: (x, a) => castValue(x, String(a.dtype))
}

export const BINARY: Record<string, (a: number, b: number) => number> = {
  Add: (a, b) => f(a + b),
  Sub: (a, b) => f(a - b),
  Multiply: (a, b) => f(a * b),
  RealDiv: (a, b) => f(a / b),
  // C++ std::max / std::min as compiled into the runtime: on ties and NaN the first operand wins
  Maximum: (a, b) => (a < b ? b : a),
  Minimum: (a, b) => (b < a ? b : a)
}

function unaryRef (fn: (x: number, attrs: Record<string, unknown>) => number): KernelRef {
  return {
    operands (op, flat) {
      checkFlat(flat, op.output.shape)
      return [rowOf(0, op.inputs[0].shape, flat).ref]
    },
    compute (op, flat, ops) {
      const { pos } = rowOf(0, op.inputs[0].shape, flat)
      return fn(ops[0][pos], op.attrs)
    }
  }
}

function binaryRef (fn: (a: number, b: number) => number): KernelRef {
  const locate = (op: OpShape, flat: number): Array<ReturnType<typeof rowOf>> => {
    checkFlat(flat, op.output.shape)
    if (op.inputs.length !== 2) throw new ReferenceError(`${op.kernel} needs 2 inputs`)
    const idx = unravel(flat, op.output.shape)
    return op.inputs.map((inp, i) => rowOf(i, inp.shape, broadcastIndex(idx, inp.shape)))
  }
  return {
    operands: (op, flat) => locate(op, flat).map(l => l.ref),
    compute (op, flat, ops: TypedValues[]) {
      const [a, b] = locate(op, flat)
      const r = fn(ops[0][a.pos], ops[1][b.pos])
      return op.output.dtype === 'float32' ? f(r) : r
    }
  }
}

export const ELEMENTWISE: Record<string, KernelRef> = {
  ...Object.fromEntries(Object.entries(UNARY).map(([k, fn]) => [k, unaryRef(fn)])),
  ...Object.fromEntries(Object.entries(BINARY).map(([k, fn]) => [k, binaryRef(fn)]))
}
