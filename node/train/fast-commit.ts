import { hash } from 'node:crypto'
import { CHUNK_BYTES, CHUNK_LEAF_TAG, CHUNKED_COMMITMENT_VERSION, CHUNKED_TAG, chunkedStateRoot, commitChunked } from '../../protocols/commit/chunked.js'
import type { CommitScheme } from '../../protocols/commit/scheme.js'
import { stepLeaf, stateRoot } from '../../protocols/commit/state.js'
import { TENSOR_COMMITMENT_VERSION, axisLayout, dtypeBytes, leafSpan, matrixView, tensorHeader, type AxisLayout, type TensorData } from '../../protocols/commit/tensor.js'
import { nativeAxisRoots, nativeChunkRoot } from './psk-addon.js'

// A faster implementation of protocols/commit's tensor commitment and state
// root for the training loop. It must give identical roots: the unit test
// test/unit/train/fast-commit.test.ts compares it with protocols/commit, and
// every checkpoint cross-checks it (hash-job.ts).
//
// Where the time goes: a [784,128] tensor needs ~700 sha256 calls (196 leaves
// of 4 rows, 128 column leaves, the inner nodes) over ~0.8 MB; before leaves
// were grouped (commitment v1) it was ~1.8k, and the per-call overhead
// dominated. Most of that overhead is allocating the Buffer that
// crypto.hash returns (~0.75 µs per call here); a 'latin1' string digest costs
// ~0.3 µs. So hashes travel as 32-char latin1 strings and are written into one
// reused scratch buffer to form the next input: about half the CPU time.

const LE = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1
const ZERO = '\0'.repeat(32)

let scratch = Buffer.alloc(1 << 16)
function scratchFor (n: number): Buffer {
  if (scratch.length < n) scratch = Buffer.alloc(Math.max(n, scratch.length * 2))
  return scratch
}

// 'binary' is Node's name for latin1: one char per byte
const shaL = (b: Uint8Array): string => hash('sha256', b, 'binary')

// Buffer#latin1Write (undocumented but stable since Node 0.x) skips write()'s encoding dispatch
interface Latin1Writable { latin1Write: (s: string, offset: number, length: number) => number }
const put = (b: Buffer, s: string, offset: number): void => { (b as unknown as Latin1Writable).latin1Write(s, offset, 32) }

/** Merkle root (latin1 digests) over leaf digests; same tree as protocols/commit merkleRoot. */
function merkle (leaves: string[]): string {
  if (leaves.length === 0) return ZERO
  const s = scratchFor(65)
  const node = s.subarray(0, 65)
  let level = leaves
  while (level.length > 1) {
    const next: string[] = new Array<string>((level.length + 1) >> 1)
    for (let i = 0; i < level.length; i += 2) {
      node[0] = 1
      put(node, level[i], 1)
      put(node, i + 1 < level.length ? level[i + 1] : ZERO, 33)
      next[i >> 1] = shaL(node)
    }
    level = next
  }
  return level[0]
}

// What a tensor's commitment needs besides its bytes depends only on its dtype
// and shape, which a training run's state keeps from step to step: worked out
// once per shape (the layouts, the commitment's header bytes in a buffer of
// their own, the addon's dimensions), so a root does no per-tensor allocation
// or layout arithmetic, and the hashing path stays small and monomorphic.
interface Plan {
  rows: number
  cols: number
  eb: number
  rl: AxisLayout
  clay: AxisLayout
  /** 2 + header + the row and column roots: the bytes the commitment hashes */
  out: Buffer
  /** where the row and column roots go in `out` (64 bytes) */
  roots: Buffer
  at: number
  dims: Int32Array
}
const plans = new Map<string, Plan>()

