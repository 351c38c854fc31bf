import type { TypedValues } from '../commit/tensor.js'
import { checkFlat } from './shape.js'
import { ReferenceError, type KernelRef, type OperandRef, type OpShape } from './types.js'

// Reductions (wasm): the reduced axes are moved innermost and reduced
// sequentially in float32, in row-major order of the reduced elements.
// Element level works when one output element's inputs are one operand:
// reducing the last axis (a row of the matrix view) or every axis but the
// last (a column). Mean = fround(sum / count) of that float32 sum.

function axesOf (op: OpShape): number[] {
  const rank = op.inputs[0].shape.length
  const raw = op.kernel === 'Max' || op.kernel === 'Min' ? op.attrs.reductionIndices : op.attrs.axis
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

function reduceRef (fold: (vals: TypedValues, count: number) => number): KernelRef {
  return {
    operands: (op, flat) => [locate(op, flat)],
    compute: (op, flat, ops) => { locate(op, flat); return fold(ops[0], ops[0].length) }
  }
}

export const REDUCE: Record<string, KernelRef> = {
  Sum: reduceRef(v => { let s = 0; for (let i = 0; i < v.length; i++) s = Math.fround(s + v[i]); return s }),
  Mean: reduceRef((v, n) => { let s = 0; for (let i = 0; i < v.length; i++) s = Math.fround(s + v[i]); return Math.fround(s / n) }),
  Max: reduceRef(v => { let m = v[0]; for (let i = 1; i < v.length; i++) if (v[i] > m || Number.isNaN(v[i])) m = v[i]; return m }),
  Min: reduceRef(v => { let m = v[0]; for (let i = 1; i < v.length; i++) if (v[i] < m || Number.isNaN(v[i])) m = v[i]; return m })
}
