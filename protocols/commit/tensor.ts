import { HASH_BYTES, bytesEqual, leafHash, merkleProof, merkleRoot, rootFromProof, sha256 } from './merkle.js'

// Tensor commitments.
//
// A tensor is viewed as a matrix [rows, cols] with cols = last dimension
// (1 for a scalar) and rows = the product of the other dimensions. Its
// commitment binds dtype, shape, a Merkle root over its rows and a Merkle root
// over its columns (each leaf = the canonical little-endian bytes of one row or
// column). So any single output element of an op can be adjudicated with only
// the rows/columns it reads — one dot product of a MatMul needs a row of A and a
// column of B, never the whole matrices — keeping on-chain data O(K).

export type DType = 'float32' | 'int32' | 'bool'
export type TypedValues = Float32Array | Int32Array | Uint8Array

export interface TensorData {
  shape: number[]
  dtype: DType
  values: TypedValues
}

export interface TensorCommitment {
  /** sha256(0x02 || header || rowRoot || colRoot) */
  root: Uint8Array
  rowRoot: Uint8Array
  colRoot: Uint8Array
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1
const TENSOR_PREFIX = Uint8Array.of(2)
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

function rowLeaves (bytes: Uint8Array, rows: number, cols: number, eb: number): Uint8Array[] {
  const leaves = new Array<Uint8Array>(rows)
  const rb = cols * eb
  for (let r = 0; r < rows; r++) leaves[r] = leafHash(bytes.subarray(r * rb, (r + 1) * rb))
  return leaves
}

function columnBytes (bytes: Uint8Array, rows: number, cols: number, eb: number, c: number): Uint8Array {
  const out = new Uint8Array(rows * eb)
  if (eb === 4 && bytes.byteOffset % 4 === 0) {
    // 32-bit gather: a byte copy per element is several times slower
    const src = new Uint32Array(bytes.buffer, bytes.byteOffset, rows * cols)
    const dst = new Uint32Array(out.buffer)
    for (let r = 0, k = c; r < rows; r++, k += cols) dst[r] = src[k]
    return out
  }
  for (let r = 0; r < rows; r++) {
    const src = (r * cols + c) * eb
    for (let k = 0; k < eb; k++) out[r * eb + k] = bytes[src + k]
  }
  return out
}

function colLeaves (bytes: Uint8Array, rows: number, cols: number, eb: number): Uint8Array[] {
  if (cols === 1) return [leafHash(bytes)]
  const leaves = new Array<Uint8Array>(cols)
  for (let c = 0; c < cols; c++) leaves[c] = leafHash(columnBytes(bytes, rows, cols, eb, c))
  return leaves
}

export function commitTensor (t: TensorData): TensorCommitment {
  const bytes = canonicalBytes(t)
  const { rows, cols } = matrixView(t.shape)
  const eb = dtypeBytes(t.dtype)
  const rowRoot = merkleRoot(rowLeaves(bytes, rows, cols, eb))
  const colRoot = merkleRoot(colLeaves(bytes, rows, cols, eb))
  return { root: combineRoots(t.dtype, t.shape, rowRoot, colRoot), rowRoot, colRoot }
}

export function combineRoots (dtype: DType, shape: readonly number[], rowRoot: Uint8Array, colRoot: Uint8Array): Uint8Array {
  return sha256(TENSOR_PREFIX, tensorHeader(dtype, shape), rowRoot, colRoot)
}

/** A row or column of a committed tensor with its Merkle path. */
export interface SliceProof {
  dtype: DType
  shape: number[]
  axis: 'row' | 'col'
  index: number
  /** canonical little-endian bytes of the row or column */
  bytes: Uint8Array
  siblings: Uint8Array[]
  /** the root of the other axis (colRoot for a row proof, rowRoot for a column proof) */
  otherRoot: Uint8Array
}

export function proveSlice (t: TensorData, axis: 'row' | 'col', index: number): SliceProof {
  const bytes = canonicalBytes(t)
  const { rows, cols } = matrixView(t.shape)
  const eb = dtypeBytes(t.dtype)
  const rl = rowLeaves(bytes, rows, cols, eb)
  const cl = colLeaves(bytes, rows, cols, eb)
  if (axis === 'row') {
    if (index < 0 || index >= rows) throw new RangeError(`row ${index} out of range [0, ${rows})`)
    return { dtype: t.dtype, shape: [...t.shape], axis, index, bytes: bytes.slice(index * cols * eb, (index + 1) * cols * eb), siblings: merkleProof(rl, index), otherRoot: merkleRoot(cl) }
  }
  if (index < 0 || index >= cols) throw new RangeError(`column ${index} out of range [0, ${cols})`)
  const cb = cols === 1 ? bytes.slice() : columnBytes(bytes, rows, cols, eb, index)
  return { dtype: t.dtype, shape: [...t.shape], axis, index, bytes: cb, siblings: merkleProof(cl, index), otherRoot: merkleRoot(rl) }
}

/** Checks a slice proof against a tensor commitment root; never throws on garbage. */
export function verifySlice (root: Uint8Array, p: SliceProof): boolean {
  try {
    if (root.length !== HASH_BYTES) return false
    const { rows, cols } = matrixView(p.shape)
    const eb = dtypeBytes(p.dtype)
    const expectLen = (p.axis === 'row' ? cols : rows) * eb
    if (p.bytes.length !== expectLen) return false
    const leaf = leafHash(p.bytes)
    const n = p.axis === 'row' ? rows : cols
    if (!Number.isInteger(p.index) || p.index < 0 || p.index >= n) return false
    // the zero-padded tree over n leaves has depth ceil(log2 n)
    const depth = n <= 1 ? 0 : Math.ceil(Math.log2(n))
    if (p.siblings.length !== depth) return false
    const axisRoot = rootFromProof(leaf, p.index, p.siblings)
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