function planOf (t: TensorData): Plan {
  const key = `${t.dtype}:${t.shape.join(',')}`
  let p = plans.get(key)
  if (p !== undefined) return p
  const { rows, cols } = matrixView(t.shape)
  const eb = dtypeBytes(t.dtype)
  const rl = axisLayout(t.dtype, t.shape, 'row')
  const clay = axisLayout(t.dtype, t.shape, 'col')
  const header = tensorHeader(t.dtype, t.shape)
  const out = Buffer.alloc(2 + header.length + 64)
  out[0] = 2; out[1] = TENSOR_COMMITMENT_VERSION
  out.set(header, 2)
  const at = 2 + header.length
  p = { rows, cols, eb, rl, clay, out, roots: out.subarray(at), at, dims: Int32Array.of(rows, cols, eb, rl.group, clay.group) }
  // a long-lived process trains many tasks: keep the plans of a few states' shapes only
  if (plans.size >= 256) plans.clear()
  plans.set(key, p)
  return p
}

function tensorRootL (t: TensorData): string {
  const v = t.values
  const bytes = new Uint8Array(v.buffer, v.byteOffset, v.byteLength)
  const p = planOf(t)
  if (v.length !== p.rows * p.cols) throw new TypeError(`tensor has ${v.length} values but shape [${t.shape.join(',')}] needs ${p.rows * p.cols}`)
  if (!nativeRoots(bytes, p.dims, p.roots)) {
    const [rowRoot, colRoot] = axisRootsL(bytes, p.rows, p.cols, p.eb, p.rl, p.clay)
    put(p.out, rowRoot, p.at); put(p.out, colRoot, p.at + 32)
  }
  return shaL(p.out)
}

// The addon's row and column roots (node/train/psk-native.ts), when it has them: about half the
// CPU of axisRootsL (OpenSSL's sha256 over the tensor's bytes in place, no per-call overhead).
// null: none in this thread (looked up once).
type AxisRootsFn = (bytes: Uint8Array, dims: Int32Array, out: Uint8Array) => boolean
let native: AxisRootsFn | null | undefined
function nativeRoots (bytes: Uint8Array, dims: Int32Array, out: Uint8Array): boolean {
  if (native === undefined) native = nativeAxisRoots() ?? null
  if (native === null) return false
  if (native(bytes, dims, out)) return true
  native = null
  return false
}

/** The row and column Merkle roots (latin1 digests) of a [rows, cols] tensor's bytes. */
function axisRootsL (bytes: Uint8Array, rows: number, cols: number, eb: number, rl: AxisLayout, clay: AxisLayout): [string, string] {
  // a leaf is at most max(LEAF_BYTES, one row or column) bytes
  const s = scratchFor(1 + Math.max(rl.group * rl.sliceBytes, clay.group * clay.sliceBytes))
  s[0] = 0
  const src = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const rowLeaves: string[] = new Array<string>(rl.leaves)
  for (let i = 0; i < rl.leaves; i++) {
    const { first, n } = leafSpan(rl, i)
    const o = first * rl.sliceBytes
    const len = n * rl.sliceBytes
    src.copy(s, 1, o, o + len)
    rowLeaves[i] = shaL(s.subarray(0, len + 1))
  }
  const colLeaves: string[] = new Array<string>(clay.leaves)
  if (cols === 1) {
    s.set(bytes, 1)
    colLeaves[0] = shaL(s.subarray(0, bytes.length + 1))
  } else if (eb === 4) {
    // the whole tensor transposed at once in wasm (~4× a JavaScript gather loop,
    // which was a quarter of a root), then each leaf's columns are contiguous
    const T = transposed32(bytes, rows, cols)
    for (let i = 0; i < clay.leaves; i++) {
      const { first, n } = leafSpan(clay, i)
      const len = n * rows * 4
      s.set(T.subarray(first * rows * 4, first * rows * 4 + len), 1)
      colLeaves[i] = shaL(s.subarray(0, len + 1))
    }
  } else {
    for (let i = 0; i < clay.leaves; i++) {
      const { first, n } = leafSpan(clay, i)
      for (let j = 0; j < n; j++) {
        for (let r = 0; r < rows; r++) for (let k = 0; k < eb; k++) s[1 + (j * rows + r) * eb + k] = bytes[(r * cols + first + j) * eb + k]
      }
      colLeaves[i] = shaL(s.subarray(0, n * rows * eb + 1))
    }
  }
  return [merkle(rowLeaves), merkle(colLeaves)]
}

