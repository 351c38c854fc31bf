import { bitsView } from './f32.js'
import { checkFlat, rowOf, strides, unravel } from './shape.js'
import { ReferenceError, type KernelRef, type OpShape } from './types.js'

// Transpose: a permutation of elements, no arithmetic. Output element at
// index o reads the input element at index i with i[perm[k]] = o[k]; the
// operand is the input row (matrix view) that holds it, and the value is its
// bits unchanged (NaN sign and payload included: measured on the pinned
// runtime with the edge-value corpus in test/unit/protocols/gpt-reference.test.ts).

function permOf (op: OpShape): number[] {
  const rank = op.inputs[0]?.shape.length
  if (rank === undefined) throw new ReferenceError('Transpose needs an input')
  const p = op.attrs.perm
  if (!Array.isArray(p) || p.length !== rank || p.some(a => !Number.isInteger(a) || a < 0 || a >= rank) || new Set(p).size !== rank) throw new ReferenceError(`Transpose: bad perm ${JSON.stringify(p)} for rank ${rank}`)
  const inShape = op.inputs[0].shape
  const want = (p as number[]).map(a => inShape[a])
  if (op.output.shape.length !== rank || want.some((d, k) => d !== op.output.shape[k])) throw new ReferenceError(`Transpose: output shape [${op.output.shape.join(',')}] is not the input's permuted by ${JSON.stringify(p)}`)
  if (op.output.dtype !== op.inputs[0].dtype) throw new ReferenceError('Transpose: output dtype differs from the input\'s')
  return p as number[]
}

/** Flat index into the input of output element `flat`. */
function source (op: OpShape, flat: number): number {
  const perm = permOf(op)
  checkFlat(flat, op.output.shape)
  const o = unravel(flat, op.output.shape)
  const st = strides(op.inputs[0].shape)
  let i = 0
  for (let k = 0; k < perm.length; k++) i += o[k] * st[perm[k]]
  return i
}

export const TRANSPOSE: KernelRef = {
  operands: (op, flat) => [rowOf(0, op.inputs[0].shape, source(op, flat)).ref],
  computeBits (op, flat, ops) {
    const { pos } = rowOf(0, op.inputs[0].shape, source(op, flat))
    const dt = op.inputs[0].dtype
    if (dt === 'float32') return bitsView(ops[0])[pos]
    if (dt === 'int32') return ops[0][pos] >>> 0
    return ops[0][pos] & 0xff
  }
}
