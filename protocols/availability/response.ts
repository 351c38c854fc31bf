import { decode, encode } from 'cborg'
import { bytesEqual, merkleProof, merkleRoot, rootFromProof, sha256 } from '../commit/merkle.js'
import { stepLeaf } from '../commit/state.js'
import { combineRoots, commitTensor, matrixView, proveSlice, verifySlice, type DType, type SliceProof, type TensorData } from '../commit/tensor.js'
import { isCommittedStep, leafOfStep, proofDepth } from '../pol/segments.js'

// Data-availability challenge (docs/disputes.md, "Withheld checkpoints").
//
// A verifier that cannot obtain a valid checkpoint at step s challenges the
// solver on chain. The chain then draws, from the hash of the block that
// included the challenge (unknown to the solver when it committed and when it
// published its checkpoints), SAMPLE_COUNT rows of the state at step s,
// uniformly over all rows of all state tensors. The solver answers with
//   - the header of every state tensor (dtype, shape, row root, column root):
//     the chain recomputes each tensor commitment and from them the state root
//     (protocols/commit stateRoot: tensor commitments + the step leaf), which
//     must be the leaf of step s of the committed proof_root (leaf s / m with
//     a root every m steps; path of the chain's depth). So the set
//     of tensors and their shapes are bound to the commitment and the solver
//     cannot shrink what it is sampled from;
//   - each sampled row's leaf (the group of consecutive rows the row-tree leaf
//     holds, commitment v2) with its path to that tensor's row root.
// A leaf is at most max(LEAF_BYTES, one row): ~37 KiB for the Adam mlp's
// state (16 × 2 KiB leaves + paths + headers), at most MAX_RESPONSE_BYTES.
// (LEAF_BYTES = 4096 would not fit: 16 × 4 KiB alone is the limit.)
//
// Pure: no I/O. The chain runtime and the solver's node share this code.

export const AVAILABILITY_VERSION = 1
/** Rows sampled per challenge: a solver missing a fraction f of the rows answers all with probability (1 − f)^16. */
export const SAMPLE_COUNT = 16
/** The chain refuses a bigger response (the whole answer goes on chain). */
export const MAX_RESPONSE_BYTES = 64 * 1024
const MAX_DEPTH = 48
const MAX_TENSORS = 4096

export interface TensorHeader { dtype: DType, shape: number[], rowRoot: Uint8Array, colRoot: Uint8Array }
export interface SampledRow {
  tensor: number
  index: number
  /** canonical little-endian bytes of the row-tree leaf holding the row (its group of rows) */
  bytes: Uint8Array
  /** path of that leaf to the tensor's row root */
  siblings: Uint8Array[]
}

export interface AvailabilityResponse {
  v: 1
  /** every state tensor in state order */
  tensors: TensorHeader[]
  /** path of the recomputed state root to proof_root (leaf = checkpoint step) */
  statePath: Uint8Array[]
  samples: SampledRow[]
}

export type AvailabilityError = 'ResponseTooLarge' | 'InvalidAvailabilityResponse' | 'AvailabilityProofInvalid'

export class AvailabilityRejected extends Error {
  constructor (readonly reason: AvailabilityError, detail: string) { super(`${reason}: ${detail}`); this.name = 'AvailabilityRejected' }
}
function reject (reason: AvailabilityError, detail: string): never { throw new AvailabilityRejected(reason, detail) }

const te = new TextEncoder()
function u64le (n: number | bigint): Uint8Array {
  const b = new Uint8Array(8)
  new DataView(b.buffer).setBigUint64(0, BigInt(n), true)
  return b
}

/** The sampling seed of a challenge: the hash of the block that included it, and its id. */
export function availabilitySeed (blockHash: Uint8Array, challengeId: number | bigint): Uint8Array {
  return sha256(te.encode('proofswarm/availability/v1'), blockHash, u64le(challengeId))
}

/** Depth of the zero-padded Merkle tree over n leaves. */
export function depthFor (n: number): number {
  return n <= 1 ? 0 : Math.ceil(Math.log2(n))
}

/** Rows a tensor of this shape is sampled over (matrix view; ≥ 1 for any non-empty tensor). */
export function rowsOf (shape: readonly number[]): number { return matrixView(shape).rows }

/**
 * Sample k: a row drawn uniformly over all rows of all tensors (up to a
 * 2^-64 bias), as (tensor, row).
 */
