import type { TypedValues } from '../../../protocols/commit/index.js'
import type { OpShape, OperandRef } from '../../../protocols/reference/types.js'

// The reference semantics the runtime is given (protocols/reference, injected
// by the host so the pure runtime can be tested without it). Adjudication
// itself is protocols/dispute's judgeClaim, called by arbitration.ts.

export type { OpShape, OperandRef }

/** The API of protocols/reference/index.ts. */
export interface ReferenceSemantics {
  supportsElement: (runtime: string, kernel: string) => boolean
  elementOperands: (runtime: string, op: OpShape, flatIndex: number) => OperandRef[]
  computeElement: (runtime: string, op: OpShape, flatIndex: number, operands: TypedValues[]) => number
  /** the element's bits (float32 pattern incl. NaN sign/payload); judgeClaim prefers it */
  computeElementBits?: (runtime: string, op: OpShape, flatIndex: number, operands: TypedValues[]) => number
}
