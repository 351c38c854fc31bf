import * as tf from '@tensorflow/tfjs'
import { convGeom, type ConvAttrs } from './psk-kernels.js'
import type { ConvGeom } from '../../protocols/reference/psk-kernels.js'
import { noteNaNReport, reportedNaNFree, type NaNReport } from './nan-report.js'
import { openAddon, type Addon } from './psk-addon.js'

// The canonical runtime's (tfjs-wasm@4.22.0-simd) three costliest CNN kernels natively, with ITS bits, from the
// psk1 addon: Conv2DBackpropFilter (ours, wasm-kernels.ts: float64 sums, rounded once), Conv2DBackpropInput and
// MaxPoolGrad (the pinned binary's). Their element references are unchanged (protocols/reference/conv.ts,
// pool-conv.ts): these are not new semantics. Every case they were not tested on (another geometry, dtype or
// layout) runs the kernel they replace. Before they are registered, a self-test runs both on fixed cases with
// special values on this machine; any bit of difference and the original kernels stay.

interface WasmBackendLike {
  makeOutput: (shape: number[], dtype: string) => tf.TensorInfo
  typedArrayFromHeap: (t: tf.TensorInfo) => Float32Array | Int32Array | Uint8Array
}

type Native = (a: Float32Array, b: Float32Array, out: Float32Array, geom: Int32Array) => NaNReport
export const WASM_NATIVE_KERNELS = ['Conv2DBackpropFilter', 'Conv2DBackpropInput', 'MaxPoolGrad'] as const
type Name = typeof WASM_NATIVE_KERNELS[number]

function geomArray (g: ConvGeom): Int32Array {
  // one thread: the canonical runtime runs its kernels on one
  return Int32Array.of(g.B, g.H, g.W, g.CI, g.kh, g.kw, g.CO, g.OH, g.OW, g.sh, g.sw, g.padTop, g.padLeft, 1)
}

function pairOf (v: unknown): [number, number] {
  return typeof v === 'number' ? [v, v] : Array.isArray(v) && v.length === 2 ? [Number(v[0]), Number(v[1])] : [Number.NaN, Number.NaN]
}

/** The geometry of a call the native kernel is known to match, else undefined (the original kernel runs). */
function geometry (name: Name, inputs: Record<string, tf.TensorInfo>, attrs: Record<string, unknown>): ConvGeom | undefined {
  const a = attrs as unknown as ConvAttrs & { inputShape?: number[], filterShape?: number[], filterSize?: number | [number, number] }
  if (Object.values(inputs).some(t => t.dtype !== 'float32' || t.shape.length !== 4)) return undefined
  if (a.dimRoundingMode !== undefined) return undefined
  try {
    if (name === 'Conv2DBackpropFilter') return convGeom(name, inputs.x.shape, a.filterShape ?? [], a, inputs.dy.shape)
    if (name === 'Conv2DBackpropInput') return convGeom(name, a.inputShape ?? [], inputs.filter.shape, a, inputs.dy.shape)
    const [kh, kw] = pairOf(a.filterSize)
    const C = inputs.input.shape[3]
    return convGeom(name, inputs.input.shape, [kh, kw, C, C], a, inputs.dy.shape)
  } catch {
    return undefined
  }
}

function nativeKernel (name: Name, native: Native, original: tf.KernelFunc): tf.KernelFunc {
  return args => {
    const inputs = args.inputs as Record<string, tf.TensorInfo>
    const g = geometry(name, inputs, (args.attrs ?? {}) as Record<string, unknown>)
    if (g === undefined) return original(args)
    const b = args.backend as unknown as WasmBackendLike
    const shape = name === 'Conv2DBackpropFilter' ? [g.kh, g.kw, g.CI, g.CO] : [g.B, g.H, g.W, g.CI]
    const out = b.makeOutput(shape, 'float32')
    // views after makeOutput: its allocation may grow (and replace) the heap's buffer
    const heap = (t: tf.TensorInfo): Float32Array => b.typedArrayFromHeap(t) as Float32Array
    const [p0, p1] = name === 'Conv2DBackpropFilter' ? [inputs.x, inputs.dy] : name === 'Conv2DBackpropInput' ? [inputs.dy, inputs.filter] : [inputs.dy, inputs.input]
    noteNaNReport(out, native(heap(p0), heap(p1), heap(out), geomArray(g)))
    return out
  }
}

/** ±0, subnormals, ±1, the largest finite value, ±Inf and NaNs of several payloads, as bits */
const SPECIALS = [0x00000000, 0x80000000, 0x00000001, 0x807fffff, 0x3f800000, 0xbf800000, 0x7f7fffff, 0xff800000, 0x7f800000]
const NANS = [0x7fc00000, 0xffc01234, 0x7f800001]