export function samplePosition (seed: Uint8Array, k: number, rowCounts: readonly number[]): { tensor: number, row: number } {
  const total = rowCounts.reduce((a, b) => a + b, 0)
  if (total <= 0) throw new RangeError('a state with no rows cannot be sampled')
  const h = sha256(seed, u64le(k))
  let g = Number(new DataView(h.buffer, h.byteOffset, 8).getBigUint64(0, true) % BigInt(total))
  for (let t = 0; t < rowCounts.length; t++) {
    if (g < rowCounts[t]) return { tensor: t, row: g }
    g -= rowCounts[t]
  }
  throw new Error('unreachable')
}

/**
 * The leaf of proof_root that commits the state after `step` and the depth of
 * every path to it: with a root every m steps leaf step / m of
 * ⌈stepCount / m⌉ + 1 leaves (m = 1: leaf `step` of stepCount + 1).
 */
export function stateLeafOf (step: number, stepCount: number, m = 1): { leaf: number, depth: number } {
  if (!isCommittedStep(step, stepCount, m)) throw new RangeError(`the state after step ${step} is not a committed leaf (a root every ${m} of ${stepCount} steps)`)
  return { leaf: leafOfStep(step, stepCount, m), depth: proofDepth(stepCount, m) }
}

/**
 * The solver's answer from its local state at `step`; throws if the state does
 * not hash to the committed root (a solver without the true bytes cannot answer).
 * `stateRoots` are the proof's leaves; with `seg` (a root every m > 1 steps) the
 * state after `step` is leaf step / m of them.
 */
export function buildAvailabilityResponse (
  tensors: readonly TensorData[], step: number, stateRoots: readonly Uint8Array[], seed: Uint8Array, count = SAMPLE_COUNT,
  seg?: { rootEvery: number, steps: number }
): AvailabilityResponse {
  const leaf = seg === undefined ? step : stateLeafOf(step, seg.steps, seg.rootEvery).leaf
  if (step < 0 || leaf >= stateRoots.length) throw new RangeError(`step ${step} outside the proof's ${stateRoots.length} state roots`)
  const commits = tensors.map(t => commitTensor(t))
  const root = merkleRoot([...commits.map(c => c.root), stepLeaf(step)])
  if (!bytesEqual(root, stateRoots[leaf])) throw new Error(`the local state at step ${step} does not hash to the committed state root`)
  const rowCounts = tensors.map(t => rowsOf(t.shape))
  const samples: SampledRow[] = []
  for (let k = 0; k < count; k++) {
    const { tensor, row } = samplePosition(seed, k, rowCounts)
    const p = proveSlice(tensors[tensor], 'row', row)
    samples.push({ tensor, index: row, bytes: p.bytes, siblings: p.siblings })
  }
  return {
    v: 1,
    tensors: tensors.map((t, i) => ({ dtype: t.dtype, shape: [...t.shape], rowRoot: commits[i].rowRoot, colRoot: commits[i].colRoot })),
    statePath: merkleProof(stateRoots, leaf),
    samples
  }
}

export function encodeAvailabilityResponse (r: AvailabilityResponse): Uint8Array { return encode(r) }

// ---- checking (the chain's rule) ----
const is32 = (v: unknown): v is Uint8Array => v instanceof Uint8Array && v.length === 32
function hashes (v: unknown, what: string): Uint8Array[] {
  if (!Array.isArray(v) || v.length > MAX_DEPTH || !v.every(is32)) reject('InvalidAvailabilityResponse', `${what} must be a list of 32-byte hashes`)
  return v
}
function int (v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 0x7fffffff) reject('InvalidAvailabilityResponse', `${what} must be a non-negative integer`)
  return v
}
function onPath (root: Uint8Array, leaf: Uint8Array, index: number, path: Uint8Array[], depth: number): boolean {
  return path.length === depth && index < 2 ** depth && bytesEqual(rootFromProof(leaf, index, path), root)
}
/** A tensor header read from an answer (CBOR), checked for shape and sizes before any hashing. */
export function checkedHeader (h: unknown, i: number): TensorHeader {
  const x = h as TensorHeader
  if (typeof x !== 'object' || x === null || !['float32', 'int32', 'bool'].includes(x.dtype) || !is32(x.rowRoot) || !is32(x.colRoot)) reject('InvalidAvailabilityResponse', `tensor ${i}: malformed header`)
  if (!Array.isArray(x.shape) || x.shape.length > 8 || !x.shape.every(d => Number.isInteger(d) && d > 0 && d <= 1 << 24)) reject('InvalidAvailabilityResponse', `tensor ${i}: bad shape`)
  if (x.shape.reduce((a, b) => a * b, 1) > 2 ** 40) reject('InvalidAvailabilityResponse', `tensor ${i}: too large`)
  return x
}

