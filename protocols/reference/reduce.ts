import { add, bitsOf, bitsView, div, isNaNBits, lt } from './f32.js'
import { checkFlat } from './shape.js'
import { ReferenceError, type KernelRef, type OperandRef, type OpShape } from './types.js'

// Reductions (wasm): the reduced axes are moved innermost and reduced
// sequentially in float32, in row-major order of the reduced elements.
// Element level works when one output element's inputs are one operand:
// reducing the last axis (a row of the matrix view) or every axis but the
// last (a column). Mean = fround(sum / count) of that float32 sum. Max/Min:
// a NaN replaces the running value (bits kept), so the last NaN wins.

function axesOf (op: OpShape): number[] {
  const rank = op.inputs[0].shape.length
  // tfjs names the attribute reductionIndices for Max, axis for Sum, Mean and Min
  const raw = op.kernel === 'Max' ? op.attrs.reductionIndices ?? op.attrs.axis : op.attrs.axis ?? op.attrs.reductionIndices
  const list = raw === null || raw === undefined ? Array.from({ length: rank }, (_, i) => i) : Array.isArray(raw) ? raw as number[] : [raw as number]
  return [...new Set(list.map(a => (a < 0 ? a + rank : a)))].sort((a, b) => a - b)
}

function locate (op: OpShape, flat: number): OperandRef {
  checkFlat(flat, op.output.shape)
  const shape = op.inputs[0].shape
  const rank = shape.length
  const axes = axesOf(op)
  if (rank <= 1) return { input: 0, axis: 'row', index: 0 }
  if (axes.length === 1 && axes[0] === rank - 1) return { input: 0, axis: 'row', index: flat }
  if (axes.length === rank - 1 && !axes.includes(rank - 1)) return { input: 0, axis: 'col', index: flat }
  if (axes.length === rank) throw new ReferenceError(`${op.kernel} over all axes of a rank-${rank} tensor is not a single row or column`)
  throw new ReferenceError(`${op.kernel} over axes [${axes.join(',')}] of rank ${rank} has no element-level reference`)
}

function reduceRef (fold: (vals: Uint32Array) => number): KernelRef {
  return {
    operands: (op, flat) => [locate(op, flat)],
    computeBits: (op, flat, ops) => {
      locate(op, flat)
      if (op.output.dtype !== 'float32' || op.inputs[0].dtype !== 'float32') throw new ReferenceError(`${op.kernel} on ${op.inputs[0].dtype} has no element reference`)
      return fold(bitsView(ops[0]))
    }
  }
}

function sum (v: Uint32Array): number { let s = 0; for (let i = 0; i < v.length; i++) s = add(s, v[i]); return s }

export const REDUCE: Record<string, KernelRef> = {
  Sum: reduceRef(sum),
  Mean: reduceRef(v => div(sum(v), bitsOf(v.length))),
  Max: reduceRef(v => { let m = v[0]; for (let i = 1; i < v.length; i++) if (lt(m, v[i]) || isNaNBits(v[i])) m = v[i]; return m }),
  Min: reduceRef(v => { let m = v[0]; for (let i = 1; i < v.length; i++) if (lt(v[i], m) || isNaNBits(v[i])) m = v[i]; return m })
}