// A 32-bit matrix transpose in WebAssembly, assembled by hand (150 bytes; no
// toolchain needed). Its text:
//   (module (memory (export "mem") 1)
//     (func (export "t") (param $src i32) (param $dst i32) (param $rows i32) (param $cols i32)
//       (local $r i32) (local $c i32) (local $sp i32) (local $dp i32)
//       for r in [0, rows): sp = src + r·cols·4; dp = dst + r·4
//         for c in [0, cols): mem32[dp] = mem32[sp]; sp += 4; dp += rows·4))
// i.e. element (r, c) of the row-major [rows, cols] matrix at src goes to
// (c, r) of the one at dst. Test: test/unit/train/fast-commit.test.ts compares
// every root with protocols/commit, which gathers columns in plain JavaScript.
const TRANSPOSE_WASM = 'AGFzbQEAAAABCAFgBH9/f38AAwIBAAUDAQABBwsCA21lbQIAAXQAAApsAWoBBH9BACEEAkADQCAEIAJPDQEgACAEIANsQQJ0aiEGIAEgBEECdGohB0EAIQUCQANAIAUgA08NASAHIAYoAgA2AgAgBkEEaiEGIAcgAkECdGohByAFQQFqIQUMAAsLIARBAWohBAwACwsL'
// (this project's TypeScript libs carry no WebAssembly types: the little used here, declared)
interface WasmMemory { buffer: ArrayBuffer, grow: (pages: number) => number }
interface WasmApi { Module: new (bytes: Uint8Array) => object, Instance: new (m: object) => { exports: unknown } }
const WA = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly
let wasmT: { mem: WasmMemory, t: (src: number, dst: number, rows: number, cols: number) => void } | undefined

/** The bytes of a [rows, cols] 32-bit matrix, transposed (a view of wasm memory: valid until the next call). */
function transposed32 (bytes: Uint8Array, rows: number, cols: number): Uint8Array {
  if (wasmT === undefined) {
    const inst = new WA.Instance(new WA.Module(Buffer.from(TRANSPOSE_WASM, 'base64')))
    wasmT = inst.exports as unknown as NonNullable<typeof wasmT>
  }
  const n = bytes.length
  const need = Math.ceil((2 * n) / 65536) - wasmT.mem.buffer.byteLength / 65536
  if (need > 0) wasmT.mem.grow(need)
  const m = new Uint8Array(wasmT.mem.buffer)
  m.set(bytes, 0)
  wasmT.t(0, n, rows, cols)
  return m.subarray(n, 2 * n)
}

const fromL = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'latin1'))

/** Same value as protocols/commit commitTensor(t).root. */
export function fastTensorRoot (t: TensorData): Uint8Array {
  return fromL(tensorRootL(t))
}

/** Same value as protocols/commit stateRoot(tensors, step). */
export function fastStateRoot (tensors: readonly TensorData[], step: number): Uint8Array {
  if (!LE) return stateRoot(tensors, step)
  return fromL(merkle([...tensors.map(tensorRootL), Buffer.from(stepLeaf(step)).toString('latin1')]))
}

