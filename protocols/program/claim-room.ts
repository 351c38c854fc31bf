import { axisLayout } from '../commit/tensor.js'
import { CHUNK_BYTES, chunkLayout } from '../commit/chunked.js'
import type { TaskProgram } from './program.js'
import { stateIsChunked } from './state-commitment.js'
import type { LayerJson, TopologyInfo } from './topology.js'

// Whether every dispute over a step of a program fits the chain's
// limits (admissible.ts). A dispute ends in one element claim, which carries
// the op's operand rows/columns and the defender's leaf of the output (≤
// MAX_CLAIM_BYTES); on the way, a forced query makes the defender post one
// leaf of any row or column tree of any tensor of its tape (≤
// MAX_SLICE_BYTES, so that a lie claim can carry it). Both grow with the program: a column of a convolution's
// activations is batch × height × width values, so the default cnn at batch 64
// needs 366 KiB of operands for one element of its first kernel's gradient.
// A claim that does not fit cannot be made (a cheating solver wins on the
// challenger's clock), and a slice that does not fit cannot be answered (a
// griefer forcing it wins against an honest solver). The bound below is an
// upper bound per kernel of the layer's forward and backward pass, the loss
// and the optimizer, on the operands protocols/reference names for one
// element (MatMul: a row and a column of K; Conv2DBackpropFilter: a column of
// its input and one of its output gradient; windows: their rows).

const F32 = 4
/** Per operand in a claim besides its values and Merkle siblings: the other axis's root, dtype, shape, CBOR. */
export const PER_OPERAND = 32 + 64
/** The rest of an element claim: the signed commit, the entry (≤ a few hundred bytes for an op), the tape path, the output leaf's proof. */
export const CLAIM_FRAME = 8 * 1024

export interface Need { bytes: number, what: string }
/** The largest element claim (program bytes excluded) and the largest tensor leaf a step's dispute can need. */
export interface StepRoom { claim: Need, leaf: Need }

/** Levels of the deeper of a float32 tensor's two trees: an operand's Merkle path has at most that many siblings. */
export function treeDepth (shape: readonly number[]): number {
  let most = 0
  for (const axis of ['row', 'col'] as const) {
    const n = axisLayout('float32', shape, axis).leaves
    most = Math.max(most, n <= 1 ? 0 : Math.ceil(Math.log2(n)))
  }
  return most
}

/** The bytes operand slices take in a claim besides their values: `n` of them, read from tensors of shapes `from`. */
export function operandFrame (n: number, from: ReadonlyArray<readonly number[]>): number {
  return n * (PER_OPERAND + 32 * Math.max(0, ...from.map(treeDepth)))
}

/** Bytes of the largest leaf of either tree (rows, columns) of a float32 tensor. */
export function leafBytes (shape: readonly number[]): number {
  let most = 0
  for (const axis of ['row', 'col'] as const) {
    const l = axisLayout('float32', shape, axis)
    most = Math.max(most, Math.min(l.group, l.count) * l.sliceBytes)
  }
  return most
}

const prod = (s: readonly number[]): number => s.reduce((a, b) => a * b, 1)
const last = (s: readonly number[]): number => s.length === 0 ? 1 : s[s.length - 1]
const pair = (v: unknown, dflt: [number, number]): [number, number] =>
  typeof v === 'number' ? [v, v] : Array.isArray(v) && v.length === 2 ? [Number(v[0]), Number(v[1])] : dflt

type Claims = Array<{ floats: number, frame: number, out: number[], what: string }>
type Tensors = Array<{ shape: number[], what: string }>

type RoomProgram = Pick<TaskProgram, 'batchSize' | 'model' | 'dataset' | 'stateCommitment'> & { info: Pick<TopologyInfo, 'inputShape' | 'weights'> }
type ClaimFn = (what: string, floats: number, operands: number, out: number[], from: number[][]) => void

