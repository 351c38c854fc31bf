import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { NaNReport } from './nan-report.js'
import type { BinaryFn, UnaryFn } from './psk-elementwise.js'

// Loading the psk1 native addon (node/train/native), and nothing else: the
// state hashing thread loads it for its row and column roots, and must not
// load tfjs with it (psk-native.ts, the kernels' side, does; ~2 s of a
// worker's CPU at start-up).

export interface Addon {
  version: string
  /** built with optimisation (__OPTIMIZE__) */
  optimized: boolean
  /** whether the output holds a NaN (older builds return undefined) */
  matmul: (a: Float32Array, b: Float32Array, out: Float32Array, dims: Int32Array, bias: Float32Array | null) => NaNReport
  conv2d: (x: Float32Array, w: Float32Array, out: Float32Array, geom: Int32Array) => NaNReport
  conv2dBackpropInput: (dy: Float32Array, w: Float32Array, dx: Float32Array, geom: Int32Array) => NaNReport
  conv2dBackpropFilter: (x: Float32Array, dy: Float32Array, dw: Float32Array, geom: Int32Array) => NaNReport
  maxPoolGrad: (dy: Float32Array, x: Float32Array, dx: Float32Array, geom: Int32Array) => NaNReport
  /** the canonical runtime's kernels with its bits (wasm-native.ts); older builds lack them */
  wasmConv2dBackpropFilter?: (x: Float32Array, dy: Float32Array, dw: Float32Array, geom: Int32Array) => NaNReport
  wasmConv2dBackpropInput?: (dy: Float32Array, w: Float32Array, dx: Float32Array, geom: Int32Array) => NaNReport
  wasmMaxPoolGrad?: (dy: Float32Array, x: Float32Array, dx: Float32Array, geom: Int32Array) => NaNReport
  /** older builds lack it */
  sumCols?: (x: Float32Array, out: Float32Array, dims: Int32Array) => void
  /** older builds lack it; false when the process exports no sha256 (protocols/commit v2 row and column roots into out) */
  axisRoots?: (bytes: Uint8Array, dims: Int32Array, out: Uint8Array) => boolean
  /** older builds lack it; false when the process exports no sha256 (protocols/commit/chunked.ts's chunk tree root of bytes, [chunkBytes, leaf prefix], into out) */
  chunkRoot?: (bytes: Uint8Array, dims: Int32Array, out: Uint8Array) => boolean
  /** older builds lack them */
  binary?: BinaryFn
  unary?: UnaryFn
  /** whether the array holds a NaN (older builds lack it) */
  hasNaN?: (v: Float32Array) => boolean
}

/** node/train/native of this package (from node/train in the sources, dist/node/train when built). */
export function nativeDir (): string {
  let d = dirname(fileURLToPath(import.meta.url))
  for (let i = 0; i < 6; i++) {
    if (existsSync(join(d, 'package.json'))) return join(d, 'node', 'train', 'native')
    d = dirname(d)
  }
  throw new Error('psk kernels: package root not found')
}

export function addonFile (): string {
  return process.env.PROOFSWARM_PSK_ADDON ?? join(nativeDir(), 'build', 'Release', 'psk_kernels.node')
}

export /** The built addon, or why it is not there or does not load. */
function openAddon (): Addon | { error: string } {
  const dir = nativeDir()
  const file = addonFile()
  if (!existsSync(file)) {
    const reason = join(dir, 'build', 'NOT-BUILT.txt')
    return { error: existsSync(reason) ? readFileSync(reason, 'utf8').trim() : `${file} does not exist (npm ci builds it; or run npm run build:kernels)` }
  }
  let addon: Addon
  try {
    addon = createRequire(import.meta.url)(file) as Addon
  } catch (e) {
    return { error: `${file} does not load: ${(e as Error).message}` }
  }
  if (addon.version !== 'psk1') return { error: `${file} implements ${String(addon.version)}, not psk1 (rebuild: npm run build:kernels)` }
  return addon
}

/**
 * The addon's row and column Merkle roots of a tensor (protocols/commit's
 * commitment, version 2; OpenSSL's sha256 straight over the tensor's bytes,
 * ~2× node/train/fast-commit.ts's own), into out[0..64): a function that
 * returns false when it cannot, or undefined when the addon is missing, older
 * or PROOFSWARM_PSK_NATIVE=0.
 */
export function nativeAxisRoots (): ((bytes: Uint8Array, dims: Int32Array, out: Uint8Array) => boolean) | undefined {
  if (process.env.PROOFSWARM_PSK_NATIVE === '0') return undefined
  const addon = openAddon()
  return 'error' in addon || typeof addon.axisRoots !== 'function' ? undefined : addon.axisRoots
}

/** The addon's chunk tree root (protocols/commit/chunked.ts), like nativeAxisRoots: undefined when the addon is missing, older or off. */
export function nativeChunkRoot (): ((bytes: Uint8Array, dims: Int32Array, out: Uint8Array) => boolean) | undefined {
  if (process.env.PROOFSWARM_PSK_NATIVE === '0') return undefined
  const addon = openAddon()
  return 'error' in addon || typeof addon.chunkRoot !== 'function' ? undefined : addon.chunkRoot
}
