import { matrixView } from '../commit/tensor.js'
import type { TypedValues } from '../commit/tensor.js'
import { addC, mulC } from './dot.js'
import { bitsOf, bitsView, lt } from './f32.js'
import { fullyConnected } from './xnn-order.js'
import { checkFlat, unravel } from './shape.js'
import { ReferenceError, type KernelRef, type OperandRef, type OpShape } from './types.js'

// MatMul family (BatchMatMul, _FusedMatMul). Output [..., M, N] element
// (b, i, j) reads row i of A (or column i if transposeA) and column j of B
// (or row j if transposeB) — one dot product of length K.
//
// wasm, no transpose and batch 1 (XNNPACK fully-connected path):
//   acc = bias[j] or 0; for k: acc = fround(acc + fround(a*b)); then activation.
// wasm otherwise: k in blocks of 48; each block sum s starts at 0 with
//   s = fround(s + fround(a*b)); out = fround(out + s) from out = 0, clamped
//   by the activation after every block (a fused bias on this path hits an
//   upstream bug: refused).
// cpu: k in blocks of 48, each block summed in float64, out = fround(out + s).

export const BLOCK = 48

export interface MM { batch: number, M: number, N: number, K: number, ta: boolean, tb: boolean, aBatch: number, bBatch: number }

export function dims (op: OpShape): MM {
  const [a, b] = op.inputs
  if (a === undefined || b === undefined) throw new ReferenceError(`${op.kernel} needs inputs a and b`)
  const ta = op.attrs.transposeA === true; const tb = op.attrs.transposeB === true
  const ra = a.shape.length; const rb = b.shape.length
  if (ra < 2 || rb < 2) throw new ReferenceError(`${op.kernel} needs rank >= 2 inputs`)
  const M = ta ? a.shape[ra - 1] : a.shape[ra - 2]
  const K = ta ? a.shape[ra - 2] : a.shape[ra - 1]
  const K2 = tb ? b.shape[rb - 1] : b.shape[rb - 2]
  const N = tb ? b.shape[rb - 2] : b.shape[rb - 1]
  if (K !== K2) throw new ReferenceError(`${op.kernel}: inner dimensions ${K} and ${K2} differ`)
  const aBatch = a.shape.slice(0, -2).reduce((x, y) => x * y, 1)
  const bBatch = b.shape.slice(0, -2).reduce((x, y) => x * y, 1)
  if (aBatch !== bBatch && aBatch !== 1 && bBatch !== 1) throw new ReferenceError(`${op.kernel}: batch sizes ${aBatch} and ${bBatch} do not broadcast`)
  return { batch: Math.max(aBatch, bBatch), M, N, K, ta, tb, aBatch, bBatch }
}

export function coords (op: OpShape, flat: number, d: MM): { b: number, i: number, j: number } {
  checkFlat(flat, op.output.shape)
  const idx = unravel(flat, op.output.shape)
  const r = idx.length
  const b = Math.floor(flat / (d.M * d.N))
  return { b, i: idx[r - 2], j: idx[r - 1] }
}

export function operandsOf (op: OpShape, flat: number): OperandRef[] {
  const d = dims(op)
  const { b, i, j } = coords(op, flat, d)
  const ab = d.aBatch === 1 ? 0 : b; const bb = d.bBatch === 1 ? 0 : b
  const refs: OperandRef[] = [
    d.ta ? { input: 0, axis: 'col', index: i } : { input: 0, axis: 'row', index: ab * d.M + i },
    d.tb ? { input: 1, axis: 'row', index: bb * d.N + j } : { input: 1, axis: 'col', index: j }
  ]
  if (op.inputs.length > 2) {
    const bias = op.inputs[2]
    if (bias.shape.length > 1 || (bias.shape.length === 1 && bias.shape[0] !== d.N && bias.shape[0] !== 1)) throw new ReferenceError(`${op.kernel}: only a [N] or scalar bias has an element reference`)
    refs.push({ input: 2, axis: 'row', index: 0 })
  }
  return refs
}