/** The room a step of validated program `p` needs (a Sequential topology, or the GPT). */
export function stepRoom (p: RoomProgram): StepRoom {
  const tensors: Tensors = []
  const claims: Claims = []
  /** an element of `out` reading `floats` values in `operands` slices of tensors of shapes `from` */
  const claim: ClaimFn = (what, floats, operands, out, from) => { claims.push({ what, floats, frame: operandFrame(operands, from), out }) }
  const B = p.batchSize
  // a data claim: the defender's leaf of the batch and the dataset row of [n, width]
  claim('the batch input x (a data claim)', p.dataset.rowSize, 1, [B, ...p.info.inputShape], [[p.dataset.trainSize, p.dataset.rowSize]])
  claim('the batch labels y (a data claim)', p.dataset.classes, 1, [B, p.dataset.classes], [[p.dataset.trainSize, p.dataset.classes]])
  tensors.push({ shape: [B, ...p.info.inputShape], what: 'the batch input x' }, { shape: [B, p.dataset.classes], what: 'the batch labels y' })
  if (p.model.gpt !== undefined) gptRoom(p, claim, tensors)
  else sequentialRoom(p, claim, tensors)
  // the optimizer: elementwise on each weight (and its gradient and moments, of the same shape)
  for (const w of p.info.weights) {
    tensors.push({ shape: w.shape, what: `weight ${w.layer}/${w.name}` })
    claim(`the update of ${w.layer}/${w.name}`, 2 * last(w.shape), 2, w.shape, [w.shape])
  }
  // chunked state roots: the cross-check of each state tensor's @StateRead and @StateWrite (Adam's moments have
  // their weight's shape, its β products are scalars)
  if (stateIsChunked(p)) for (const w of p.info.weights) claims.push(conversionClaim(w.shape, `${w.layer}/${w.name}`))
  let leaf: Need = { bytes: 0, what: '' }
  for (const t of tensors) {
    const b = leafBytes(t.shape)
    if (b > leaf.bytes) leaf = { bytes: b, what: `a leaf of ${t.what} [${t.shape.join(',')}]` }
  }
  // a chunk-tree walk's answer is one chunk
  if (stateIsChunked(p) && CHUNK_BYTES > leaf.bytes) leaf = { bytes: CHUNK_BYTES, what: 'a chunk of a state tensor' }
  let most: Need = { bytes: 0, what: '' }
  for (const c of claims) {
    const b = claimBytes(c)
    if (b > most.bytes) most = { bytes: b, what: `an element of ${c.what}` }
  }
  return { claim: most, leaf }
}

/**
 * The convert claim on a state tensor of `shape` (float32): one chunk with its
 * path and header fields, one row or column leaf with its path and the other
 * axis's root (dispute/judge-state-io.ts). In stepRoom's terms: the chunk as
 * the claim's values, the leaf as its `out`.
 */
export function conversionClaim (shape: readonly number[], what: string): Claims[number] {
  const chunk = chunkLayout('float32', shape)
  const chunkBytes = Math.min(CHUNK_BYTES, chunk.bytes)
  return { what: `the state conversions of ${what}`, floats: chunkBytes / F32, frame: PER_OPERAND + 32 * chunk.depth + operandFrame(1, [shape]), out: [...shape] }
}

/** Bytes of the largest convert claim on a state tensor of `shape` (program bytes excluded). */
export function conversionClaimBytes (shape: readonly number[]): number {
  return claimBytes(conversionClaim(shape, ''))
}

/** An element claim's bytes: its values, their frames, the output's largest leaf and the rest. */
function claimBytes (c: Claims[number]): number {
  return c.floats * F32 + c.frame + leafBytes(c.out) + CLAIM_FRAME
}

/**
 * The GPT (node/train/gpt.ts) over context T, vocabulary V, width D, MLP
 * width M and H heads, bounded over all its dense layers at once: the token
 * rows [B·T, ·] of every activation, weight gradients reading columns of B·T,
 * attention over [B·H·T, T], last-axis reductions and column sums, and the
 * position-embedding sum over rows of T·D.
 */
function gptRoom (p: Pick<TaskProgram, 'batchSize' | 'model' | 'dataset'>, claim: ClaimFn, tensors: Tensors): void {
  const g = p.model.gpt!
  const B = p.batchSize
  const V = p.dataset.text?.vocab.length ?? 1; const T = p.dataset.text?.context ?? 1
  const D = g.dModel; const M = g.mlp; const H = g.heads
  const K = Math.max(V, D, M); const N = Math.max(V, 3 * D, M)
  const rows = B * T
  for (const w of [V, D, 3 * D, M]) tensors.push({ shape: [rows, w], what: `an activation [${rows}, ${w}]` })
  tensors.push({ shape: [B * H * T, T], what: 'the attention scores' }, { shape: [B * H * T, Math.ceil(D / H)], what: 'a head' })
  claim('a dense layer', 2 * K + N, 3, [rows, N], [[rows, K], [K, N]])
  claim('a dense layer\'s input gradient', 2 * N, 2, [rows, K], [[rows, N], [K, N]])
  claim('a dense layer\'s kernel gradient', 2 * rows, 2, [K, N], [[rows, K], [rows, N]])
  claim('a bias or position gradient', rows, 1, [Math.max(N, T), N], [[rows, N]])
  claim('attention', 2 * Math.max(T, D), 2, [B * H * T, Math.max(T, D)], [[B * H * T, T], [rows, 3 * D]])
  claim('a reduction over the last axis', 2 * Math.max(T, N), 2, [rows, N], [[rows, N], [B * H * T, T]])
  // the position embedding is added on [B, T·D] (tokens and wpe reshaped, so its gradient is a column Sum):
  // an element of the sum reads a row of T·D values of each operand, its reshape back to tokens one
  tensors.push({ shape: [B, T * D], what: 'the position-embedding sum' })
  claim('the position-embedding sum', 2 * T * D, 2, [B, T * D], [[B, T * D], [1, T * D]])
  claim('the position-embedding sum reshaped to tokens', T * D, 1, [rows, D], [[B, T * D]])
}

