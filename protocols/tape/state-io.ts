import type { DType } from '../commit/tensor.js'
import type { InputRef, TapeEntry } from './tape.js'

// The state conversions of a tape under chunked state roots (docs/training.md,
// "Chunked roots: design"; no recorder emits them yet). The per-step state root
// commits every state tensor under its chunked commitment (commit/chunked.ts),
// while ops read and write tensors under the row + column commitment
// (commit/tensor.ts), which element claims open by row or column. Two identity
// pseudo-ops link the two:
//
//   @StateRead   input: state tensor t (ref state t, its chunked commitment,
//                the leaf of the pre-state root); output: the same tensor
//                under the row + column commitment the step's ops reference.
//   @StateWrite  input: the op output that becomes a state tensor (row +
//                column commitment); output: the same tensor under its
//                chunked commitment, which the @state entry lists, so the
//                `state` claim recomputes the chunked post-state root.
//
// Semantics: output element f has the bits of input element f, same dtype and
// shape. An element claim on either is the cross-check of
// dispute/judge-state-io.ts: the element in a chunk against the same element in
// a row or column leaf.

export const STATE_READ_KERNEL = '@StateRead'
export const STATE_WRITE_KERNEL = '@StateWrite'

export function isStateConversion (kernel: string): boolean {
  return kernel === STATE_READ_KERNEL || kernel === STATE_WRITE_KERNEL
}

/** The @StateRead entry of state tensor t: its chunked commitment in, its row + column commitment out (hex). */
export function stateReadEntry (index: number, t: number, dtype: DType, shape: readonly number[], chunked: string, fine: string): TapeEntry {
  return {
    index,
    kernel: STATE_READ_KERNEL,
    attrs: {},
    inputs: [{ name: 'x', ref: { kind: 'state', index: t }, dtype, shape: [...shape], commitment: chunked }],
    outputs: [{ dtype, shape: [...shape], commitment: fine }]
  }
}

/** The @StateWrite entry of an op output (its row + column commitment) that becomes a state tensor: its chunked commitment out. */
export function stateWriteEntry (index: number, from: Extract<InputRef, { kind: 'op' }>, dtype: DType, shape: readonly number[], fine: string, chunked: string): TapeEntry {
  return {
    index,
    kernel: STATE_WRITE_KERNEL,
    attrs: {},
    inputs: [{ name: 'x', ref: { kind: 'op', index: from.index, output: from.output }, dtype, shape: [...shape], commitment: fine }],
    outputs: [{ dtype, shape: [...shape], commitment: chunked }]
  }
}

/** Which side of a conversion entry is under which commitment. */
export interface ConversionSides {
  dtype: DType
  shape: number[]
  /** hex of the chunked commitment (the input of a read, the output of a write) */
  chunked: string
  /** hex of the row + column commitment (the output of a read, the input of a write) */
  fine: string
}

/**
 * The two sides of a well-formed conversion entry, or why it is not one (one
 * input, one output, same dtype and shape: what the identity needs; where the
 * input comes from is the skeleton's fact). An honest tape's conversions are
 * always well formed.
 */
export function conversionSides (e: TapeEntry): ConversionSides | { malformed: string } {
  if (!isStateConversion(e.kernel)) return { malformed: `${e.kernel} is not a state conversion` }
  if (e.inputs.length !== 1 || e.outputs.length !== 1) return { malformed: `${e.kernel} has ${e.inputs.length} inputs and ${e.outputs.length} outputs, not one and one` }
  const [i] = e.inputs; const [o] = e.outputs
  if (i.dtype !== o.dtype || i.shape.length !== o.shape.length || i.shape.some((d, k) => d !== o.shape[k])) {
    return { malformed: `${e.kernel} changes ${i.dtype}[${i.shape.join(',')}] into ${o.dtype}[${o.shape.join(',')}]` }
  }
  const read = e.kernel === STATE_READ_KERNEL
  return { dtype: i.dtype, shape: [...i.shape], chunked: read ? i.commitment : o.commitment, fine: read ? o.commitment : i.commitment }
}
