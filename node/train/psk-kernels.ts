import * as tf from '@tensorflow/tfjs'
import { convPads } from '../../protocols/reference/conv.js'
import type { ConvGeom } from '../../protocols/reference/psk-kernels.js'
import { noteNaNReport } from './nan-report.js'
import { registerElementwiseKernels } from './psk-elementwise.js'
import type { PskImpl } from './psk-native.js'

// Registers the psk1 kernels on tfjs' wasm backend in place of its
// BatchMatMul, _FusedMatMul, Conv2D, Conv2DBackpropInput,
// Conv2DBackpropFilter and MaxPoolGrad (and, natively, its Sum over leading
// axes and its elementwise ops, psk-elementwise.ts, with its own bits). They read their inputs and write their output in the
// wasm heap through views (no copies). Any case the psk1 reference does not
// define is refused with an error, never run another way.

interface WasmBackendLike {
  makeOutput: (shape: number[], dtype: string) => tf.TensorInfo
  typedArrayFromHeap: (t: tf.TensorInfo) => Float32Array | Int32Array | Uint8Array
}

export const PSK_KERNEL_NAMES = ['BatchMatMul', '_FusedMatMul', 'Conv2D', 'Conv2DBackpropInput', 'Conv2DBackpropFilter', 'MaxPoolGrad'] as const

function f32 (b: WasmBackendLike, t: tf.TensorInfo, what: string): Float32Array {
  if (t.dtype !== 'float32') throw new Error(`psk1 ${what}: only float32`)
  return b.typedArrayFromHeap(t) as Float32Array
}

function pair (v: unknown): [number, number] {
  if (typeof v === 'number') return [v, v]
  if (Array.isArray(v) && v.length === 2) return [Number(v[0]), Number(v[1])]
  throw new Error(`psk1: bad strides or dilations ${JSON.stringify(v)}`)
}

export interface ConvAttrs { strides: number | [number, number], pad: 'valid' | 'same' | number, dataFormat?: string, dilations?: number | [number, number], dimRoundingMode?: 'floor' | 'round' | 'ceil' }

export function convGeom (kernel: string, xShape: number[], fShape: number[], a: ConvAttrs, dyShape?: number[]): ConvGeom {
  if (a.dataFormat !== undefined && a.dataFormat !== 'NHWC' && a.dataFormat !== 'channelsLast') throw new Error(`psk1 ${kernel}: only NHWC`)
  if (a.dilations !== undefined && pair(a.dilations).some(d => d !== 1)) throw new Error(`psk1 ${kernel}: dilation is not supported`)
  if (typeof a.pad === 'object') throw new Error(`psk1 ${kernel}: explicit padding is not supported`)
  const [B, H, W, CI] = xShape; const [kh, kw, fci, CO] = fShape
  if (fci !== CI) throw new Error(`psk1 ${kernel}: filter has ${fci} input channels, the input ${CI}`)
  const p = convPads(H, W, kh, kw, a.strides, a.pad, a.dimRoundingMode)
  // the geometry tfjs derives must be the one the reference derives
  const info = tf.backend_util.computeConv2DInfo([B, H, W, CI], [kh, kw, CI, CO], a.strides, 1, a.pad, a.dimRoundingMode)
  if (info.outHeight !== p.outH || info.outWidth !== p.outW || info.padInfo.top !== p.padTop || info.padInfo.left !== p.padLeft) throw new Error(`psk1 ${kernel}: this padding's geometry differs between tfjs and the reference`)
  if (dyShape !== undefined && (dyShape[0] !== B || dyShape[1] !== p.outH || dyShape[2] !== p.outW || dyShape[3] !== CO)) throw new Error(`psk1 ${kernel}: dy shape [${dyShape.join(',')}] does not match`)
  return { B, H, W, CI, kh, kw, CO, OH: p.outH, OW: p.outW, sh: p.strideH, sw: p.strideW, padTop: p.padTop, padLeft: p.padLeft }
}

