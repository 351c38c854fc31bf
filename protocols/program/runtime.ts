// Runtime ids a program can pin. Only a verifiable runtime can back a proof:
// its kernels are bitwise reproducible across machines and have element-level
// reference semantics in protocols/reference.

export const WASM_RUNTIME = 'tfjs-wasm@4.22.0-simd'
/**
 * The same pinned tfjs-wasm binary with proofswarm's own MatMul and convolution
 * kernels (psk1: one sequential float32 reduction per output element, NaN
 * outputs canonical; native addon node/train/native, or the same arithmetic in
 * JavaScript, protocols/reference/psk-kernels.ts).
 */
export const WASM_PSK_RUNTIME = 'tfjs-wasm@4.22.0-simd+psk1'
export const CPU_RUNTIME = 'tfjs-cpu@4.22.0'
export const NODE_RUNTIME = 'tfjs-node@4.22.0'
export const NODE_GPU_RUNTIME = 'tfjs-node-gpu@4.22.0'

export interface RuntimeInfo {
  id: string
  backend: 'wasm' | 'cpu' | 'tensorflow'
  verifiable: boolean
  note: string
}

export const RUNTIMES: Record<string, RuntimeInfo> = {
  [WASM_RUNTIME]: { id: WASM_RUNTIME, backend: 'wasm', verifiable: true, note: 'canonical: pinned SIMD .wasm, single thread' },
  [WASM_PSK_RUNTIME]: { id: WASM_PSK_RUNTIME, backend: 'wasm', verifiable: true, note: 'the pinned SIMD .wasm with proofswarm kernels (psk1) for MatMul, Conv2D and their gradients: native when built, else JavaScript, the same bits' },
  [CPU_RUNTIME]: { id: CPU_RUNTIME, backend: 'cpu', verifiable: true, note: 'plain JS kernels; deterministic (local proofs and replays) but differs from wasm; most kernels have no element reference, so tasks on it are not admissible on chain' },
  [NODE_RUNTIME]: { id: NODE_RUNTIME, backend: 'tensorflow', verifiable: false, note: 'libtensorflow; fast, not bitwise reproducible across machines' },
  [NODE_GPU_RUNTIME]: { id: NODE_GPU_RUNTIME, backend: 'tensorflow', verifiable: false, note: 'CUDA; fast, not bitwise reproducible' }
}

/**
 * Runtimes a peer runs at full speed only with something a machine may lack
 * (psk1: its native addon; without it the same bits come from JavaScript
 * kernels several times slower). A peer declares on chain which of these it
 * runs (set_runtimes), and the chain selects and draws for a task on one only
 * peers that declared it; every other runtime needs nothing but the node.
 */
export const DECLARED_RUNTIMES: readonly string[] = [WASM_PSK_RUNTIME]

export function runtimeInfo (id: string): RuntimeInfo {
  const r = RUNTIMES[id]
  if (r === undefined) throw new RangeError(`unknown runtime "${id}": use one of ${Object.keys(RUNTIMES).join(', ')}`)
  return r
}
