import { CHUNK_BYTES, commitChunked, proveElementChunk } from '../commit/chunked.js'
import { bytesEqual } from '../commit/merkle.js'
import { axisLayout, dtypeBytes, leafSpan, matrixView, proveSlice, type TensorData } from '../commit/tensor.js'
import { STATE_READ_KERNEL, conversionSides } from '../tape/state-io.js'
import type { TapeEntry } from '../tape/tape.js'
import type { ChunkedHead, ClaimChunk, ClaimSlice } from './claim-parts.js'

// The challenger's side of a state conversion's cross-check (the `convert`
// claim, judge-state-io.ts; docs/training.md "Chunked roots: design"). The
// claim proves element f twice: in its chunk under the entry's chunked side
// and in a row or column leaf under its row + column side. The challenger
// brings its own opening of the side it agrees with: the pre-state's chunk
// for a @StateRead (its input is the agreed state), the op output's row or
// column for a @StateWrite (its input agrees); the defender's revealed leaf
// is the other.

/** The convert claim's element and openings (claim-kinds.ts adds the entry and the commit). */
export interface ConvertParts { flat: number, chunk: ClaimChunk, slice: ClaimSlice }

/** Our row or column of `t` holding element `flat`: the one with the smaller leaf, so the claim stays small. */
export function ownSlice (t: TensorData, flat: number): ClaimSlice {
  const { cols } = matrixView(t.shape)
  const leafOf = (axis: 'row' | 'col', i: number): number => {
    const l = axisLayout(t.dtype, t.shape, axis)
    return leafSpan(l, Math.floor(i / l.group)).n * l.sliceBytes
  }
  const r = Math.floor(flat / cols); const c = flat % cols
  return leafOf('row', r) <= leafOf('col', c) ? proveSlice(t, 'row', r) : proveSlice(t, 'col', c)
}

/** The first element where two leaves of `eb`-byte elements differ (0 when their lengths differ), or -1. */
export function firstDifference (eb: number, mine: Uint8Array, theirs: Uint8Array): number {
  if (mine.length !== theirs.length) return 0
  for (let p = 0; p * eb < mine.length; p++) {
    for (let b = p * eb; b < (p + 1) * eb; b++) if (mine[b] !== theirs[b]) return p
  }
  return -1
}

/**
 * A @StateWrite whose chunked output differs from ours: the defender's chunk
 * `leaf` (bytes and path revealed in the walk) against our row or column of
 * the agreed input. Undefined when its bytes equal ours.
 */
export function writeParts (input: TensorData, leaf: number, mineBytes: Uint8Array, dBytes: Uint8Array, siblings: Uint8Array[]): ConvertParts | undefined {
  const eb = dtypeBytes(input.dtype)
  const pos = firstDifference(eb, mineBytes, dBytes)
  if (pos < 0) return undefined
  const flat = (leaf * CHUNK_BYTES) / eb + pos
  return { flat, chunk: { dtype: input.dtype, shape: [...input.shape], index: leaf, bytes: dBytes, siblings }, slice: ownSlice(input, flat) }
}

/** A @StateRead whose row + column output differs from ours at `flat`: our chunk of the agreed state against the defender's leaf. */
export function readParts (state: TensorData, flat: number, slice: ClaimSlice): ConvertParts {
  return { flat, chunk: proveElementChunk(state, flat), slice }
}

/**
 * Both openings from our own tape, for an entry the two tapes agree on (a
 * divergence point the defender put at a conversion: the chain rules on the
 * position before the bits). `inputs`/`outputs`: the entry's tensors.
 */
export function ownParts (e: TapeEntry, input: TensorData, output: TensorData, flat: number): ConvertParts | string {
  const sides = conversionSides(e)
  if ('malformed' in sides) return sides.malformed
  const [chunked, fine] = e.kernel === STATE_READ_KERNEL ? [input, output] : [output, input]
  return { flat, chunk: proveElementChunk(chunked, flat), slice: ownSlice(fine, flat) }
}

/** A state tensor's chunked commitment as its preimage, when `leaf` is that commitment (a chunked state root's leaf). */
export function chunkedHeadIf (t: TensorData, leaf: Uint8Array): ChunkedHead | undefined {
  const c = commitChunked(t)
  return bytesEqual(c.root, leaf) ? { dtype: t.dtype, shape: [...t.shape], chunkRoot: c.chunkRoot } : undefined
}