function matmulKernel (impl: PskImpl, name: string): tf.KernelFunc {
  return ({ inputs, backend, attrs }) => {
    const b = backend as unknown as WasmBackendLike
    const { a, b: bm, bias, preluActivationWeights } = inputs as Record<string, tf.TensorInfo | undefined>
    if (a === undefined || bm === undefined) throw new Error(`psk1 ${name}: needs a and b`)
    const at = (attrs ?? {}) as { transposeA?: boolean, transposeB?: boolean, activation?: string }
    const act = at.activation ?? 'linear'
    if (preluActivationWeights !== undefined || (act !== 'linear' && act !== 'relu')) throw new Error(`psk1 ${name}: activation ${act} is not supported`)
    const ta = at.transposeA === true; const tb = at.transposeB === true
    const ra = a.shape.length; const rb = bm.shape.length
    if (ra < 2 || rb < 2) throw new Error(`psk1 ${name}: rank >= 2 inputs needed`)
    const M = ta ? a.shape[ra - 1] : a.shape[ra - 2]; const K = ta ? a.shape[ra - 2] : a.shape[ra - 1]
    const K2 = tb ? bm.shape[rb - 1] : bm.shape[rb - 2]; const N = tb ? bm.shape[rb - 2] : bm.shape[rb - 1]
    if (K !== K2) throw new Error(`psk1 ${name}: inner dimensions ${K} and ${K2} differ`)
    const aOuter = a.shape.slice(0, -2); const bOuter = bm.shape.slice(0, -2)
    const aBatch = aOuter.reduce((x, y) => x * y, 1); const bBatch = bOuter.reduce((x, y) => x * y, 1)
    if (aBatch !== bBatch && aBatch !== 1 && bBatch !== 1) throw new Error(`psk1 ${name}: batch sizes ${aBatch} and ${bBatch} do not broadcast`)
    const outer = tf.broadcast_util.assertAndGetBroadcastShape(aOuter, bOuter)
    if (bias !== undefined && (bias.shape.length > 1 || (bias.shape.length === 1 && bias.shape[0] !== N && bias.shape[0] !== 1))) throw new Error(`psk1 ${name}: only a [N] or scalar bias`)
    const out = b.makeOutput([...outer, M, N], 'float32')
    // views after makeOutput: its allocation may grow (and replace) the heap's buffer
    noteNaNReport(out, impl.matmul(f32(b, a, name), f32(b, bm, name), f32(b, out, name), { batch: Math.max(aBatch, bBatch), aBatch, bBatch, M, N, K, ta, tb, relu: act === 'relu' }, bias === undefined ? undefined : f32(b, bias, name)))
    return out
  }
}

/** tfjs-wasm's own Sum, kept when the native one is registered over it (for every case but the columns one) */
let wasmSum: tf.KernelFunc | undefined

/**
 * Sum over every axis but the last (a bias gradient: [b,h,w,c] to [c]) natively, in place on the heap: tfjs-wasm
 * transposes the input first, a copy of the whole tensor. The same bits as its kernel (each column summed in
 * order from +0, NaNs by its rule), so this is not a psk1 kernel: the reference stays the wasm runtime's.
 */
function sumKernel (sumCols: NonNullable<PskImpl['sumCols']>): tf.KernelFunc {
  wasmSum ??= tf.getKernel('Sum', 'wasm')?.kernelFunc
  const fallback = wasmSum
  if (fallback === undefined) throw new Error('psk1: the wasm backend has no Sum kernel')
  return args => {
    const b = args.backend as unknown as WasmBackendLike
    const { x } = args.inputs as { x: tf.TensorInfo }
    const { axis, keepDims } = args.attrs as unknown as { axis: number | number[], keepDims: boolean }
    const rank = x.shape.length
    const size = tf.util.sizeFromShape(x.shape)
    if (x.dtype !== 'float32' || rank < 2 || size === 0) return fallback(args)
    const axes = [...new Set(tf.util.parseAxisParam(axis, x.shape))].sort((p, q) => p - q)
    if (axes.length !== rank - 1 || axes.some((a, i) => a !== i)) return fallback(args)
    const C = x.shape[rank - 1]
    const out = b.makeOutput(keepDims ? [...new Array<number>(rank - 1).fill(1), C] : [C], 'float32')
    sumCols(f32(b, x, 'Sum'), f32(b, out, 'Sum'), size / C, C)
    return out
  }
}

/**
 * The native kernels with tfjs-wasm's own bits (not psk1 kernels: their references are the wasm runtime's), for
 * either wasm runtime: Sum over leading axes and the elementwise ops, when the addon has them.
 */