class Values {
  private s = 0x5eed4321
  private rand (): number { this.s = (Math.imul(this.s, 1664525) + 1013904223) >>> 0; return this.s / 2 ** 32 }
  /** values in ±2 with one in 12 special (`specials`), and NaNs (`nans`: one in 40) */
  make (n: number, specials: number[], nans: number[]): Float32Array {
    const v = new Float32Array(n); const u = new Uint32Array(v.buffer)
    for (let i = 0; i < n; i++) {
      const p = this.rand()
      if (nans.length > 0 && p < 1 / 40) u[i] = nans[Math.floor(this.rand() * nans.length)]
      else if (specials.length > 0 && p < 1 / 12) u[i] = specials[Math.floor(this.rand() * specials.length)]
      else v[i] = (this.rand() - 0.5) * 4
    }
    return v
  }
}

export interface WasmGradCase { name: Name, inputs: Record<string, [number[], Float32Array]>, attrs: Record<string, unknown> }

/**
 * Fixed cases: the zoo CNN's layers, odd sizes, strides 1 and 2, valid and same padding, on finite values, on
 * special values, and with NaNs (one payload where the runtime's own sums let two NaNs meet: which of two
 * different NaNs its C++ loop keeps is not fixed, protocols/reference/dot.ts).
 */
export function wasmGradCases (): WasmGradCase[] {
  const v = new Values()
  const cases: WasmGradCase[] = []
  const geoms: Array<[number, number, number, number, number, number, number, 'valid' | 'same']> = [
    [2, 28, 28, 1, 3, 8, 1, 'valid'], [2, 13, 13, 8, 3, 16, 1, 'valid'], [1, 9, 30, 3, 3, 17, 1, 'same'],
    [2, 11, 11, 5, 5, 24, 2, 'valid'], [1, 8, 9, 16, 3, 12, 2, 'same'], [1, 7, 7, 4, 2, 9, 1, 'same']
  ]
  for (const [B, H, W, CI, k, CO, s, pad] of geoms) {
    const p = tf.backend_util.computeConv2DInfo([B, H, W, CI], [k, k, CI, CO], s, 1, pad)
    for (const [specials, nans, oneNaN] of [[[], [], false], [SPECIALS, [], false], [[], NANS, false], [[], [0x7fc00000], true]] as const) {
      const x = v.make(B * H * W * CI, [...specials], [...nans]); const dy = v.make(B * p.outHeight * p.outWidth * CO, [...specials], [...nans])
      const w = v.make(k * k * CI * CO, [...specials], [...nans])
      cases.push({ name: 'Conv2DBackpropFilter', inputs: { x: [[B, H, W, CI], x], dy: [[B, p.outHeight, p.outWidth, CO], dy] }, attrs: { strides: s, pad, filterShape: [k, k, CI, CO], dataFormat: 'NHWC' } })
      // two different NaNs meeting in the binary's own loop have no fixed result: only finite, Inf or one-payload cases
      if (nans.length === 0 || oneNaN) cases.push({ name: 'Conv2DBackpropInput', inputs: { dy: [[B, p.outHeight, p.outWidth, CO], dy], filter: [[k, k, CI, CO], w] }, attrs: { strides: s, pad, inputShape: [B, H, W, CI], dataFormat: 'NHWC' } })
    }
  }
  const pools: Array<[number, number, number, number, number, number, 'valid' | 'same']> = [
    [2, 26, 26, 8, 2, 2, 'valid'], [2, 11, 11, 16, 2, 2, 'valid'], [1, 9, 9, 17, 3, 2, 'same'], [1, 7, 8, 5, 3, 1, 'valid'], [2, 6, 7, 3, 2, 1, 'same']
  ]
  for (const [B, H, W, C, k, s, pad] of pools) {
    const p = tf.backend_util.computePool2DInfo([B, H, W, C], k, s, 1, pad)
    for (const [specials, nans] of [[[], []], [SPECIALS, []], [SPECIALS, NANS]] as const) {
      // values mostly negative too, so windows without a value >= FLT_MIN (the argmax's quirk) occur
      const x = v.make(B * H * W * C, [...specials], [...nans]); const dy = v.make(B * p.outHeight * p.outWidth * C, [...specials], [...nans])
      cases.push({ name: 'MaxPoolGrad', inputs: { dy: [[B, p.outHeight, p.outWidth, C], dy], input: [[B, H, W, C], x] }, attrs: { filterSize: k, strides: s, pad } })
    }
  }
  return cases
}

