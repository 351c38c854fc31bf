import type * as tf from '@tensorflow/tfjs'

// The native kernels find every NaN they write in the pass that canonicalises
// their output (or in their elementwise loop), and say whether there was one.
// An output the last native kernel call reported NaN-free is one the NaN watch
// (nan-watch.ts) need not scan again: the report covers the whole output,
// written by that one call, and a tensor's data never changes after its kernel
// returns. One slot, not a set: the watch looks right after the kernel returns,
// and a slot costs nothing when no watch looks.

/** what a native kernel says of its output: true holds a NaN, false holds none, undefined (or void) not known */
export type NaNReport = boolean | undefined | void

let lastNaNFree: object | undefined

/** records the report of the kernel call that wrote all of `out` */
export function noteNaNReport (out: tf.TensorInfo, report: NaNReport): void {
  lastNaNFree = report === false ? out.dataId : undefined
}

/** whether `out` is the output of the last reporting kernel call, reported NaN-free */
export function reportedNaNFree (out: tf.TensorInfo): boolean {
  return lastNaNFree !== undefined && out.dataId === lastNaNFree
}