export function registerSameBitsKernels (impl: PskImpl): void {
  if (impl.sumCols !== undefined) {
    const kernelFunc = sumKernel(impl.sumCols) // before unregistering: it keeps the wasm kernel for the other cases
    if (tf.getKernel('Sum', 'wasm') !== undefined) tf.unregisterKernel('Sum', 'wasm')
    tf.registerKernel({ kernelName: 'Sum', backendName: 'wasm', kernelFunc })
  }
  if (impl.binary !== undefined && impl.unary !== undefined) registerElementwiseKernels(impl.binary, impl.unary)
}

export function registerPskKernels (impl: PskImpl): void {
  const reg = (kernelName: string, kernelFunc: tf.KernelFunc): void => {
    if (tf.getKernel(kernelName, 'wasm') !== undefined) tf.unregisterKernel(kernelName, 'wasm')
    tf.registerKernel({ kernelName, backendName: 'wasm', kernelFunc })
  }
  registerSameBitsKernels(impl)
  reg('BatchMatMul', matmulKernel(impl, 'BatchMatMul'))
  reg('_FusedMatMul', matmulKernel(impl, '_FusedMatMul'))
  reg('Conv2D', ({ inputs, backend, attrs }) => {
    const b = backend as unknown as WasmBackendLike
    const { x, filter } = inputs as { x: tf.TensorInfo, filter: tf.TensorInfo }
    const g = convGeom('Conv2D', x.shape, filter.shape, attrs as unknown as ConvAttrs)
    const out = b.makeOutput([g.B, g.OH, g.OW, g.CO], 'float32')
    noteNaNReport(out, impl.conv2d(f32(b, x, 'Conv2D'), f32(b, filter, 'Conv2D'), f32(b, out, 'Conv2D'), g))
    return out
  })
  reg('Conv2DBackpropInput', ({ inputs, backend, attrs }) => {
    const b = backend as unknown as WasmBackendLike
    const { dy, filter } = inputs as { dy: tf.TensorInfo, filter: tf.TensorInfo }
    const a = attrs as unknown as ConvAttrs & { inputShape: number[] }
    const g = convGeom('Conv2DBackpropInput', a.inputShape, filter.shape, a, dy.shape)
    const out = b.makeOutput([g.B, g.H, g.W, g.CI], 'float32')
    noteNaNReport(out, impl.conv2dBackpropInput(f32(b, dy, 'Conv2DBackpropInput'), f32(b, filter, 'Conv2DBackpropInput'), f32(b, out, 'Conv2DBackpropInput'), g))
    return out
  })
  reg('Conv2DBackpropFilter', ({ inputs, backend, attrs }) => {
    const b = backend as unknown as WasmBackendLike
    const { x, dy } = inputs as { x: tf.TensorInfo, dy: tf.TensorInfo }
    const a = attrs as unknown as ConvAttrs & { filterShape: number[] }
    const g = convGeom('Conv2DBackpropFilter', x.shape, a.filterShape, a, dy.shape)
    const out = b.makeOutput([g.kh, g.kw, g.CI, g.CO], 'float32')
    noteNaNReport(out, impl.conv2dBackpropFilter(f32(b, x, 'Conv2DBackpropFilter'), f32(b, dy, 'Conv2DBackpropFilter'), f32(b, out, 'Conv2DBackpropFilter'), g))
    return out
  })
  reg('MaxPoolGrad', ({ inputs, backend, attrs }) => {
    const b = backend as unknown as WasmBackendLike
    const { dy, input } = inputs as { dy: tf.TensorInfo, input: tf.TensorInfo }
    const a = attrs as unknown as ConvAttrs & { filterSize: number | [number, number] }
    const [kh, kw] = pair(a.filterSize)
    const C = input.shape[3]
    const g = convGeom('MaxPoolGrad', input.shape, [kh, kw, C, C], a, dy.shape)
    const out = b.makeOutput([...input.shape], 'float32')
    noteNaNReport(out, impl.maxPoolGrad(f32(b, dy, 'MaxPoolGrad'), f32(b, input, 'MaxPoolGrad'), f32(b, out, 'MaxPoolGrad'), g))
    return out
  })
}
