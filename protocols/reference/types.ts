import type { DType, TypedValues } from '../commit/tensor.js'

export interface OpShape {
  kernel: string
  attrs: Record<string, unknown>
  /** in the order of the op trace entry's inputs */
  inputs: Array<{ shape: number[], dtype: DType }>
  output: { shape: number[], dtype: DType }
  outputIndex?: number
}

/** A row or column of input `input` in the matrix view of protocols/commit (rows = prod(shape[:-1]), cols = last dim). */
export interface OperandRef { input: number, axis: 'row' | 'col', index: number }

export interface KernelRef {
  operands: (op: OpShape, flat: number) => OperandRef[]
  compute: (op: OpShape, flat: number, operands: TypedValues[]) => number
}

export class ReferenceError extends Error {
  constructor (message: string) { super(message); this.name = 'ReferenceError' }
}
