import * as tf from '@tensorflow/tfjs'

// tfjs-wasm's Identity, and its Cast to the same dtype, copy their input into a new
// buffer. The engine clones through Identity every tensor it saves for a gradient
// (and a clone's gradient is a Cast to float32), so a CNN step copied ~1.5 MB of
// activations four times for nothing. No kernel writes into an existing buffer
// (outputs are always new, variables are reassigned), so the output can share the
// input's buffer, counted by the backend's reference count as its Reshape does:
// the same values bit for bit, and the same kernel calls.
//
// A tape must still see the copies: the tape recorder attributes an input to the
// first op that produced its buffer, so with a shared buffer a later op's input
// would be referenced to the op before the Identity rather than to the Identity.
// `tapedKernelFunc` gives the recorder the copying kernel back.

interface AliasBackend { incRef: (dataId: object) => void }

/** aliasing kernel function → the wasm kernel function a tape records in its place */
const TAPED = new Map<tf.KernelFunc, tf.KernelFunc>()

/** The kernel function a tape wraps for `f`: the copying wasm kernel when `f` aliases, else `f`. */
export function tapedKernelFunc (f: tf.KernelFunc): tf.KernelFunc {
  return TAPED.get(f) ?? f
}

function alias (args: Parameters<tf.KernelFunc>[0], x: tf.TensorInfo): tf.TensorInfo {
  (args.backend as unknown as AliasBackend).incRef(x.dataId)
  return { dataId: x.dataId, shape: [...x.shape], dtype: x.dtype }
}

/** Registers aliasing Identity and same-dtype Cast on the wasm backend (once; the wasm kernels stay for every other case). */
export function registerAliasKernels (): void {
  const replace = (kernelName: string, make: (wasm: tf.KernelFunc) => tf.KernelFunc): void => {
    const cfg = tf.getKernel(kernelName, 'wasm')
    if (cfg === undefined) throw new Error(`the wasm backend has no ${kernelName} kernel`)
    if (TAPED.has(cfg.kernelFunc)) return
    const fn = make(cfg.kernelFunc)
    TAPED.set(fn, cfg.kernelFunc)
    tf.unregisterKernel(kernelName, 'wasm')
    tf.registerKernel({ ...cfg, kernelFunc: fn })
  }
  replace('Identity', wasm => args => {
    const { x } = args.inputs as { x: tf.TensorInfo }
    return x.dtype === 'string' ? wasm(args) : alias(args, x)
  })
  replace('Cast', wasm => args => {
    const { x } = args.inputs as { x: tf.TensorInfo }
    const { dtype } = args.attrs as unknown as { dtype: string }
    return x.dtype === dtype && dtype !== 'string' ? alias(args, x) : wasm(args)
  })
}