/** Runs one case through a kernel function on the wasm backend: its output's bits, and whether it was reported NaN-free. */
export function runWasmGradCase (c: WasmGradCase, kernelFunc: tf.KernelFunc): { bits: Uint32Array, reportedFree: boolean } {
  const inputs = Object.fromEntries(Object.entries(c.inputs).map(([k, [shape, values]]) => [k, tf.tensor(values, shape, 'float32')]))
  try {
    const backend = tf.backend()
    const out = kernelFunc({ inputs, backend, attrs: c.attrs as tf.NamedAttrMap }) as tf.TensorInfo
    const reportedFree = reportedNaNFree(out)
    const t = tf.engine().makeTensorFromTensorInfo(out)
    const bits = new Uint32Array((t.dataSync() as Float32Array).slice().buffer)
    t.dispose()
    return { bits, reportedFree }
  } finally {
    for (const t of Object.values(inputs)) t.dispose()
  }
}

/** Where the native and original kernels differ on a case (bits, or a NaN-free report of an output holding a NaN). */
export function wasmGradMismatch (c: WasmGradCase, native: tf.KernelFunc, original: tf.KernelFunc): string | undefined {
  const want = runWasmGradCase(c, original).bits
  const got = runWasmGradCase(c, native)
  const i = want.length !== got.bits.length ? 0 : want.findIndex((u, j) => u !== got.bits[j])
  if (i >= 0) return `${c.name}: element ${i} 0x${got.bits[i]?.toString(16)} != 0x${want[i]?.toString(16)}`
  if (got.reportedFree && got.bits.some(u => (u & 0x7fffffff) >>> 0 > 0x7f800000)) return `${c.name}: reported no NaN in an output that holds one`
  return undefined
}

export interface WasmNative { kind: 'native' | 'wasm', why: string }

/** the backend's own kernels, as found before the first registration (the originals the self-test compares with) */
let originals: Record<Name, tf.KernelFunc> | undefined
/** their whole registrations (setupFunc and disposeFunc included): what is registered again when the originals stay */
let originalConfigs: Record<Name, tf.KernelConfig> | undefined

/** The original kernels, once registerWasmNativeKernels has run (tests compare against them). */
export function wasmGradOriginals (): Readonly<Record<Name, tf.KernelFunc>> | undefined { return originals }

/**
 * Registers the native kernels over the wasm backend's (call after tf.setBackend('wasm'), canonical runtime only)
 * when the addon loads and its self-test gives the original kernels' bits on every case; else the originals stay
 * (or are put back).
 */
export function registerWasmNativeKernels (addon: Addon | { error: string } = openAddon()): WasmNative {
  if (originals === undefined) {
    const found: Partial<Record<Name, tf.KernelConfig>> = {}
    for (const name of WASM_NATIVE_KERNELS) {
      const k = tf.getKernel(name, 'wasm')
      if (k === undefined) return { kind: 'wasm', why: `the wasm backend has no ${name}` }
      found[name] = k
    }
    originalConfigs = found as Record<Name, tf.KernelConfig>
    originals = Object.fromEntries(WASM_NATIVE_KERNELS.map(n => [n, originalConfigs![n].kernelFunc])) as Record<Name, tf.KernelFunc>
  }
  const orig = originals
  const configs = originalConfigs!
  // the original's setupFunc stays with either function: a backend initialised again runs it
  const register = (pick: (name: Name) => tf.KernelFunc): void => {
    for (const name of WASM_NATIVE_KERNELS) {
      tf.unregisterKernel(name, 'wasm')
      const f = pick(name)
      tf.registerKernel(f === orig[name] ? configs[name] : { ...configs[name], kernelFunc: f })
    }
  }
  register(name => orig[name])
  if (process.env.PROOFSWARM_PSK_NATIVE === '0') return { kind: 'wasm', why: 'PROOFSWARM_PSK_NATIVE=0' }
  if ('error' in addon) return { kind: 'wasm', why: addon.error }
  const natives: Record<Name, Native | undefined> = {
    Conv2DBackpropFilter: addon.wasmConv2dBackpropFilter, Conv2DBackpropInput: addon.wasmConv2dBackpropInput, MaxPoolGrad: addon.wasmMaxPoolGrad
  }
  const replaced: Partial<Record<Name, tf.KernelFunc>> = {}
  for (const name of WASM_NATIVE_KERNELS) {
    const native = natives[name]
    if (typeof native !== 'function') return { kind: 'wasm', why: `the addon (an older build) has no ${name} with this runtime's bits` }
    replaced[name] = nativeKernel(name, native.bind(addon), orig[name])
  }
  for (const c of wasmGradCases()) {
    const wrong = wasmGradMismatch(c, replaced[c.name] as tf.KernelFunc, orig[c.name])
    if (wrong !== undefined) return { kind: 'wasm', why: `the native kernels differ from the runtime's on this machine (${wrong}); rebuild the addon (npm run build:kernels)` }
  }
  register(name => replaced[name] as tf.KernelFunc)
  return { kind: 'native', why: 'self-test passed' }
}
