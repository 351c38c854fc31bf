import { hash } from 'node:crypto'
import { stepLeaf, stateRoot } from '../../protocols/commit/state.js'
import { dtypeBytes, matrixView, tensorHeader, type TensorData } from '../../protocols/commit/tensor.js'

// A faster implementation of protocols/commit's tensor commitment and state
// root for the training loop. It must give identical roots: the unit test
// test/unit/train/fast-commit.test.ts compares it with protocols/commit, and
// every checkpoint cross-checks it (hash-job.ts).
//
// Where the time goes: a [784,128] tensor needs ~1.8k sha256 calls (a leaf per
// row and per column plus the inner nodes) over ~0.8 MB, and the per-call
// overhead dominates. Most of that overhead is allocating the Buffer that
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

function tensorRootL (t: TensorData): string {
  const v = t.values
  const bytes = new Uint8Array(v.buffer, v.byteOffset, v.byteLength)
  const { rows, cols } = matrixView(t.shape)
  if (v.length !== rows * cols) throw new TypeError(`tensor has ${v.length} values but shape [${t.shape.join(',')}] needs ${rows * cols}`)
  const eb = dtypeBytes(t.dtype)
  const rb = cols * eb
  const s = scratchFor(1 + (cols === 1 ? bytes.length : Math.max(rb, rows * eb)))
  s[0] = 0
  const rl: string[] = new Array<string>(rows)
  const src = Buffer.from(v.buffer, v.byteOffset, v.byteLength)
  const rowLeaf = s.subarray(0, rb + 1)
  for (let r = 0, o = 0; r < rows; r++, o += rb) {
    src.copy(s, 1, o, o + rb)
    rl[r] = shaL(rowLeaf)
  }
  let cl: string[]
  if (cols === 1) {
    s.set(bytes, 1)
    cl = [shaL(s.subarray(0, bytes.length + 1))]
  } else {
    cl = new Array<string>(cols)
    const leaf = s.subarray(0, rows * eb + 1)
    if (eb === 4 && v.byteOffset % 4 === 0) {
      const words = new Uint32Array(v.buffer, v.byteOffset, v.length)
      const col = new Uint32Array(rows)
      const colBytes = new Uint8Array(col.buffer)
      for (let c = 0; c < cols; c++) {
        for (let r = 0, k = c; r < rows; r++, k += cols) col[r] = words[k]
        s.set(colBytes, 1)
        cl[c] = shaL(leaf)
      }
    } else {
      for (let c = 0; c < cols; c++) {
        for (let r = 0; r < rows; r++) for (let k = 0; k < eb; k++) s[1 + r * eb + k] = bytes[(r * cols + c) * eb + k]
        cl[c] = shaL(leaf)
      }
    }
  }
  const rowRoot = merkle(rl)
  const colRoot = merkle(cl)
  const header = tensorHeader(t.dtype, t.shape)
  const out = Buffer.alloc(1 + header.length + 64)
  out[0] = 2; out.set(header, 1); put(out, rowRoot, 1 + header.length); put(out, colRoot, 1 + header.length + 32)
  return shaL(out)
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
