import { hash } from 'node:crypto'
import { stepLeaf, stateRoot } from '../../protocols/commit/state.js'
import { TENSOR_COMMITMENT_VERSION, axisLayout, dtypeBytes, leafSpan, matrixView, tensorHeader, type TensorData } from '../../protocols/commit/tensor.js'

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

function tensorRootL (t: TensorData): string {
  const v = t.values
  const bytes = new Uint8Array(v.buffer, v.byteOffset, v.byteLength)
  const { rows, cols } = matrixView(t.shape)
  if (v.length !== rows * cols) throw new TypeError(`tensor has ${v.length} values but shape [${t.shape.join(',')}] needs ${rows * cols}`)
  const eb = dtypeBytes(t.dtype)
  const rl = axisLayout(t.dtype, t.shape, 'row')
  const clay = axisLayout(t.dtype, t.shape, 'col')
  // a leaf is at most max(LEAF_BYTES, one row or column) bytes
  const s = scratchFor(1 + Math.max(rl.group * rl.sliceBytes, clay.group * clay.sliceBytes))
  s[0] = 0
  const src = Buffer.from(v.buffer, v.byteOffset, v.byteLength)
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
  } else if (eb === 4 && v.byteOffset % 4 === 0) {
    // columns are gathered 32 bits at a time into an aligned buffer (scratch+1 is not aligned)
    const words = new Uint32Array(v.buffer, v.byteOffset, v.length)
    const col = gatherFor(clay.group * rows)
    const colBytes = new Uint8Array(col.buffer)
    for (let i = 0; i < clay.leaves; i++) {
      const { first, n } = leafSpan(clay, i)
      for (let j = 0; j < n; j++) {
        const o = j * rows
        for (let r = 0, k = first + j; r < rows; r++, k += cols) col[o + r] = words[k]
      }
      const len = n * rows * 4
      s.set(colBytes.subarray(0, len), 1)
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
  const rowRoot = merkle(rowLeaves)
  const colRoot = merkle(colLeaves)
  const header = tensorHeader(t.dtype, t.shape)
  const out = Buffer.alloc(2 + header.length + 64)
  out[0] = 2; out[1] = TENSOR_COMMITMENT_VERSION
  out.set(header, 2); put(out, rowRoot, 2 + header.length); put(out, colRoot, 2 + header.length + 32)
  return shaL(out)
}

let gather = new Uint32Array(1 << 12)
function gatherFor (n: number): Uint32Array {
  if (gather.length < n) gather = new Uint32Array(Math.max(n, gather.length * 2))
  return gather
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
