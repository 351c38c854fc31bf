import { CHUNK_BYTES, chunkLayout, chunkLeafHash, chunkSpan } from '../commit/chunked.js'
import { leafHash } from '../commit/merkle.js'
import { axisLayout, canonicalBytes, leafSpan, type DType, type TensorData } from '../commit/tensor.js'
import { STATE_READ_KERNEL, STATE_WRITE_KERNEL } from '../tape/state-io.js'
import { STATE_PSEUDO_KERNEL, type TapeEntry } from '../tape/tape.js'
import type { TensorAxis } from './messages.js'

// Which commitment scheme a tape tensor is under, and the leaves of each of
// its trees (docs/training.md "Chunked roots: design"). Under chunked state
// roots a tape holds chunked commitments only on the chunked side of its state
// conversions (a @StateRead's input, a @StateWrite's output) and in the @state
// entry, which lists the post-state; every op reads and writes row + column
// commitments, which element claims open. The kernel alone says which: a tape
// without conversions (a program without the chunked field) has no chunked side.

export type Scheme = 'chunked' | 'rows'

/**
 * The scheme of input (output) k of entry `e` as its kernel fixes it; undefined
 * for the @state entry's inputs (the post-state's scheme, the program's), which
 * no walk needs (the `state` claim recomputes their root).
 */
export function schemeOf (e: TapeEntry, io: 'in' | 'out', k: number): Scheme | undefined {
  if (e.kernel === STATE_PSEUDO_KERNEL) return undefined
  if (k === 0 && ((e.kernel === STATE_READ_KERNEL && io === 'in') || (e.kernel === STATE_WRITE_KERNEL && io === 'out'))) return 'chunked'
  return 'rows'
}

/** The leaves of one tree of a tensor: how many, and how many bytes leaf i holds. */
export interface TreeLayout { leaves: number, leafBytes: (i: number) => number }

/** The layout of a tensor's row, column or chunk tree: a function of dtype and shape, which its commitment binds. */
export function treeLayout (dtype: DType, shape: readonly number[], axis: TensorAxis): TreeLayout {
  if (axis === 'chunk') {
    const l = chunkLayout(dtype, shape)
    return { leaves: l.chunks, leafBytes: i => chunkSpan(l, i).length }
  }
  const l = axisLayout(dtype, shape, axis)
  return { leaves: l.leaves, leafBytes: i => leafSpan(l, i).n * l.sliceBytes }
}

/** No leaf of a chunk tree is longer. */
export const MAX_CHUNK_LEAF = CHUNK_BYTES

/** The hash of a leaf of bytes in a tree of `axis`: chunk leaves have their own tag. */
export function leafHashOf (axis: TensorAxis, bytes: Uint8Array): Uint8Array {
  return axis === 'chunk' ? chunkLeafHash(bytes) : leafHash(bytes)
}

/** A tensor's chunks: their leaf hashes, and a copy of chunk i. */
export function chunkTree (t: TensorData): { leaves: Uint8Array[], chunk: (i: number) => Uint8Array } {
  const bytes = canonicalBytes(t)
  const l = chunkLayout(t.dtype, t.shape)
  const span = (i: number): Uint8Array => {
    if (!Number.isInteger(i) || i < 0 || i >= l.chunks) throw new RangeError(`chunk ${i} out of range [0, ${l.chunks})`)
    const { start, length } = chunkSpan(l, i)
    return bytes.subarray(start, start + length)
  }
  return { leaves: Array.from({ length: l.chunks }, (_, i) => chunkLeafHash(span(i))), chunk: i => span(i).slice() }
}
