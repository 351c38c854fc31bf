import * as tf from '@tensorflow/tfjs'
import { noteNaNReport, type NaNReport } from './nan-report.js'

// tfjs-wasm's elementwise float32 kernels, natively, with its bits: not psk1 kernels (their element
// references stay the wasm runtime's, protocols/reference/elementwise.ts), the same kernel names, inputs
// and outputs, so tapes and claims are unchanged. Worth it where tfjs-wasm is slow: a bias add broadcasts
// a row of 8 or 16 values, which XNNPACK runs row by row (0.55 ms for a CNN's [64,26,26,8] + [8]), and
// the per-call cost of its small ops. The cases handled are the same shape, a scalar, and a row over the
// last axis; every other case (int32, broadcasting of the first operand but by a scalar, one element)
// is tfjs-wasm's own kernel.

/** out[i] = a[i] op b[i % b.length]; op is the index in ELEMENTWISE_BINARY; returns whether out holds a NaN (nan-report.ts) */
export type BinaryFn = (a: Float32Array, b: Float32Array, out: Float32Array, op: number) => NaNReport
/** op is the index in ELEMENTWISE_UNARY; alpha is Step's; returns whether out holds a NaN, undefined for Relu and Step */
export type UnaryFn = (x: Float32Array, out: Float32Array, op: number, alpha: number) => NaNReport

/** the native binary ops, in the addon's order (psk-kernels.h PSK_ADD …) */
export const ELEMENTWISE_BINARY = ['Add', 'Sub', 'Multiply', 'RealDiv'] as const
/** the native unary ops, in the addon's order (psk-kernels.h PSK_RELU …) */
export const ELEMENTWISE_UNARY = ['Relu', 'Step', 'Square', 'Sqrt'] as const
/**
 * XNNPACK computes a commutative op as "b op scalar a" when a is the scalar (protocols/reference/elementwise.ts,
 * `swapped`): with two NaN operands, b's comes out, so the native call swaps them the same way.
 */
const COMMUTATIVE = new Set<string>(['Add', 'Multiply'])

interface WasmBackendLike {
  makeOutput: (shape: number[], dtype: string) => tf.TensorInfo
  typedArrayFromHeap: (t: tf.TensorInfo) => Float32Array | Int32Array | Uint8Array
}

const size = (s: readonly number[]): number => s.reduce((x, y) => x * y, 1)

/** b broadcasts as a row over out's last axis: its shape is [C] after leading 1s, C = out's last dimension */
function isRow (b: readonly number[], out: readonly number[]): boolean {
  const s = b.slice(b.findIndex(d => d !== 1))
  return s.length === 1 && out.length > 0 && s[0] === out[out.length - 1]
}

function binaryKernel (name: string, op: number, binary: BinaryFn, wasm: tf.KernelFunc): tf.KernelFunc {
  return args => {
    let { a, b } = args.inputs as { a: tf.TensorInfo, b: tf.TensorInfo }
    if (a.dtype !== 'float32' || b.dtype !== 'float32') return wasm(args)
    const shape = tf.backend_util.assertAndGetBroadcastShape(a.shape, b.shape)
    const n = size(shape)
    if (n <= 1) return wasm(args)
    if (size(a.shape) !== n) {
      if (!(COMMUTATIVE.has(name) && size(a.shape) === 1 && size(b.shape) === n)) return wasm(args);
      [a, b] = [b, a]
    }
    const nb = size(b.shape)
    if (nb !== n && nb !== 1 && !isRow(b.shape, shape)) return wasm(args)
    const be = args.backend as unknown as WasmBackendLike
    const out = be.makeOutput(shape, 'float32')
    // views after makeOutput: its allocation may grow (and replace) the heap's buffer
    const heap = (t: tf.TensorInfo): Float32Array => be.typedArrayFromHeap(t) as Float32Array
    noteNaNReport(out, binary(heap(a), heap(b), heap(out), op))
    return out
  }
}

function unaryKernel (op: number, unary: UnaryFn, wasm: tf.KernelFunc): tf.KernelFunc {
  return args => {
    const { x } = args.inputs as { x: tf.TensorInfo }
    if (x.dtype !== 'float32' || size(x.shape) === 0) return wasm(args)
    const alpha = Number((args.attrs as { alpha?: number } | undefined)?.alpha ?? 0)
    const be = args.backend as unknown as WasmBackendLike
    const out = be.makeOutput([...x.shape], 'float32')
    noteNaNReport(out, unary(be.typedArrayFromHeap(x) as Float32Array, be.typedArrayFromHeap(out) as Float32Array, op, alpha))
    return out
  }
}

/** tfjs-wasm's own kernel of each name replaced (so that registering again wraps it, not a wrapper) */
const WASM = new Map<string, tf.KernelFunc>()

/** tfjs-wasm's own kernel `name` where a native one replaced it (tests compare the two) */
export function wasmElementwiseKernel (name: string): tf.KernelFunc | undefined {
  return WASM.get(name)
}

/** Registers the native elementwise kernels over tfjs-wasm's (which they call for the cases they leave). */
export function registerElementwiseKernels (binary: BinaryFn, unary: UnaryFn): void {
  const replace = (name: string, make: (wasm: tf.KernelFunc) => tf.KernelFunc): void => {
    const cfg = tf.getKernel(name, 'wasm')
    if (cfg === undefined) throw new Error(`the wasm backend has no ${name} kernel`)
    const wasm = WASM.get(name) ?? cfg.kernelFunc
    WASM.set(name, wasm)
    tf.unregisterKernel(name, 'wasm')
    tf.registerKernel({ ...cfg, kernelFunc: make(wasm) })
  }
  ELEMENTWISE_BINARY.forEach((name, op) => replace(name, wasm => binaryKernel(name, op, binary, wasm)))
  ELEMENTWISE_UNARY.forEach((name, op) => replace(name, wasm => unaryKernel(op, unary, wasm)))
}