export function decodeAvailabilityResponse (bytes: Uint8Array): AvailabilityResponse {
  if (bytes.length > MAX_RESPONSE_BYTES) reject('ResponseTooLarge', `${bytes.length} bytes exceed ${MAX_RESPONSE_BYTES}`)
  let r: AvailabilityResponse
  try { r = decode(bytes) as AvailabilityResponse } catch (e) { reject('InvalidAvailabilityResponse', `not CBOR: ${(e as Error).message}`) }
  if (typeof r !== 'object' || r === null || r.v !== AVAILABILITY_VERSION) reject('InvalidAvailabilityResponse', 'not a version 1 availability response')
  return r
}

export interface AvailabilityContext {
  proofRoot: Uint8Array
  /** the challenged checkpoint step (a committed state: a leaf of proof_root) */
  step: number
  /** steps the solver committed (proof_root has stepCount + 1 leaves, or ⌈stepCount / m⌉ + 1 with a root every m steps) */
  stepCount: number
  /** the task's state-root spacing m (absent = 1): the state after `step` is leaf step / m, every path proofDepth(stepCount, m) long */
  rootEvery?: number
  seed: Uint8Array
  count?: number
}

/**
 * Checks a response (CBOR bytes) against the committed proof root and the
 * challenge's seed; throws AvailabilityRejected, returns the decoded response.
 * Cost: one tensor commitment hash per state tensor, the state tree, one path
 * to proof_root and one row path per sample.
 */
export function checkAvailabilityResponse (ctx: AvailabilityContext, bytes: Uint8Array): AvailabilityResponse {
  const r = decodeAvailabilityResponse(bytes)
  const count = ctx.count ?? SAMPLE_COUNT
  if (!Array.isArray(r.tensors) || r.tensors.length < 1 || r.tensors.length > MAX_TENSORS) reject('InvalidAvailabilityResponse', `a state has 1 to ${MAX_TENSORS} tensors`)
  const headers = r.tensors.map(checkedHeader)
  const roots = headers.map(h => combineRoots(h.dtype, h.shape, h.rowRoot, h.colRoot))
  const stateRoot = merkleRoot([...roots, stepLeaf(ctx.step)])
  // the leaf and the depth are the chain's (from the task's steps and m): no inner node, no other step's leaf passes
  let at: { leaf: number, depth: number }
  try { at = stateLeafOf(ctx.step, ctx.stepCount, ctx.rootEvery ?? 1) } catch (e) { reject('InvalidAvailabilityResponse', (e as Error).message) }
  if (!onPath(ctx.proofRoot, stateRoot, at.leaf, hashes(r.statePath, 'statePath'), at.depth)) reject('AvailabilityProofInvalid', `the tensors do not make the state root at leaf ${at.leaf} of proof_root`)
  if (!Array.isArray(r.samples) || r.samples.length !== count) reject('InvalidAvailabilityResponse', `expected ${count} samples`)
  const rowCounts = headers.map(h => rowsOf(h.shape))
  r.samples.forEach((s, k) => {
    if (typeof s !== 'object' || s === null || !(s.bytes instanceof Uint8Array)) reject('InvalidAvailabilityResponse', `sample ${k} is malformed`)
    const want = samplePosition(ctx.seed, k, rowCounts)
    if (int(s.tensor, `sample ${k} tensor`) !== want.tensor || int(s.index, `sample ${k} row`) !== want.row) reject('InvalidAvailabilityResponse', `sample ${k} must be row ${want.row} of tensor ${want.tensor}`)
    const h = headers[want.tensor]
    const proof: SliceProof = { dtype: h.dtype, shape: h.shape, axis: 'row', index: want.row, bytes: s.bytes, siblings: hashes(s.siblings, `sample ${k} siblings`), otherRoot: h.colRoot }
    if (!verifySlice(roots[want.tensor], proof)) reject('AvailabilityProofInvalid', `sample ${k}: row ${want.row} does not verify against tensor ${want.tensor}'s commitment`)
  })
  return r
}
