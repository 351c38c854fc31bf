import { HASH_BYTES, bytesEqual, leafHash, merkleProof, merkleRoot, rootFromProof, sha256 } from './merkle.js'

// Tensor commitments.
//
// A tensor is viewed as a matrix [rows, cols] with cols = last dimension
// (1 for a scalar) and rows = the product of the other dimensions. Its
// commitment binds dtype, shape, a Merkle root over its rows and a Merkle root
// over its columns (each leaf = the canonical little-endian bytes of a group
// of consecutive rows or columns, about LEAF_BYTES). So any single output
// element of an op can be adjudicated with only the rows/columns it reads —
// one dot product of a MatMul needs a row of A and a column of B, never the
// whole matrices — keeping on-chain data O(K) (plus at most a leaf per slice).

export type DType = 'float32' | 'int32' | 'bool'
export type TypedValues = Float32Array | Int32Array | Uint8Array

export interface TensorData {
  shape: number[]
  dtype: DType
  values: TypedValues
}

export interface TensorCommitment {
  /** sha256(0x02 || version || header || rowRoot || colRoot) */
  root: Uint8Array
  rowRoot: Uint8Array
  colRoot: Uint8Array
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1
/** The tensor commitment scheme, bound into every commitment (docs/protocol.md §3). v1: one leaf per row and per column; v2: a leaf holds a group of consecutive rows (columns) of about LEAF_BYTES. */
export const TENSOR_COMMITMENT_VERSION = 2
// domain tag 0x02, then the scheme version (v1 had no version byte: its header started with the dtype code)
const TENSOR_PREFIX = Uint8Array.of(2, TENSOR_COMMITMENT_VERSION)
const DTYPE_CODE: Record<DType, number> = { float32: 1, int32: 2, bool: 3 }

export function dtypeBytes (dtype: DType): number {
  return dtype === 'bool' ? 1 : 4
}

export function sizeOf (shape: readonly number[]): number {
  let n = 1
  for (const d of shape) {
    if (!Number.isInteger(d) || d < 0) throw new TypeError(`invalid dimension ${d} in shape [${shape.join(',')}]`)
    n *= d
  }
  return n
}

export function matrixView (shape: readonly number[]): { rows: number, cols: number } {
  const size = sizeOf(shape)
  const cols = shape.length === 0 ? 1 : shape[shape.length - 1]
  return { rows: cols === 0 ? 0 : size / cols, cols }
}

/** Canonical bytes: little-endian element encoding, row-major. */
export function canonicalBytes (t: TensorData): Uint8Array {
  const v = t.values
  if (v.length !== sizeOf(t.shape)) {
    throw new TypeError(`tensor has ${v.length} values but shape [${t.shape.join(',')}] needs ${sizeOf(t.shape)}`)
  }
  if (t.dtype === 'bool') return new Uint8Array(v.buffer, v.byteOffset, v.byteLength)
  if (LITTLE_ENDIAN) return new Uint8Array(v.buffer, v.byteOffset, v.byteLength)
  const out = new Uint8Array(v.length * 4)
  const dv = new DataView(out.buffer)
  for (let i = 0; i < v.length; i++) {
    if (t.dtype === 'float32') dv.setFloat32(i * 4, v[i], true)
    else dv.setInt32(i * 4, v[i], true)
  }
  return out
}

export function tensorHeader (dtype: DType, shape: readonly number[]): Uint8Array {
  const out = new Uint8Array(2 + 4 * shape.length)
  const dv = new DataView(out.buffer)
  out[0] = DTYPE_CODE[dtype]
  out[1] = shape.length
  shape.forEach((d, i) => dv.setUint32(2 + 4 * i, d, true))
  return out
}

/**
 * Target leaf size in bytes. A leaf holds g = max(1, floor(LEAF_BYTES / slice
 * bytes)) consecutive rows (columns), so small rows share one hash call: a
 * Merkle root is dominated by per-call cost, not by bytes. 2048 keeps the
 * bounded on-chain answers bounded: 16 availability samples and the operand
 * slices of an element claim each carry a whole leaf (docs/training.md).
 */
export const LEAF_BYTES = 2048

/** How one axis tree of a tensor is laid out: `count` rows or columns of `sliceBytes`, `group` of them per leaf. */
export interface AxisLayout {
  count: number
  sliceBytes: number
  group: number
  leaves: number
}

/** Rows (columns) per leaf for a row (column) of `sliceBytes` bytes. */
export function groupSize (sliceBytes: number): number {
  return sliceBytes <= 0 ? 1 : Math.max(1, Math.floor(LEAF_BYTES / sliceBytes))
}

/** A pure function of dtype and shape (which the commitment header binds), so every party derives it. */
export function axisLayout (dtype: DType, shape: readonly number[], axis: 'row' | 'col'): AxisLayout {
  const { rows, cols } = matrixView(shape)
  const eb = dtypeBytes(dtype)
  const count = axis === 'row' ? rows : cols
  const sliceBytes = (axis === 'row' ? cols : rows) * eb
  const group = groupSize(sliceBytes)
  return { count, sliceBytes, group, leaves: Math.ceil(count / group) }
}

/** Rows (columns) held by leaf `leaf`: the last leaf may be partial. */
export function leafSpan (l: AxisLayout, leaf: number): { first: number, n: number } {
  const first = leaf * l.group
  return { first, n: Math.max(0, Math.min(l.group, l.count - first)) }
}

/** Columns [c0, c0 + n), each column's bytes contiguous, concatenated. */
function columnsBytes (bytes: Uint8Array, rows: number, cols: number, eb: number, c0: number, n: number): Uint8Array {
  const out = new Uint8Array(n * rows * eb)
  if (eb === 4 && bytes.byteOffset % 4 === 0) {
    // 32-bit gather: a byte copy per element is several times slower
    const src = new Uint32Array(bytes.buffer, bytes.byteOffset, rows * cols)
    const dst = new Uint32Array(out.buffer)
    for (let j = 0; j < n; j++) {
      const o = j * rows
      for (let r = 0, k = c0 + j; r < rows; r++, k += cols) dst[o + r] = src[k]
    }
    return out
  }
  for (let j = 0; j < n; j++) {
    for (let r = 0; r < rows; r++) {
      const src = (r * cols + c0 + j) * eb
      const dst = (j * rows + r) * eb
      for (let k = 0; k < eb; k++) out[dst + k] = bytes[src + k]
    }
  }
  return out
}

/** The bytes of leaf `leaf` of an axis tree (a view into `bytes` for rows, a fresh array for columns). */
function leafBytesOf (bytes: Uint8Array, rows: number, cols: number, eb: number, axis: 'row' | 'col', l: AxisLayout, leaf: number): Uint8Array {
  const { first, n } = leafSpan(l, leaf)
  if (axis === 'row') return bytes.subarray(first * l.sliceBytes, (first + n) * l.sliceBytes)
  if (cols === 1) return bytes
  return columnsBytes(bytes, rows, cols, eb, first, n)
}

function axisLeaves (bytes: Uint8Array, t: { dtype: DType, shape: readonly number[] }, axis: 'row' | 'col'): Uint8Array[] {
  const { rows, cols } = matrixView(t.shape)
  const eb = dtypeBytes(t.dtype)
  const l = axisLayout(t.dtype, t.shape, axis)
  const leaves = new Array<Uint8Array>(l.leaves)
  for (let i = 0; i < l.leaves; i++) leaves[i] = leafHash(leafBytesOf(bytes, rows, cols, eb, axis, l, i))
  return leaves
}

/** Leaf hashes of a tensor's row or column tree (the dispute game bisects these trees). */
export function tensorLeaves (t: TensorData, axis: 'row' | 'col'): Uint8Array[] {
  return axisLeaves(canonicalBytes(t), t, axis)
}

/** A copy of the bytes of leaf `leaf` of a tensor's row or column tree: `group` rows or columns (fewer in the last leaf). */
export function tensorLeafBytes (t: TensorData, axis: 'row' | 'col', leaf: number): Uint8Array {
  const bytes = canonicalBytes(t)
  const { rows, cols } = matrixView(t.shape)
  const l = axisLayout(t.dtype, t.shape, axis)
  if (!Number.isInteger(leaf) || leaf < 0 || leaf >= l.leaves) throw new RangeError(`leaf ${leaf} out of range [0, ${l.leaves})`)
  return leafBytesOf(bytes, rows, cols, dtypeBytes(t.dtype), axis, l, leaf).slice()
}

export function commitTensor (t: TensorData): TensorCommitment {
  const bytes = canonicalBytes(t)
  const rowRoot = merkleRoot(axisLeaves(bytes, t, 'row'))
  const colRoot = merkleRoot(axisLeaves(bytes, t, 'col'))
  return { root: combineRoots(t.dtype, t.shape, rowRoot, colRoot), rowRoot, colRoot }
}

export function combineRoots (dtype: DType, shape: readonly number[], rowRoot: Uint8Array, colRoot: Uint8Array): Uint8Array {
  return sha256(TENSOR_PREFIX, tensorHeader(dtype, shape), rowRoot, colRoot)
}

/**
 * A row or column of a committed tensor with its Merkle path. The proof
 * carries the whole leaf the row (column) is in — `group` consecutive rows
 * (columns) — since the leaf hash covers them all; `sliceBytes(p)` extracts
 * the indexed one.
 */
export interface SliceProof {
  dtype: DType
  shape: number[]
  axis: 'row' | 'col'
  /** the row or column index (not the leaf index: that is floor(index / group)) */
  index: number
  /** canonical little-endian bytes of the leaf holding the row or column: its rows, or its columns one after the other */
  bytes: Uint8Array
  /** path of the leaf */
  siblings: Uint8Array[]
  /** the root of the other axis (colRoot for a row proof, rowRoot for a column proof) */
  otherRoot: Uint8Array
}

export function proveSlice (t: TensorData, axis: 'row' | 'col', index: number): SliceProof {
  const bytes = canonicalBytes(t)
  const { rows, cols } = matrixView(t.shape)
  const l = axisLayout(t.dtype, t.shape, axis)
  if (!Number.isInteger(index) || index < 0 || index >= l.count) throw new RangeError(`${axis === 'row' ? 'row' : 'column'} ${index} out of range [0, ${l.count})`)
  const leaf = Math.floor(index / l.group)
  const leaves = axisLeaves(bytes, t, axis)
  const other = axisLeaves(bytes, t, axis === 'row' ? 'col' : 'row')
  const lb = leafBytesOf(bytes, rows, cols, dtypeBytes(t.dtype), axis, l, leaf).slice()
  return { dtype: t.dtype, shape: [...t.shape], axis, index, bytes: lb, siblings: merkleProof(leaves, leaf), otherRoot: merkleRoot(other) }
}

/** Where the indexed row (column) sits in a proof's leaf bytes, or undefined if the leaf has the wrong size for the shape. */
function sliceRange (p: SliceProof): { start: number, end: number, leaf: number, layout: AxisLayout } | undefined {
  const l = axisLayout(p.dtype, p.shape, p.axis)
  if (!Number.isInteger(p.index) || p.index < 0 || p.index >= l.count) return undefined
  const leaf = Math.floor(p.index / l.group)
  const { first, n } = leafSpan(l, leaf)
  if (!(p.bytes instanceof Uint8Array) || p.bytes.length !== n * l.sliceBytes) return undefined
  const start = (p.index - first) * l.sliceBytes
  return { start, end: start + l.sliceBytes, leaf, layout: l }
}

/**
 * The canonical bytes of the proven row or column itself (a view into the
 * proof's leaf bytes). Throws on a proof whose leaf does not have the size its
 * dtype and shape give; verifySlice rejects such proofs.
 */
export function sliceBytes (p: SliceProof): Uint8Array {
  let r: ReturnType<typeof sliceRange>
  try { r = sliceRange(p) } catch { r = undefined }
  if (r === undefined) throw new RangeError(`slice proof for ${p.axis} ${p.index} of [${String(p.shape)}] has ${p.bytes?.length} leaf bytes, not what its shape gives`)
  return p.bytes.subarray(r.start, r.end)
}

/** Checks a slice proof against a tensor commitment root; never throws on garbage. */
export function verifySlice (root: Uint8Array, p: SliceProof): boolean {
  try {
    if (root.length !== HASH_BYTES) return false
    const r = sliceRange(p)
    if (r === undefined) return false
    // the zero-padded tree over n leaves has depth ceil(log2 n)
    const n = r.layout.leaves
    const depth = n <= 1 ? 0 : Math.ceil(Math.log2(n))
    if (!Array.isArray(p.siblings) || p.siblings.length !== depth) return false
    const axisRoot = rootFromProof(leafHash(p.bytes), r.leaf, p.siblings)
    const full = p.axis === 'row'
      ? combineRoots(p.dtype, p.shape, axisRoot, p.otherRoot)
      : combineRoots(p.dtype, p.shape, p.otherRoot, axisRoot)
    return bytesEqual(full, root)
  } catch {
    return false
  }
}

/** Decodes canonical bytes back into typed values. */
export function valuesFromBytes (dtype: DType, bytes: Uint8Array): TypedValues {
  const copy = bytes.slice()
  if (dtype === 'bool') return copy
  if (LITTLE_ENDIAN) return dtype === 'float32' ? new Float32Array(copy.buffer) : new Int32Array(copy.buffer)
  const dv = new DataView(copy.buffer)
  const n = copy.length / 4
  const out = dtype === 'float32' ? new Float32Array(n) : new Int32Array(n)
  for (let i = 0; i < n; i++) out[i] = dtype === 'float32' ? dv.getFloat32(i * 4, true) : dv.getInt32(i * 4, true)
  return out
}