/** The K values of A and B for element (b, i, j) out of the operand rows/columns. */
export function vectors (op: OpShape, d: MM, b: number, ops: ArrayLike<number>[]): { a: (k: number) => number, bv: (k: number) => number } {
  const ab = d.aBatch === 1 ? 0 : b; const bb = d.bBatch === 1 ? 0 : b
  // A row (no transpose): the K values in order. A column (transposeA): rows of
  // the matrix view are (batch, k), so batch ab's values start at ab*K.
  const a = d.ta ? (k: number) => ops[0][ab * d.K + k] : (k: number) => ops[0][k]
  // B column (no transpose): rows (batch, k); B row (transposeB): the K values.
  const bv = d.tb ? (k: number) => ops[1][k] : (k: number) => ops[1][bb * d.K + k]
  return { a, bv }
}

/** XNNPACK's output clamp (fully-connected path): relu is (0 < v) ? v : 0, so -0 and every NaN give +0. */
function activation (op: OpShape, v: number): number {
  return reluOf(op) && !lt(0, v) ? 0 : v
}

function biasValue (op: OpShape, flat: number, ops: TypedValues[]): number | undefined {
  if (op.inputs.length <= 2) return undefined
  const bias = bitsView(ops[2])
  if (bias.length === 1) return bias[0]
  const { cols } = matrixView(op.output.shape)
  return bias[flat % cols]
}

export function checkF32 (op: OpShape): void {
  if (op.output.dtype !== 'float32' || op.inputs.some(i => i.dtype !== 'float32')) throw new ReferenceError(`${op.kernel}: only float32 has an element reference`)
}

export const WASM_MATMUL: KernelRef = {
  operands: operandsOf,
  computeBits: wasmMatMul
}

function wasmMatMul (op: OpShape, flat: number, ops: TypedValues[]): number {
  checkF32(op)
  const d = dims(op)
  const { b } = coords(op, flat, d)
  const { a, bv } = vectors(op, d, b, ops.map(bitsView))
  const bias = biasValue(op, flat, ops)
  if (!d.ta && !d.tb && d.batch === 1) {
    const i = unravel(flat, op.output.shape)[op.output.shape.length - 2]
    return activation(op, fullyConnected(d.K, d.M, i, a, bv, bias ?? 0))
  }
  // tfjs-backend-wasm 4.22 mis-indexes the bias on this path (upstream bug);
  // the zoo's steps never use it, so it has no reference rather than a guess
  if (bias !== undefined) throw new ReferenceError(`${op.kernel}: bias with a transpose or batch > 1 has no element reference (upstream wasm bias bug)`)
  // tfjs's own loop: per block, out = std::max(std::min(out + blockSum, max), min),
  // so a relu clamps after every block, keeps a NaN and keeps -0. Which of two
  // meeting NaNs survives changes when V8 tiers this loop up from Liftoff to
  // TurboFan (measured): no fixed answer, refused (dot.ts)
  const relu = reluOf(op)
  let out = 0
  for (let k0 = 0; k0 < d.K; k0 += BLOCK) {
    let s = 0
    const k1 = Math.min(k0 + BLOCK, d.K)
    for (let k = k0; k < k1; k++) s = addC(s, mulC(a(k), bv(k), op.kernel), op.kernel)
    out = addC(out, s, op.kernel)
    if (relu && lt(out, 0)) out = 0
  }
  return out
}

export function reluOf (op: OpShape): boolean {
  const act = op.attrs.activation
  if (act === undefined || act === null || act === 'linear') return false
  if (act === 'relu') return true
  throw new ReferenceError(`${op.kernel}: activation ${String(act)} has no element reference`)
}

export const CPU_MATMUL: KernelRef = {
  operands: operandsOf,
  computeBits (op, flat, ops) {
    checkF32(op)
    if (op.inputs.length > 2) throw new ReferenceError('cpu _FusedMatMul with bias has no element reference')
    const d = dims(op)
    const { b } = coords(op, flat, d)
    const { a, bv } = vectors(op, d, b, ops)
    let out = 0
    for (let k0 = 0; k0 < d.K; k0 += BLOCK) {
      let s = 0
      const k1 = Math.min(k0 + BLOCK, d.K)
      for (let k = k0; k < k1; k++) s += a(k) * bv(k)
      out = Math.fround(out + s)
    }
    // the cpu backend's NaN bits come from JS double arithmetic (engine-defined): no reference for them
    if (Number.isNaN(out)) throw new ReferenceError('cpu BatchMatMul: a NaN result has no defined bits on the cpu runtime')
    return activation(op, bitsOf(out))
  }
}
