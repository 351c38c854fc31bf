import type * as tf from '@tensorflow/tfjs'

// The native kernels find every NaN they write in the pass that canonicalises
// their output (or in their elementwise loop), and say whether there was one.
// A kernel output they reported NaN-free is one the NaN watch (nan-watch.ts)
// need not scan again: the report covers the whole output, written by that one
// call, and a tensor's data never changes after its kernel returns. Keyed by
// dataId (a new object per output), held weakly so disposed outputs go.

/** what a native kernel says of its output: true holds a NaN, false holds none, undefined (or void) not known */
export type NaNReport = boolean | undefined | void

const nanFree = new WeakSet<object>()

/** records `out` as NaN-free when the kernel that wrote all of it said so */
export function noteNaNReport (out: tf.TensorInfo, report: NaNReport): void {
  if (report === false) nanFree.add(out.dataId)
}

/** whether the kernel that wrote `out` reported it NaN-free */
export function reportedNaNFree (out: tf.TensorInfo): boolean {
  return nanFree.has(out.dataId)
}
