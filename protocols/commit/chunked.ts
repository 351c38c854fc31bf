import { HASH_BYTES, bytesEqual, merkleProof, merkleRoot, rootFromProof, sha256 } from './merkle.js'
import { stepLeaf } from './state.js'
import { canonicalBytes, dtypeBytes, sizeOf, tensorHeader, type DType, type TensorData } from './tensor.js'

// Chunked tensor commitments and the chunked state root (docs/training.md,
// "Chunked roots: design"; not yet what the trainer commits).
//
// A tensor's canonical bytes are cut into fixed chunks of CHUNK_BYTES, the last
// one possibly shorter, and a Merkle tree is built over them: every byte is
// hashed once, where the row + column commitment (tensor.ts) hashes each byte
// twice. The commitment binds dtype and shape like the row + column one, under
// its own tag, so neither can pass for the other. The state root is the same
// tree as stateRoot's (state.ts), its leaves being the tensors' chunked
// commitments, then the step's leaf.
//
// Every tensor starts its own chunk tree at byte 0 and CHUNK_BYTES is a
// multiple of every element size (4 and 1), so an element never spans two
// chunks: element `flat` lies in chunk ⌊flat·eb / CHUNK_BYTES⌋.

/** Bytes per chunk (the last chunk of a tensor may be shorter). */
export const CHUNK_BYTES = 4096
/** The chunked commitment scheme, bound into every chunked commitment. */
export const CHUNKED_COMMITMENT_VERSION = 1
// domain tags (merkle.ts: 0x00 leaf, 0x01 node, 0x03 sized root; tensor.ts: 0x02 row + column commitment):
// a chunk leaf never equals a row or column leaf over the same bytes
export const CHUNK_LEAF_TAG = 4
export const CHUNKED_TAG = 5
const CHUNK_LEAF_PREFIX = Uint8Array.of(CHUNK_LEAF_TAG)
const CHUNKED_PREFIX = Uint8Array.of(CHUNKED_TAG, CHUNKED_COMMITMENT_VERSION)

export interface ChunkLayout {
  /** canonical bytes of the whole tensor */
  bytes: number
  /** element bytes */
  eb: number
  chunks: number
  /** depth of the zero-padded chunk tree: ⌈log2 chunks⌉ (0 for one chunk or none) */
  depth: number
}

/** Depth of a zero-padded Merkle tree over n leaves (integer arithmetic, no log2 rounding). */
export function treeDepth (n: number): number {
  let d = 0
  while (2 ** d < n) d++
  return d
}

/** A pure function of dtype and shape (which the commitment header binds): every party derives it. */
export function chunkLayout (dtype: DType, shape: readonly number[]): ChunkLayout {
  const eb = dtypeBytes(dtype)
  const bytes = sizeOf(shape) * eb
  const chunks = Math.ceil(bytes / CHUNK_BYTES)
  return { bytes, eb, chunks, depth: treeDepth(chunks) }
}

/** Byte range [start, start + length) of chunk `i` in the tensor's canonical bytes. */
export function chunkSpan (l: ChunkLayout, i: number): { start: number, length: number } {
  const start = i * CHUNK_BYTES
  return { start, length: Math.max(0, Math.min(CHUNK_BYTES, l.bytes - start)) }
}

/** The chunk holding element `flat` and the element's byte offset in it. */
export function elementChunk (dtype: DType, flat: number): { chunk: number, offset: number } {
  const byte = flat * dtypeBytes(dtype)
  return { chunk: Math.floor(byte / CHUNK_BYTES), offset: byte % CHUNK_BYTES }
}

export function chunkLeafHash (bytes: Uint8Array): Uint8Array {
  return sha256(CHUNK_LEAF_PREFIX, bytes)
}

function chunkLeaves (bytes: Uint8Array, l: ChunkLayout): Uint8Array[] {
  const leaves = new Array<Uint8Array>(l.chunks)
  for (let i = 0; i < l.chunks; i++) {
    const { start, length } = chunkSpan(l, i)
    leaves[i] = chunkLeafHash(bytes.subarray(start, start + length))
  }
  return leaves
}

/** sha256(0x05 || version || header || chunkRoot): the header is tensor.ts's (dtype code, rank, u32le dims). */
export function combineChunked (dtype: DType, shape: readonly number[], chunkRoot: Uint8Array): Uint8Array {
  return sha256(CHUNKED_PREFIX, tensorHeader(dtype, shape), chunkRoot)
}