// The chunked commitment (protocols/commit/chunked.ts; a program's with
// `stateCommitment: 'chunked'`): every byte hashed once, in CHUNK_BYTES leaves. The addon's chunk
// root when it has one (runs of 16 equal leaves in AVX-512 lanes), else
// latin1 digests as above. Same values as protocols/commit (fast-commit test).
const chunkedHeads = new Map<string, { out: Buffer, at: number }>()
function chunkedHead (t: TensorData): { out: Buffer, at: number } {
  const key = `${t.dtype}:${t.shape.join(',')}`
  let h = chunkedHeads.get(key)
  if (h !== undefined) return h
  const header = tensorHeader(t.dtype, t.shape)
  const out = Buffer.alloc(2 + header.length + 32)
  out[0] = CHUNKED_TAG; out[1] = CHUNKED_COMMITMENT_VERSION
  out.set(header, 2)
  h = { out, at: 2 + header.length }
  if (chunkedHeads.size >= 256) chunkedHeads.clear()
  chunkedHeads.set(key, h)
  return h
}

const CHUNK_DIMS = Int32Array.of(CHUNK_BYTES, CHUNK_LEAF_TAG)
let nativeChunks: ((bytes: Uint8Array, dims: Int32Array, out: Uint8Array) => boolean) | null | undefined

function chunkRootInto (bytes: Uint8Array, out: Buffer, at: number): void {
  if (nativeChunks === undefined) nativeChunks = nativeChunkRoot() ?? null
  if (nativeChunks !== null) {
    if (nativeChunks(bytes, CHUNK_DIMS, out.subarray(at, at + 32))) return
    nativeChunks = null
  }
  const s = scratchFor(1 + CHUNK_BYTES)
  s[0] = CHUNK_LEAF_TAG
  const src = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const leaves: string[] = new Array<string>(Math.ceil(bytes.length / CHUNK_BYTES))
  for (let i = 0; i < leaves.length; i++) {
    const o = i * CHUNK_BYTES
    const len = Math.min(CHUNK_BYTES, bytes.length - o)
    src.copy(s, 1, o, o + len)
    leaves[i] = shaL(s.subarray(0, len + 1))
  }
  put(out, merkle(leaves), at)
}

function chunkedRootL (t: TensorData): string {
  const v = t.values
  let n = 1
  for (const d of t.shape) n *= d
  if (v.length !== n) throw new TypeError(`tensor has ${v.length} values but shape [${t.shape.join(',')}] needs ${n}`)
  const h = chunkedHead(t)
  chunkRootInto(new Uint8Array(v.buffer, v.byteOffset, v.byteLength), h.out, h.at)
  return shaL(h.out)
}

/** Same value as protocols/commit commitChunked(t).root. */
export function fastChunkedRoot (t: TensorData): Uint8Array {
  if (!LE) return commitChunked(t).root
  return fromL(chunkedRootL(t))
}

/** Same value as protocols/commit chunkedStateRoot(tensors, step). */
export function fastChunkedStateRoot (tensors: readonly TensorData[], step: number): Uint8Array {
  if (!LE) return chunkedStateRoot(tensors, step)
  return fromL(merkle([...tensors.map(chunkedRootL), Buffer.from(stepLeaf(step)).toString('latin1')]))
}

/** Same value as protocols/commit commitChunked(t).root. */
export function fastChunkedTensorRoot (t: TensorData): Uint8Array {
  if (!LE) return commitChunked(t).root
  return fromL(chunkedRootL(t))
}

/** The fast tensor commitment root under `c` (protocols/commit tensorCommitmentRoot). */
export function fastTensorRootUnder (c: CommitScheme): (t: TensorData) => Uint8Array {
  return c === 'chunked' ? fastChunkedTensorRoot : fastTensorRoot
}

/** The fast state root under `c` (protocols/commit stateRootUnder). */
export function fastStateRootUnder (c: CommitScheme, tensors: readonly TensorData[], step: number): Uint8Array {
  return c === 'chunked' ? fastChunkedStateRoot(tensors, step) : fastStateRoot(tensors, step)
}

/** Which implementation fastChunkedStateRoot uses in this thread (for the bench). */
export function chunkedRootPath (): 'native' | 'js' {
  if (nativeChunks === undefined) nativeChunks = nativeChunkRoot() ?? null
  return nativeChunks === null ? 'js' : 'native'
}
