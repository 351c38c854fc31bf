import { sizeOf, type DType } from '../commit/tensor.js'

// "A NaN ends the run" (docs/disputes.md, "NaN"): which NaN a float32 add of
// two different NaNs keeps is not fixed by the wasm runtime, so no ruling may
// depend on a NaN operand. An honest run never commits a NaN: its state
// tensors and the op outputs of its signed tapes are NaN-free, except in a
// diverged proof, whose last step k is taped up to its divergence point
// (entry e, first NaN at flat element f of e's output 0) and ends there.

/** Where a diverged proof ended: entry `entry` of the tape of its last step, first NaN at flat `flat` of output 0. */
export interface Divergence { entry: number, flat: number }

/** A float32 bit pattern is a NaN: exponent all ones, mantissa not zero. */
export function isNaNBits (bits: number): boolean {
  return (bits & 0x7f800000) === 0x7f800000 && (bits & 0x007fffff) !== 0
}

/** Whether committed little-endian `bytes` of dtype `dtype` hold a NaN (only float32 can). */
export function bytesHoldNaN (dtype: DType, bytes: Uint8Array): boolean {
  if (dtype !== 'float32') return false
  const n = bytes.length >>> 2
  const dv = new DataView(bytes.buffer, bytes.byteOffset, n * 4)
  for (let i = 0; i < n; i++) if (isNaNBits(dv.getUint32(i * 4, true))) return true
  return false
}

/**
 * Where entry `index` of the disputed step's tape stands: `normal` on a step
 * the proof completed (no NaN allowed anywhere), else before, at or after the
 * divergence point on a diverged proof's last step.
 */
export function runPosition (env: { step: number, stepCount: number, divergence?: Divergence }, index: number): 'normal' | 'before' | 'at' | 'after' {
  const d = env.divergence
  if (d === undefined || env.step !== env.stepCount) return 'normal'
  return index < d.entry ? 'before' : index === d.entry ? 'at' : 'after'
}

/** Index of the first NaN among float32 `values` (any bit pattern), -1 if none; other dtypes hold none. */
export function firstNaNIndex (dtype: DType, values: ArrayLike<number>): number {
  if (dtype !== 'float32') return -1
  for (let i = 0; i < values.length; i++) if (Number.isNaN(values[i])) return i
  return -1
}

/** The first NaN of a taped step: the first entry with a NaN in any output, as (entry, flat of output 0); `output` > 0 when the NaN is in another output. */
export function firstNaNOf (outputs: ReadonlyArray<ReadonlyArray<{ dtype: DType, values: ArrayLike<number> }>>): (Divergence & { output: number }) | undefined {
  for (let e = 0; e < outputs.length; e++) {
    for (let k = 0; k < outputs[e].length; k++) {
      const f = firstNaNIndex(outputs[e][k].dtype, outputs[e][k].values)
      if (f >= 0) return { entry: e, flat: f, output: k }
    }
  }
  return undefined
}

/**
 * Why a divergence point at an entry with output `out` names no element a NaN
 * could be at, if it does not: the point is the solver's word in
 * commit_diverged, which the chain cannot check there (it knows no shapes).
 */
export function bogusPoint (out: { dtype: DType, shape: number[] } | undefined, flat: number): string | undefined {
  if (out === undefined) return 'is at an entry without an output'
  if (out.dtype !== 'float32') return `is in a ${out.dtype} output, which holds no NaN`
  return flat >= sizeOf(out.shape) ? `is past the entry's output of ${sizeOf(out.shape)} elements` : undefined
}
