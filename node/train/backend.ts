import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import * as tf from '@tensorflow/tfjs'
import { setWasmPaths } from '@tensorflow/tfjs-backend-wasm'
import { availableParallelism } from 'node:os'
import { CPU_RUNTIME, NODE_GPU_RUNTIME, NODE_RUNTIME, WASM_PSK_RUNTIME, WASM_RUNTIME } from '../../protocols/program/runtime.js'
import { DEFAULT_NAN } from '../../protocols/reference/f32.js'
import { registerWasmExtraKernels } from './wasm-kernels.js'
import { registerWasmNativeKernels } from './wasm-native.js'
import { registerAliasKernels } from './alias-kernels.js'
import { registerPskKernels, registerSameBitsKernels } from './psk-kernels.js'
import { pskImpl } from './psk-native.js'
import { BACKEND_CHOICES, type BackendChoice } from './backend-choice.js'
import { guardBackendInit } from './wasm-listeners.js'

// Backend selection. tfjs has one global engine per process, so the backend is
// chosen once; asking for a different one later is an error, not a silent switch.

export { BACKEND_CHOICES, type BackendChoice } from './backend-choice.js'

// importing tfjs-backend-wasm registered it: its Emscripten start-up must not leave its process listeners (wasm-listeners.ts)
guardBackendInit('wasm')

/** sha256 of tfjs-backend-wasm@4.22.0 dist/tfjs-backend-wasm-simd.wasm: the pinned binary. */
export const PINNED_WASM_SHA256 = '77ebb28a6d34f371dbbf2086b7f2de8994acd8ea5a3cf1fa24d2c26c840cac7b'

export interface BackendInfo {
  /** tfjs backend name */
  name: 'wasm' | 'cpu' | 'tensorflow'
  /** runtime id this backend implements (see protocols/program/runtime.ts) */
  runtime: string
  verifiable: boolean
  /** why this backend runs (for the log line) */
  reason: string
  wasmFile?: string
  wasmSha256?: string
  threads?: number
  /** psk1 runtime: which implementation of its kernels runs */
  kernels?: 'native' | 'js'
  /** canonical wasm runtime: whether its Conv2DBackpropFilter, Conv2DBackpropInput and MaxPoolGrad run natively (the same bits) */
  gradKernels?: 'native' | 'wasm'
}

let active: BackendInfo | undefined

/** The wasm backend's kernels as tfjs-backend-wasm registered them: those of the pinned runtime, before any replaced. */
const PINNED_WASM_KERNELS = new Map(tf.getKernelsForBackend('wasm').map(k => [k.kernelName, k]))

export interface BackendLog { info: (msg: string) => void, warn: (msg: string) => void }
const silent: BackendLog = { info: () => {}, warn: () => {} }

function wasmSimdPath (): string {
  const req = createRequire(import.meta.url)
  return join(dirname(req.resolve('@tensorflow/tfjs-backend-wasm')), 'tfjs-backend-wasm-simd.wasm')
}

async function tryNode (pkg: string): Promise<boolean> {
  try {
    await import(pkg)
    return true
  } catch {
    return false
  }
}

/** Both wasm runtimes run the pinned binary; psk1 replaces its MatMul and convolution kernels. */
const WASM_FAMILY = [WASM_RUNTIME, WASM_PSK_RUNTIME]

