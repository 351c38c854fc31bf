import type { TypedValues } from '../commit/tensor.js'
import { CPU_RUNTIME, WASM_PSK_RUNTIME, WASM_RUNTIME } from '../program/runtime.js'
import { conv2dBackpropFilterElement, type Conv2DFilterAttrs } from './conv.js'
import { CPU } from './cpu.js'
import { ELEMENTWISE } from './elementwise.js'
import { bitsOf, valueOf } from './f32.js'
import { WASM_MATMUL } from './matmul.js'
import { POOL_CONV } from './pool-conv.js'
import { PSK_KERNELS } from './psk.js'
import { REDUCE } from './reduce.js'
import { checkFlat, unravel } from './shape.js'
import { TRANSPOSE } from './transpose.js'
import { ReferenceError, type KernelRef, type OpShape, type OperandRef } from './types.js'
import type { TapeEntry } from '../tape/tape.js'

// Element-level reference semantics: the arbitration rules the chain applies
// to one output element of one disputed op. Each function reproduces the
// pinned runtime bit for bit (checked against the backend in
// test/unit/protocols/reference.test.ts).

export type { OpShape, OperandRef } from './types.js'
export { ReferenceError } from './types.js'
export { expf, logf } from './musl.js'
export { DEFAULT_NAN, bitsOf, valueOf, isNaNBits } from './f32.js'
export { conv2dBackpropFilterValues, conv2dBackpropFilterElement, convPads } from './conv.js'
export { CANONICAL_NAN, pskMatMul, pskConv2D, pskConv2DBackpropInput, pskConv2DBackpropFilter, pskMaxPoolGrad, type ConvGeom, type MatMulDims } from './psk-kernels.js'

const CONV2D_BACKPROP_FILTER: KernelRef = {
  operands (op, flat) {
    // dW[r, c, i, o] reads column i of x [B*H*W, CI] and column o of dy [B*OH*OW, CO]
    checkFlat(flat, op.output.shape)
    const [, , i, o] = unravel(flat, op.output.shape)
    return [{ input: 0, axis: 'col', index: i }, { input: 1, axis: 'col', index: o }]
  },
  computeBits (op, flat, ops) {
    const [r, c] = unravel(flat, op.output.shape)
    if (op.output.dtype !== 'float32' || op.inputs.some(i => i.dtype !== 'float32')) throw new ReferenceError(`${op.kernel}: only float32 has an element reference`)
    return bitsOf(
      conv2dBackpropFilterElement(
        op.inputs[0].shape, op.inputs[1].shape,
        { ...(op.attrs as unknown as Conv2DFilterAttrs), filterShape: op.output.shape as [number, number, number, number] },
        r, c, ops[0], ops[1]
      )
    )
  }
}

const WASM: Record<string, KernelRef> = {
  ...ELEMENTWISE,
  ...REDUCE,
  ...POOL_CONV,
  BatchMatMul: WASM_MATMUL,
  _FusedMatMul: WASM_MATMUL,
  Conv2DBackpropFilter: CONV2D_BACKPROP_FILTER,
  Transpose: TRANSPOSE
}

/** psk1: tfjs-wasm with proofswarm's own MatMul and convolution kernels (psk.ts) */
const WASM_PSK: Record<string, KernelRef> = { ...WASM, ...PSK_KERNELS }

const RUNTIME_TABLES: Record<string, Record<string, KernelRef>> = { [WASM_RUNTIME]: WASM, [WASM_PSK_RUNTIME]: WASM_PSK, [CPU_RUNTIME]: CPU }

function table (runtime: string, kernel: string): KernelRef {
  const t = RUNTIME_TABLES[runtime]
  if (t === undefined) throw new ReferenceError(`runtime ${runtime} has no element-level reference semantics`)
  const k = t[kernel]
  if (k === undefined) throw new ReferenceError(`kernel ${kernel} has no element-level reference on ${runtime}`)
  return k
}

export function supportsElement (runtime: string, kernel: string): boolean {
  return RUNTIME_TABLES[runtime]?.[kernel] !== undefined
}

export function supportedKernels (runtime: string): string[] {
  return Object.keys(RUNTIME_TABLES[runtime] ?? {}).sort()
}

/** Which rows/columns of which inputs one output element reads. */
export function elementOperands (runtime: string, op: OpShape, flatIndex: number): OperandRef[] {
  if ((op.outputIndex ?? 0) !== 0) throw new ReferenceError(`${op.kernel}: only output 0 has element references`)
  return table(runtime, op.kernel).operands(op, flatIndex)
}

/**
 * The output element's bits from the operands (in the order of elementOperands):
 * the float32 bit pattern (NaN sign and payload included), an int32 as uint32,
 * a bool as its byte. This is what the chain compares with the committed bytes.
 */
export function computeElementBits (runtime: string, op: OpShape, flatIndex: number, operands: TypedValues[]): number {
  const k = table(runtime, op.kernel)
  const refs = k.operands(op, flatIndex)
  if (operands.length !== refs.length) throw new ReferenceError(`${op.kernel}: expected ${refs.length} operands, got ${operands.length}`)
  return k.computeBits(op, flatIndex, operands) >>> 0
}

/** The output element's value. A NaN's bits are not carried by a JS number: compare computeElementBits. */
export function computeElement (runtime: string, op: OpShape, flatIndex: number, operands: TypedValues[]): number {
  const b = computeElementBits(runtime, op, flatIndex, operands)
  if (op.output.dtype === 'float32') return valueOf(b)
  return op.output.dtype === 'int32' ? b | 0 : b
}

/** The OpShape of one output of a recorded tape entry (what the chain needs besides the operands). */
export function opShapeOf (entry: Pick<TapeEntry, 'kernel' | 'attrs' | 'inputs' | 'outputs'>, outputIndex = 0): OpShape {
  const out = entry.outputs[outputIndex]
  if (out === undefined) throw new ReferenceError(`${entry.kernel} has no output ${outputIndex}`)
  return {
    kernel: entry.kernel,
    attrs: entry.attrs,
    inputs: entry.inputs.map(i => ({ shape: [...i.shape], dtype: i.dtype })),
    output: { shape: [...out.shape], dtype: out.dtype },
    outputIndex
  }
}