/** A Sequential topology (topology.ts), layer by layer, and its loss. */
function sequentialRoom (p: Pick<TaskProgram, 'batchSize' | 'model' | 'dataset'> & { info: Pick<TopologyInfo, 'inputShape'> }, claim: ClaimFn, tensors: Tensors): void {
  const layers = (p.model.topology?.config.layers ?? []) as LayerJson[]
  const B = p.batchSize
  let shape = [...p.info.inputShape]
  layers.forEach((l, i) => {
    const c = l.config
    const name = `layer ${i} (${l.class_name})`
    const x = [B, ...shape]
    switch (l.class_name) {
      case 'Dense': {
        const K = shape[0]; const U = Number(c.units)
        const y = [B, U]
        claim(`${name} MatMul`, 2 * K + U, 3, y, [x, [K, U], [U]])
        claim(`${name} input gradient`, 2 * U, 2, x, [y, [K, U]])
        claim(`${name} kernel gradient`, 2 * B, 2, [K, U], [x, y])
        claim(`${name} bias gradient`, B, 1, [U], [y])
        claim(`${name} bias, activation`, 2 * U, 2, y, [y])
        shape = [U]
        break
      }
      case 'Conv2D': {
        const [H, W, CI] = shape
        const [kh, kw] = pair(c.kernel_size, [1, 1]); const [sh, sw] = pair(c.strides, [1, 1])
        const same = c.padding === 'same'
        const OH = same ? Math.ceil(H / sh) : Math.ceil((H - kh + 1) / sh); const OW = same ? Math.ceil(W / sw) : Math.ceil((W - kw + 1) / sw)
        const Fo = Number(c.filters)
        const y = [B, OH, OW, Fo]
        claim(`${name} Conv2D`, 2 * kh * kw * CI + Fo, kh * kw + 2, y, [x, [kh, kw, CI, Fo]])
        claim(`${name} Conv2DBackpropFilter`, B * H * W + B * OH * OW, 2, [kh, kw, CI, Fo], [x, y])
        claim(`${name} Conv2DBackpropInput`, 2 * kh * kw * Fo, 2 * kh * kw, x, [y, [kh, kw, CI, Fo]])
        claim(`${name} bias gradient`, B * OH * OW, 1, [Fo], [y])
        claim(`${name} bias, activation`, 2 * Fo, 2, y, [y])
        shape = [OH, OW, Fo]
        break
      }
      case 'MaxPooling2D': {
        const [H, W, C] = shape
        const [ph, pw] = pair(c.pool_size, [2, 2]); const [sh, sw] = pair(c.strides, [ph, pw])
        const same = c.padding === 'same'
        const OH = same ? Math.ceil(H / sh) : Math.ceil((H - ph + 1) / sh); const OW = same ? Math.ceil(W / sw) : Math.ceil((W - pw + 1) / sw)
        const y = [B, OH, OW, C]
        // MaxPoolGrad: every window covering the element (⌈ph/sh⌉·⌈pw/sw⌉ of them), its rows and its gradient's row
        const cover = Math.ceil(ph / sh) * Math.ceil(pw / sw)
        claim(`${name} MaxPool`, ph * pw * C, ph * pw, y, [x])
        claim(`${name} MaxPoolGrad`, cover * (ph * pw + 1) * C, cover * (ph * pw + 1), x, [x, y])
        shape = [OH, OW, C]
        break
      }
      default: {
        // Flatten, Reshape: an element of the output reads the row (or column) of the input holding it
        const to = l.class_name === 'Flatten' ? [prod(shape)] : (c.target_shape as number[]).map(Number)
        claim(`${name} Reshape`, Math.max(last(x), prod(x) / last(x)), 1, [B, ...to], [x])
        claim(`${name} Reshape (gradient)`, Math.max(last(to), B * prod(to) / last(to)), 1, x, [[B, ...to]])
        shape = to
      }
    }
    tensors.push({ shape: [B, ...shape], what: `the output of ${name}` })
  })
  // the loss on [B, classes] logits: elementwise ops, reductions over classes and over the batch
  const classes = p.dataset.classes
  claim('the loss', 2 * Math.max(B, classes), 2, [B, classes], [[B, classes]])
}
