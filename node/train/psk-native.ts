import type { NaNReport } from './nan-report.js'
import type { BinaryFn, UnaryFn } from './psk-elementwise.js'
import { pskSelfTest } from './psk-selftest.js'
import { addonFile, openAddon } from './psk-addon.js'
import { pskConv2D, pskConv2DBackpropFilter, pskConv2DBackpropInput, pskMatMul, pskMaxPoolGrad, type ConvGeom, type MatMulDims } from '../../protocols/reference/psk-kernels.js'

export { nativeDir } from './psk-addon.js'

// The psk1 kernels' implementations: the native addon (node/train/native,
// built by `npm ci` through scripts/build-kernels.mjs) when it loads, else the
// JavaScript kernels of protocols/reference/psk-kernels.ts (the same bits,
// slower). PROOFSWARM_PSK_NATIVE=0 forces the JavaScript ones;
// PROOFSWARM_PSK_ADDON=<file> loads another build of the addon (tests of its
// instruction-set versions). Training uses the addon only after its self-test
// (psk-selftest.ts) gave the reference's bits on this machine.

export interface PskImpl {
  kind: 'native' | 'js'
  /** native only: whether the addon was compiled with optimisation */
  optimized?: boolean
  /** why this implementation (for the backend's log line) */
  why: string
  threads: number
  /** the kernels return whether their output holds a NaN where they know it (the native ones; nan-report.ts) */
  matmul: (a: Float32Array, b: Float32Array, out: Float32Array, d: MatMulDims, bias?: Float32Array) => NaNReport
  conv2d: (x: Float32Array, w: Float32Array, out: Float32Array, g: ConvGeom) => NaNReport
  conv2dBackpropInput: (dy: Float32Array, w: Float32Array, dx: Float32Array, g: ConvGeom) => NaNReport
  conv2dBackpropFilter: (x: Float32Array, dy: Float32Array, dw: Float32Array, g: ConvGeom) => NaNReport
  /** g.CO = g.CI = channels */
  maxPoolGrad: (dy: Float32Array, x: Float32Array, dx: Float32Array, g: ConvGeom) => NaNReport
  /**
   * native only: tfjs-wasm's Sum over every axis but the last (x as [rows, cols]), the same bits as its kernel
   * (NaNs included) without its transpose; not a psk1 kernel (its reference stays the wasm runtime's)
   */
  sumCols?: (x: Float32Array, out: Float32Array, rows: number, cols: number) => void
  /**
   * native only: tfjs-wasm's elementwise kernels with its bits (not psk1 kernels): out[i] = a[i] op b[i % b.length]
   * (psk-elementwise.ts)
   */
  binary?: BinaryFn
  unary?: UnaryFn
}

export const JS_IMPL: Omit<PskImpl, 'why'> = {
  kind: 'js',
  threads: 1,
  matmul: pskMatMul,
  conv2d: pskConv2D,
  conv2dBackpropInput: pskConv2DBackpropInput,
  conv2dBackpropFilter: pskConv2DBackpropFilter,
  maxPoolGrad: pskMaxPoolGrad
}

function geomArray (g: ConvGeom, threads: number): Int32Array {
  return Int32Array.of(g.B, g.H, g.W, g.CI, g.kh, g.kw, g.CO, g.OH, g.OW, g.sh, g.sw, g.padTop, g.padLeft, threads)
}

/**
 * The addon's NaN scan (SIMD, ~10x the builtin `includes(NaN)`) for the NaN watch, or
 * undefined when the addon is missing or PROOFSWARM_PSK_NATIVE=0.
 */
export function nativeNaNScan (): ((v: Float32Array) => boolean) | undefined {
  if (process.env.PROOFSWARM_PSK_NATIVE === '0') return undefined
  const addon = openAddon()
  return 'error' in addon || typeof addon.hasNaN !== 'function' ? undefined : addon.hasNaN
}

/** The addon's implementation, or why it cannot load. `threads`: output rows split over 1 or 2 threads (the bits do not depend on it). */
export function loadNative (threads: number): Omit<PskImpl, 'why'> | { error: string } {
  const addon = openAddon()
  if ('error' in addon) return addon
  const t = threads >= 2 ? 2 : 1
  return {
    kind: 'native',
    optimized: addon.optimized,
    threads: t,
    matmul: (a, b, out, d, bias) => addon.matmul(
      a, b, out, Int32Array.of(d.batch, d.aBatch, d.bBatch, d.M, d.N, d.K, d.ta ? 1 : 0, d.tb ? 1 : 0, d.relu ? 1 : 0, t), bias ?? null
    ),
    conv2d: (x, w, out, g) => addon.conv2d(x, w, out, geomArray(g, t)),
    conv2dBackpropInput: (dy, w, dx, g) => addon.conv2dBackpropInput(dy, w, dx, geomArray(g, t)),
    conv2dBackpropFilter: (x, dy, dw, g) => addon.conv2dBackpropFilter(x, dy, dw, geomArray(g, t)),
    maxPoolGrad: (dy, x, dx, g) => addon.maxPoolGrad(dy, x, dx, geomArray(g, t)),
    ...(typeof addon.sumCols === 'function' ? { sumCols: (x: Float32Array, out: Float32Array, rows: number, cols: number) => addon.sumCols?.(x, out, Int32Array.of(rows, cols)) } : {}),
    ...(typeof addon.binary === 'function' && typeof addon.unary === 'function' ? { binary: addon.binary, unary: addon.unary } : {})
  }
}

const selfTests = new Map<number, string[]>()

/**
 * The implementation training uses: native unless it is missing, PROOFSWARM_PSK_NATIVE=0, or its
 * self-test found a kernel whose bits differ from the reference's on this machine (once per process).
 */
export function pskImpl (threads: number): PskImpl {
  if (process.env.PROOFSWARM_PSK_NATIVE === '0') return { ...JS_IMPL, why: 'PROOFSWARM_PSK_NATIVE=0' }
  const n = loadNative(threads)
  if ('error' in n) return { ...JS_IMPL, why: `addon not built because ${n.error}` }
  let mismatches = selfTests.get(n.threads)
  if (mismatches === undefined) {
    mismatches = pskSelfTest(n, JS_IMPL).mismatches
    selfTests.set(n.threads, mismatches)
  }
  if (mismatches.length > 0) {
    return { ...JS_IMPL, why: `the native kernels of ${addonFile()} differ from the reference on this machine (${mismatches.length} cases, first: ${mismatches[0]}); rebuild them (npm run build:kernels)` }
  }
  return { ...n, why: addonFile() }
}
