import type { DType, TypedValues } from '../commit/tensor.js'
import { bitsOf } from './f32.js'

export interface OpShape {
  kernel: string
  attrs: Record<string, unknown>
  /** in the order of the op tape entry's inputs */
  inputs: Array<{ shape: number[], dtype: DType }>
  output: { shape: number[], dtype: DType }
  outputIndex?: number
}

/** A row or column of input `input` in the matrix view of protocols/commit (rows = prod(shape[:-1]), cols = last dim). */
export interface OperandRef { input: number, axis: 'row' | 'col', index: number }

export interface KernelRef {
  operands: (op: OpShape, flat: number) => OperandRef[]
  /** The output element's bits: the float32 bit pattern, int32 as uint32, bool as its byte. */
  computeBits: (op: OpShape, flat: number, operands: TypedValues[]) => number
}

/** Bits of a numeric result in `dtype` (float32: only for non-NaN results: NaN has no defined bits as a number). */
export function encodeBits (dtype: DType, v: number): number {
  if (dtype === 'float32') return bitsOf(Math.fround(v))
  if (dtype === 'int32') return (v | 0) >>> 0
  return v & 0xff
}

export class ReferenceError extends Error {
  constructor (message: string) { super(message); this.name = 'ReferenceError' }
}