export interface ChunkedCommitment {
  root: Uint8Array
  /** Merkle root over the chunk leaves (the zero hash for an empty tensor) */
  chunkRoot: Uint8Array
}

export function commitChunked (t: TensorData): ChunkedCommitment {
  const bytes = canonicalBytes(t)
  const chunkRoot = merkleRoot(chunkLeaves(bytes, chunkLayout(t.dtype, t.shape)))
  return { root: combineChunked(t.dtype, t.shape, chunkRoot), chunkRoot }
}

/** The chunked state root's leaves: every state tensor's chunked commitment in state order, then the step's leaf. */
export function chunkedStateLeaves (tensors: readonly TensorData[], step: number): Uint8Array[] {
  return [...tensors.map(t => commitChunked(t).root), stepLeaf(step)]
}

export function chunkedStateRoot (tensors: readonly TensorData[], step: number): Uint8Array {
  return merkleRoot(chunkedStateLeaves(tensors, step))
}

/** A chunk of a tensor under its chunked commitment: the chunk's bytes and its path. */
export interface ChunkProof {
  dtype: DType
  shape: number[]
  /** the chunk's index */
  index: number
  /** the chunk's canonical bytes: CHUNK_BYTES, or what is left in the last chunk */
  bytes: Uint8Array
  siblings: Uint8Array[]
}

export function proveChunk (t: TensorData, index: number): ChunkProof {
  const bytes = canonicalBytes(t)
  const l = chunkLayout(t.dtype, t.shape)
  if (!Number.isInteger(index) || index < 0 || index >= l.chunks) throw new RangeError(`chunk ${index} out of range [0, ${l.chunks})`)
  const { start, length } = chunkSpan(l, index)
  return { dtype: t.dtype, shape: [...t.shape], index, bytes: bytes.slice(start, start + length), siblings: merkleProof(chunkLeaves(bytes, l), index) }
}

/** The chunk proof holding element `flat` of `t`. */
export function proveElementChunk (t: TensorData, flat: number): ChunkProof {
  return proveChunk(t, elementChunk(t.dtype, flat).chunk)
}

/**
 * Checks a chunk proof against a chunked commitment: the chunk's length is the
 * one its index and the header's dtype and shape give, the path has the depth
 * they give. Never throws on garbage.
 */
export function verifyChunk (root: Uint8Array, p: ChunkProof): boolean {
  try {
    if (!(root instanceof Uint8Array) || root.length !== HASH_BYTES) return false
    if (p.dtype !== 'float32' && p.dtype !== 'int32' && p.dtype !== 'bool') return false
    const l = chunkLayout(p.dtype, p.shape)
    if (!Number.isInteger(p.index) || p.index < 0 || p.index >= l.chunks) return false
    if (!(p.bytes instanceof Uint8Array) || p.bytes.length !== chunkSpan(l, p.index).length) return false
    if (!Array.isArray(p.siblings) || p.siblings.length !== l.depth) return false
    if (!p.siblings.every(s => s instanceof Uint8Array && s.length === HASH_BYTES)) return false
    const chunkRoot = rootFromProof(chunkLeafHash(p.bytes), p.index, p.siblings)
    return bytesEqual(combineChunked(p.dtype, p.shape, chunkRoot), root)
  } catch {
    return false
  }
}

/**
 * The bits of element `flat` in a chunk proof (float32 and int32 as uint32,
 * bool as its byte: the committed bytes, little-endian), or undefined when the
 * chunk does not hold it or has the wrong size.
 */
export function chunkElementBits (p: ChunkProof, flat: number): number | undefined {
  let l: ChunkLayout
  try { l = chunkLayout(p.dtype, p.shape) } catch { return undefined }
  if (!Number.isInteger(flat) || flat < 0 || flat * l.eb >= l.bytes) return undefined
  const { chunk, offset } = elementChunk(p.dtype, flat)
  if (chunk !== p.index || !(p.bytes instanceof Uint8Array) || p.bytes.length !== chunkSpan(l, chunk).length) return undefined
  if (l.eb === 1) return p.bytes[offset]
  return new DataView(p.bytes.buffer, p.bytes.byteOffset, p.bytes.byteLength).getUint32(offset, true)
}
