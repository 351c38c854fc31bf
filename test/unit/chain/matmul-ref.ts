import type { OpShape, OperandRef, ReferenceSemantics } from '../../../devnet/chain/runtime/adjudication.js'
import type { TypedValues } from '../../../protocols/commit/index.js'

// A minimal stand-in for protocols/reference with one kernel (MatMul, no
// transposes, batch 1: sequential float32 accumulation), used to test the
// adjudication rules independently of the real reference module.

export const testReference: ReferenceSemantics = {
  supportsElement: (runtime: string, kernel: string) => runtime === 'test' && kernel === 'MatMul',
  elementOperands: (_runtime: string, op: OpShape, f: number): OperandRef[] => {
    const n = op.output.shape[op.output.shape.length - 1]
    return [{ input: 0, axis: 'row', index: Math.floor(f / n) }, { input: 1, axis: 'col', index: f % n }]
  },
  computeElement: (_runtime: string, _op: OpShape, _f: number, [a, b]: TypedValues[]) => {
    let acc = 0
    for (let k = 0; k < a.length; k++) acc = Math.fround(acc + Math.fround(a[k] * b[k]))
    return acc
  }
}
