import * as tf from '@tensorflow/tfjs'
import { reportedNaNFree } from './nan-report.js'
import { nativeNaNScan } from './psk-native.js'

// A NaN ends a verifiable run (docs/disputes.md, "NaN: a NaN ends the run"):
// an honest solver commits no NaN in a state or an op output, so it must see
// the first op output that holds one. While installed, every kernel of the
// active backend that can make a NaN out of NaN-free inputs is wrapped and its
// float32 outputs scanned in place (on wasm a view of the heap: no copy);
// `seen` is set by the first NaN. Only a flag: the caller re-runs the step
// under the tape recorder to find exactly where. An output whose native kernel
// reported it NaN-free (nan-report.ts: found in the kernel's own pass over it)
// is not scanned again.

interface WasmBackendLike {
  dataIdMap?: { get: (id: object) => { memoryOffset: number } | undefined }
  wasm?: { HEAPU8: Uint8Array }
  readSync: (id: object) => ArrayLike<number>
}

/** SameValueZero finds every NaN pattern; the builtin is about twice as fast as a JS loop */
export const includesNaN = (v: Float32Array): boolean => v.includes(Number.NaN)
/** the addon's SIMD scan (~7-10x includesNaN) when it is built */
const defaultScan: (v: Float32Array) => boolean = nativeNaNScan() ?? includesNaN

function holdsNaN (backend: WasmBackendLike, info: tf.TensorInfo, scan: (v: Float32Array) => boolean): boolean {
  if (info.dtype !== 'float32' || reportedNaNFree(info)) return false
  const n = info.shape.reduce((a, b) => a * b, 1)
  const d = backend.dataIdMap?.get(info.dataId)
  const heap = backend.wasm?.HEAPU8
  const v = d !== undefined && heap !== undefined ? new Float32Array(heap.buffer, d.memoryOffset, n) : Float32Array.from(backend.readSync(info.dataId))
  return scan(v)
}

/**
 * Kernels whose output holds no NaN when their inputs hold none (they move,
 * compare or select values, or map ±Inf to ±Inf/0): not scanned. Every input
 * of a step is NaN-free until a scanned kernel makes a NaN (state: by
 * induction over the steps, checked when a checkpoint is loaded; batch data:
 * bytes / 255; constants), so the first NaN always comes from a scanned kernel.
 */
const PRESERVING = new Set(['Reshape', 'Identity', 'Transpose', 'Cast', 'Relu', 'Neg', 'Abs', 'Slice', 'StridedSlice', 'Concat', 'Pad', 'PadV2', 'Tile', 'GatherV2', 'Max', 'Min', 'Maximum', 'Minimum', 'ZerosLike', 'OnesLike', 'Fill', 'Square', 'Exp', 'Reverse', 'BroadcastTo', 'Step', 'MaxPool'])

export class NanWatch {
  /** a kernel output held a NaN since the last reset */
  seen = false
  private readonly backendName = tf.getBackend()
  private readonly originals = tf.getKernelsForBackend(this.backendName)

  /** `scan`: how an output is searched for a NaN (default: the addon's, else includesNaN) */
  constructor (private readonly scan: (v: Float32Array) => boolean = defaultScan) {
    for (const k of this.originals) {
      if (PRESERVING.has(k.kernelName)) continue
      const orig = k.kernelFunc
      tf.unregisterKernel(k.kernelName, this.backendName)
      tf.registerKernel({
        ...k,
        kernelFunc: args => {
          const out = orig(args)
          if (!this.seen) {
            const backend = args.backend as unknown as WasmBackendLike
            for (const o of Array.isArray(out) ? out : [out]) if (holdsNaN(backend, o, this.scan)) { this.seen = true; break }
          }
          return out
        }
      })
    }
  }

  /** Puts the original kernels back. */
  dispose (): void {
    for (const k of this.originals) {
      if (PRESERVING.has(k.kernelName)) continue
      tf.unregisterKernel(k.kernelName, this.backendName); tf.registerKernel(k)
    }
  }
}