async function startWasm (runtime: string, reason: string, log: BackendLog): Promise<BackendInfo> {
  const file = wasmSimdPath()
  const sha = createHash('sha256').update(readFileSync(file)).digest('hex')
  if (sha !== PINNED_WASM_SHA256) throw new Error(`the wasm binary ${file} has sha256 ${sha}, not the pinned ${PINNED_WASM_SHA256} of ${runtime}`)
  // Threads off (Node has no SharedArrayBuffer workers for emscripten here, and a
  // single thread keeps reduction order fixed); every file name maps to the SIMD
  // binary so no other .wasm can be picked up.
  tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false)
  const simd = await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT')
  if (simd !== true) throw new Error('this Node.js has no WebAssembly SIMD: the pinned runtime tfjs-wasm@4.22.0-simd cannot run')
  setWasmPaths({
    'tfjs-backend-wasm.wasm': file,
    'tfjs-backend-wasm-simd.wasm': file,
    'tfjs-backend-wasm-threaded-simd.wasm': file
  })
  registerWasmExtraKernels()
  if (!(await tf.setBackend('wasm'))) throw new Error('failed to initialise the tfjs wasm backend')
  checkNaNHost()
  if (runtime === WASM_PSK_RUNTIME) {
    // output rows over up to 2 threads where 2 cores are ours (taskset counts): each element's sum is unchanged
    const impl = pskImpl(Math.min(2, availableParallelism()))
    registerPskKernels(impl)
    registerAliasKernels()
    const info: BackendInfo = { name: 'wasm', runtime, verifiable: true, reason, wasmFile: file, wasmSha256: sha, threads: impl.threads, kernels: impl.kind }
    log.info(`backend wasm (${runtime}, SIMD binary ${file}, sha256 ${sha.slice(0, 16)}…): ${reason}`)
    if (impl.kind === 'native') log.info(`psk1 kernels: native (${impl.why}), ${impl.threads} thread${impl.threads > 1 ? 's' : ''}`)
    else log.warn(`psk1 kernels: fallback JS kernels (slow): ${impl.why} — the same bits as the native ones`)
    return info
  }
  const grads = registerWasmNativeKernels()
  // the addon's kernels with the binary's own bits (Sum over leading axes, elementwise ops) and Identity/Cast without
  // copies, as psk1 runs them, once the addon's self-test passed
  const same = pskImpl(1)
  if (same.kind === 'native') {
    registerSameBitsKernels(same)
    registerAliasKernels()
  }
  const info: BackendInfo = { name: 'wasm', runtime: WASM_RUNTIME, verifiable: true, reason, wasmFile: file, wasmSha256: sha, threads: 1, gradKernels: grads.kind }
  log.info(`backend wasm (${WASM_RUNTIME}, SIMD binary ${file}, sha256 ${sha.slice(0, 16)}…, threads off): ${reason}`)
  log.info(`conv gradient kernels: ${grads.kind === 'native' ? 'native, the runtime\'s bits (self-test passed)' : `the runtime's own (${grads.why})`}; Sum and elementwise kernels: ${same.kind === 'native' ? 'native, the runtime\'s bits' : `the runtime's own (${same.why})`}`)
  return info
}

/**
 * NaN bits are part of committed values, and the pinned runtime's depend on the
 * host: an invalid op (inf - inf, 0/0) gives x86's negative default NaN, and
 * XNNPACK picks its x86 or non-x86 micro-kernels by that very sign. The
 * element references (protocols/reference) are the x86 ones, so another host
 * would commit NaNs and pooled values no reference agrees with.
 */
function checkNaNHost (): void {
  const t = tf.sub(tf.scalar(Infinity), tf.scalar(Infinity))
  const bits = new Uint32Array((t.dataSync() as Float32Array).slice().buffer)[0]
  t.dispose()
  if (bits !== DEFAULT_NAN) throw new Error(`this host's wasm gives inf - inf = 0x${bits.toString(16)}, not x86's 0x${DEFAULT_NAN.toString(16)}: ${WASM_RUNTIME}'s NaN bits (and XNNPACK's kernel choice) differ from the element references, so it cannot run verifiably here`)
}

async function startCpu (reason: string, log: BackendLog): Promise<BackendInfo> {
  if (!(await tf.setBackend('cpu'))) throw new Error('failed to initialise the tfjs cpu backend')
  log.info(`backend cpu (${CPU_RUNTIME}): ${reason}`)
  return { name: 'cpu', runtime: CPU_RUNTIME, verifiable: true, reason }
}

/**
 * Starts a backend. `auto` picks the program's runtime when it is verifiable
 * (so a proof can be produced), else tfjs-node-gpu, tfjs-node, wasm.
 */
export async function initBackend (choice: BackendChoice = 'auto', runtime?: string, log: BackendLog = silent): Promise<BackendInfo> {
  if (!BACKEND_CHOICES.includes(choice)) throw new Error(`unknown backend "${choice}": use one of ${BACKEND_CHOICES.join(', ')}`)
  if (active !== undefined) {
    const want = choice === 'auto' ? (runtime === CPU_RUNTIME ? 'cpu' : runtime !== undefined && WASM_FAMILY.includes(runtime) ? 'wasm' : active.name) : choice === 'node' || choice === 'node-gpu' ? 'tensorflow' : choice
    if (want !== active.name) throw new Error(`backend ${active.name} is already running in this process; cannot switch to ${choice}`)
    // the two wasm runtimes share tfjs' kernel registry: one per process
    if (want === 'wasm' && runtime !== undefined && WASM_FAMILY.includes(runtime) && runtime !== active.runtime) throw new Error(`backend wasm runs ${active.runtime} in this process; cannot switch to ${runtime}`)
    return active
  }
  tf.env().set('PROD', true)
  let info: BackendInfo
  if (choice === 'wasm' || (choice === 'auto' && (runtime === undefined || WASM_FAMILY.includes(runtime)))) {
    const rt = runtime !== undefined && WASM_FAMILY.includes(runtime) ? runtime : WASM_RUNTIME
    info = await startWasm(rt, choice === 'wasm' ? 'requested with --backend wasm' : `the task pins ${rt}`, log)
  } else if (choice === 'cpu' || (choice === 'auto' && runtime === CPU_RUNTIME)) {
    info = await startCpu(choice === 'cpu' ? 'requested with --backend cpu' : `the task pins ${CPU_RUNTIME}`, log)
  } else {
    const order = choice === 'node' ? ['node'] : ['node-gpu', 'node']
    let got: string | undefined
    for (const o of order) {
      if (await tryNode(`@tensorflow/tfjs-${o}`)) { got = o; break }
      log.warn(`@tensorflow/tfjs-${o} is not installed (optional dependency; its install script downloads libtensorflow, impossible here)`)
    }
    if (got !== undefined) {
      await tf.setBackend('tensorflow')
      const rt = got === 'node-gpu' ? NODE_GPU_RUNTIME : NODE_RUNTIME
      log.warn(`backend tensorflow via @tensorflow/tfjs-${got} (${rt}): fast but NOT verifiable — no proof-of-learning will be produced for a task pinned to a verifiable runtime`)
      info = { name: 'tensorflow', runtime: rt, verifiable: false, reason: `requested ${choice}` }
    } else {
      info = await startWasm(WASM_RUNTIME, `fallback: ${choice} requested but tfjs-node is not installed`, log)
    }
  }
  active = info
  return info
}

/**
 * Forgets the running backend: the wasm backend gets back the kernels tfjs-backend-wasm registered (psk1's,
 * the aliases and any wrapper left behind go), variables are disposed, and the next initBackend starts as in
 * a new process. For a process that runs independent users of tfjs one after another (the test runner's
 * shared forks); a node never switches its backend.
 */
export function resetBackend (): void {
  for (const k of tf.getKernelsForBackend('wasm')) {
    const pinned = PINNED_WASM_KERNELS.get(k.kernelName)
    if (pinned === k) continue
    tf.unregisterKernel(k.kernelName, 'wasm')
    if (pinned !== undefined) tf.registerKernel(pinned)
  }
  for (const [name, k] of PINNED_WASM_KERNELS) if (tf.getKernel(name, 'wasm') === undefined) tf.registerKernel(k)
  tf.disposeVariables()
  active = undefined
}

export function activeBackend (): BackendInfo | undefined {
  return active
}

export { tf }
