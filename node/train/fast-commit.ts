import { hash } from 'node:crypto'
import { ZERO_HASH } from '../../protocols/commit/merkle.js'
import { stepLeaf, stateRoot } from '../../protocols/commit/state.js'
import { dtypeBytes, matrixView, tensorHeader, type TensorData } from '../../protocols/commit/tensor.js'

// A faster implementation of protocols/commit's tensor commitment and state
// root for the training loop (one-shot crypto.hash, reused scratch buffers,
// 32-bit column gathers). It must give identical roots: the unit test
// test/unit/train/fast-commit.test.ts compares it with protocols/commit.

const LE = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1

function sha (b: Uint8Array): Uint8Array {
  return hash('sha256', b, 'buffer') as unknown as Uint8Array
}

const nodeScratch = new Uint8Array(65)
function merkle (leaves: Uint8Array[]): Uint8Array {
  if (leaves.length === 0) return ZERO_HASH
  let level = leaves
  nodeScratch[0] = 1
  while (level.length > 1) {
    const next: Uint8Array[] = new Array(Math.ceil(level.length / 2))
    for (let i = 0; i < level.length; i += 2) {
      nodeScratch.set(level[i], 1)
      nodeScratch.set(i + 1 < level.length ? level[i + 1] : ZERO_HASH, 33)
      next[i >> 1] = sha(nodeScratch)
    }
    level = next
  }
  return level[0]
}

function leafOf (scratch: Uint8Array, n: number): Uint8Array {
  return sha(scratch.subarray(0, n + 1))
}

export function fastTensorRoot (t: TensorData): Uint8Array {
  const v = t.values
  const bytes = new Uint8Array(v.buffer, v.byteOffset, v.byteLength)
  const { rows, cols } = matrixView(t.shape)
  if (v.length !== rows * cols) throw new TypeError(`tensor has ${v.length} values but shape [${t.shape.join(',')}] needs ${rows * cols}`)
  const eb = dtypeBytes(t.dtype)
  const rb = cols * eb
  const scratch = new Uint8Array(1 + (cols === 1 ? bytes.length : Math.max(rb, rows * eb)))
  scratch[0] = 0
  const rl: Uint8Array[] = new Array(rows)
  for (let r = 0; r < rows; r++) { scratch.set(bytes.subarray(r * rb, (r + 1) * rb), 1); rl[r] = leafOf(scratch, rb) }
  let cl: Uint8Array[]
  if (cols === 1) {
    scratch.set(bytes, 1); cl = [leafOf(scratch, bytes.length)]
  } else {
    cl = new Array(cols)
    if (eb === 4 && v.byteOffset % 4 === 0) {
      const src = new Uint32Array(v.buffer, v.byteOffset, v.length)
      const col = new Uint32Array(rows)
      const colBytes = new Uint8Array(col.buffer)
      for (let c = 0; c < cols; c++) {
        for (let r = 0, k = c; r < rows; r++, k += cols) col[r] = src[k]
        scratch.set(colBytes, 1); cl[c] = leafOf(scratch, rows * 4)
      }
    } else {
      for (let c = 0; c < cols; c++) {
        for (let r = 0; r < rows; r++) for (let k = 0; k < eb; k++) scratch[1 + r * eb + k] = bytes[(r * cols + c) * eb + k]
        cl[c] = leafOf(scratch, rows * eb)
      }
    }
  }
  const header = tensorHeader(t.dtype, t.shape)
  const out = new Uint8Array(1 + header.length + 64)
  out[0] = 2; out.set(header, 1); out.set(merkle(rl), 1 + header.length); out.set(merkle(cl), 1 + header.length + 32)
  return sha(out)
}

/** Same value as protocols/commit stateRoot(tensors, step). */
export function fastStateRoot (tensors: readonly TensorData[], step: number): Uint8Array {
  if (!LE) return stateRoot(tensors, step)
  return merkle([...tensors.map(fastTensorRoot), stepLeaf(step)])
}
