import { encode } from 'cborg'
import { merkleProof, sha256 } from '../commit/merkle.js'
import { chunkLayout, chunkLeafHash, chunkSpan, combineChunked, commitChunked, verifyChunk } from '../commit/chunked.js'
import type { CommitScheme } from '../commit/scheme.js'
import {
  axisLayout, canonicalBytes, combineRoots, commitTensor, tensorLeafBytes, tensorLeaves, verifySlice, type DType, type TensorData
} from '../commit/tensor.js'
import { AvailabilityRejected, checkedHeader, type TensorHeader } from './headers.js'

// What a serve (serve.ts) puts on chain for each state commitment scheme
// (protocols/commit/scheme.ts): the tensor headers that make the committed
// state root, and the leaves, each with its path to its tensor's root. Row +
// column: the row tree's leaves (about LEAF_BYTES each) under {dtype, shape,
// rowRoot, colRoot}; chunked (docs/training.md "Chunked roots: design"): the
// 4 KiB chunks under {dtype, shape, chunkRoot}. Either way a tensor's leaves,
// in order, are its canonical bytes, and how many there are and each one's
// length and path depth are functions of the header's dtype and shape, never
// taken from the server.

export interface ChunkedHeader { dtype: DType, shape: number[], chunkRoot: Uint8Array }
export type ServeHeader = TensorHeader | ChunkedHeader

export interface ServeScheme {
  /** the headers of a state, and its tensors' commitment roots */
  headersOf: (tensors: readonly TensorData[]) => { headers: ServeHeader[], roots: Uint8Array[] }
  /** a header read from a part (CBOR), checked for form before any hashing */
  checkedHeader: (h: unknown, i: number) => ServeHeader
  /** the tensor's commitment root its header makes (a leaf of the state root) */
  rootOf: (h: ServeHeader) => Uint8Array
  /** leaves of each tensor (a pure function of dtype and shape) */
  leafCount: (h: Pick<ServeHeader, 'dtype' | 'shape'>) => number
  /** a tensor's leaves, in order: their bytes and paths */
  leavesOf: (t: TensorData) => { count: number, leaf: (j: number) => { bytes: Uint8Array, siblings: Uint8Array[] } }
  /** whether leaf j's bytes and path verify against the tensor's root */
  verifyLeaf: (h: ServeHeader, root: Uint8Array, j: number, bytes: Uint8Array, siblings: Uint8Array[]) => boolean
  /** the hash binding every part of a serve to the same headers */
  headersHash: (headers: readonly ServeHeader[]) => Uint8Array
}

const is32 = (v: unknown): v is Uint8Array => v instanceof Uint8Array && v.length === 32

export const ROWCOL_SERVE: ServeScheme = {
  headersOf: tensors => {
    const commits = tensors.map(t => commitTensor(t))
    const headers = tensors.map((t, i) => ({ dtype: t.dtype, shape: [...t.shape], rowRoot: commits[i].rowRoot, colRoot: commits[i].colRoot }))
    return { headers, roots: commits.map(c => c.root) }
  },
  checkedHeader,
  rootOf: h => { const x = h as TensorHeader; return combineRoots(x.dtype, x.shape, x.rowRoot, x.colRoot) },
  leafCount: h => axisLayout(h.dtype, h.shape, 'row').leaves,
  leavesOf: t => {
    // the row tree once per tensor (proveSlice would rebuild both trees per leaf)
    const hashes = tensorLeaves(t, 'row')
    return { count: hashes.length, leaf: j => ({ bytes: tensorLeafBytes(t, 'row', j), siblings: merkleProof(hashes, j) }) }
  },
  verifyLeaf: (h, root, j, bytes, siblings) => {
    const x = h as TensorHeader
    const l = axisLayout(x.dtype, x.shape, 'row')
    return verifySlice(root, { dtype: x.dtype, shape: x.shape, axis: 'row', index: j * l.group, bytes, siblings, otherRoot: x.colRoot })
  },
  headersHash: headers => sha256(encode(headers.map(h => {
    const x = h as TensorHeader
    return { dtype: x.dtype, shape: x.shape, rowRoot: x.rowRoot, colRoot: x.colRoot }
  })))
}

export const CHUNKED_SERVE: ServeScheme = {
  headersOf: tensors => {
    const commits = tensors.map(t => commitChunked(t))
    const headers = tensors.map((t, i) => ({ dtype: t.dtype, shape: [...t.shape], chunkRoot: commits[i].chunkRoot }))
    return { headers, roots: commits.map(c => c.root) }
  },
  checkedHeader: (h, i) => {
    const x = h as ChunkedHeader
    if (typeof x !== 'object' || x === null || !is32(x.chunkRoot)) {
      throw new AvailabilityRejected('InvalidAvailabilityResponse', `tensor ${i}: malformed header`)
    }
    // dtype and shape as for a row + column header (the same bounds)
    checkedHeader({ dtype: x.dtype, shape: x.shape, rowRoot: x.chunkRoot, colRoot: x.chunkRoot }, i)
    return { dtype: x.dtype, shape: x.shape, chunkRoot: x.chunkRoot }
  },
  rootOf: h => { const x = h as ChunkedHeader; return combineChunked(x.dtype, x.shape, x.chunkRoot) },
  leafCount: h => chunkLayout(h.dtype, h.shape).chunks,
  leavesOf: t => {
    const bytes = canonicalBytes(t)
    const l = chunkLayout(t.dtype, t.shape)
    const hashes = Array.from({ length: l.chunks }, (_, j) => { const s = chunkSpan(l, j); return chunkLeafHash(bytes.subarray(s.start, s.start + s.length)) })
    const leaf = (j: number): { bytes: Uint8Array, siblings: Uint8Array[] } => {
      const s = chunkSpan(l, j)
      return { bytes: bytes.slice(s.start, s.start + s.length), siblings: merkleProof(hashes, j) }
    }
    return { count: l.chunks, leaf }
  },
  // verifyChunk checks the chunk's length and the path's depth against the header's dtype and shape
  verifyLeaf: (h, root, j, bytes, siblings) => verifyChunk(root, { dtype: h.dtype, shape: h.shape, index: j, bytes, siblings }),
  headersHash: headers => sha256(encode(headers.map(h => { const x = h as ChunkedHeader; return { dtype: x.dtype, shape: x.shape, chunkRoot: x.chunkRoot } })))
}

export function serveScheme (c: CommitScheme | undefined): ServeScheme {
  return c === 'chunked' ? CHUNKED_SERVE : ROWCOL_SERVE
}
