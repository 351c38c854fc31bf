import { decode, encode } from 'cborg'
import { bytesEqual, merkleProof, merkleRoot, rootFromProof, sha256 } from '../commit/merkle.js'
import { stateLeaves, stepLeaf } from '../commit/state.js'
import { matrixView, proveSlice, verifySlice, type DType, type SliceProof, type TensorData } from '../commit/tensor.js'

// Data-availability challenge (docs/disputes.md, "Withheld checkpoints").
//
// A verifier that cannot obtain a valid checkpoint at step s challenges the
// solver on chain. The chain then draws, from the hash of the block that
// included the challenge (unknown to the solver when it committed and when it
// published its checkpoints), SAMPLE_COUNT positions (tensor t, row r) of the
// state at step s. The solver answers with those rows and Merkle paths:
//   row r  → tensor commitment t   (protocols/commit verifySlice)
//   tensor commitment t → state root at step s   (leaf t of the state tree)
//   state root → proof_root   (leaf s of the committed per-step roots)
// plus the state tree's step leaf at index N, which fixes the number N of state
// tensors (a different N would need a hash collision), so the solver cannot
// shrink the set it is sampled from. Shapes are bound by each tensor
// commitment, so rows are drawn from the real row count.
//
// Pure: no I/O. The chain runtime and the solver's node share this code.

export const AVAILABILITY_VERSION = 1
/** Rows sampled per challenge. */
export const SAMPLE_COUNT = 8
/** The chain refuses a bigger response (the whole answer goes on chain). */
export const MAX_RESPONSE_BYTES = 64 * 1024
const MAX_DEPTH = 48
const MAX_TENSORS = 1 << 20

export interface SampleProof {
  tensor: number
  /** commitment root of state tensor `tensor` */
  root: Uint8Array
  /** its path to the state root (leaf `tensor`) */
  path: Uint8Array[]
  row: { dtype: DType, shape: number[], index: number, bytes: Uint8Array, siblings: Uint8Array[], otherRoot: Uint8Array }
}

export interface AvailabilityResponse {
  v: 1
  stateRoot: Uint8Array
  /** stateRoot's path to proof_root (leaf = checkpoint step) */
  statePath: Uint8Array[]
  /** number of state tensors N; the step leaf is leaf N of the state tree */
  tensors: number
  stepPath: Uint8Array[]
  samples: SampleProof[]
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

function u64At (h: Uint8Array, off: number): bigint {
  return new DataView(h.buffer, h.byteOffset + off, 8).getBigUint64(0, true)
}

/** Tensor of sample k (uniform up to a 2^-64 bias). */
export function sampleTensor (seed: Uint8Array, k: number, tensors: number): number {
  return Number(u64At(sha256(seed, u64le(k)), 0) % BigInt(tensors))
}

/** Row of sample k within a tensor of `rows` rows. */
export function sampleRow (seed: Uint8Array, k: number, rows: number): number {
  return Number(u64At(sha256(seed, u64le(k)), 8) % BigInt(rows))
}

/** Depth of the zero-padded Merkle tree over n leaves. */
export function depthFor (n: number): number {
  return n <= 1 ? 0 : Math.ceil(Math.log2(n))
}

/** Rows a tensor of this shape is sampled over (matrix view; ≥ 1 for any non-empty tensor). */
export function rowsOf (shape: readonly number[]): number { return matrixView(shape).rows }

/**
 * The solver's answer from its local state at `step`; throws if the state does
 * not hash to the committed root (a solver without the true bytes cannot answer).
 */
export function buildAvailabilityResponse (tensors: readonly TensorData[], step: number, stateRoots: readonly Uint8Array[], seed: Uint8Array, count = SAMPLE_COUNT): AvailabilityResponse {
  const leaves = stateLeaves(tensors, step)
  const root = merkleRoot(leaves)
  if (step < 0 || step >= stateRoots.length) throw new RangeError(`step ${step} outside the proof's ${stateRoots.length} state roots`)
  if (!bytesEqual(root, stateRoots[step])) throw new Error(`the local state at step ${step} does not hash to the committed state root`)
  const n = tensors.length
  const samples: SampleProof[] = []
  for (let k = 0; k < count; k++) {
    const t = sampleTensor(seed, k, n)
    const r = sampleRow(seed, k, rowsOf(tensors[t].shape))
    const p = proveSlice(tensors[t], 'row', r)
    samples.push({ tensor: t, root: leaves[t], path: merkleProof(leaves, t), row: { dtype: p.dtype, shape: p.shape, index: p.index, bytes: p.bytes, siblings: p.siblings, otherRoot: p.otherRoot } })
  }
  return { v: 1, stateRoot: root, statePath: merkleProof(stateRoots, step), tensors: n, stepPath: merkleProof(leaves, n), samples }
}

export function encodeAvailabilityResponse (r: AvailabilityResponse): Uint8Array { return encode(r) }

// ---- checking (the chain's rule) ----
const is32 = (v: unknown): v is Uint8Array => v instanceof Uint8Array && v.length === 32
function hashes (v: unknown, what: string): Uint8Array[] {
  if (!Array.isArray(v) || v.length > MAX_DEPTH || !v.every(is32)) reject('InvalidAvailabilityResponse', `${what} must be a list of 32-byte hashes`)
  return v
}
function int (v: unknown, what: string, max = 0x7fffffff): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > max) reject('InvalidAvailabilityResponse', `${what} must be an integer in [0, ${max}]`)
  return v
}
function onPath (root: Uint8Array, leaf: Uint8Array, index: number, path: Uint8Array[], depth: number): boolean {
  return path.length === depth && index < 2 ** depth && bytesEqual(rootFromProof(leaf, index, path), root)
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
  /** the challenged checkpoint step (a leaf of proof_root) */
  step: number
  /** steps the solver committed (proof_root has stepCount + 1 leaves) */
  stepCount: number
  seed: Uint8Array
  count?: number
}

/**
 * Checks a response (CBOR bytes) against the committed proof root and the
 * challenge's seed; throws AvailabilityRejected, returns the decoded response.
 */
export function checkAvailabilityResponse (ctx: AvailabilityContext, bytes: Uint8Array): AvailabilityResponse {
  const r = decodeAvailabilityResponse(bytes)
  const count = ctx.count ?? SAMPLE_COUNT
  if (!is32(r.stateRoot)) reject('InvalidAvailabilityResponse', 'stateRoot must be 32 bytes')
  const statePath = hashes(r.statePath, 'statePath')
  const stepPath = hashes(r.stepPath, 'stepPath')
  const n = int(r.tensors, 'tensors', MAX_TENSORS)
  if (n < 1) reject('InvalidAvailabilityResponse', 'a state has at least one tensor')
  if (!onPath(ctx.proofRoot, r.stateRoot, ctx.step, statePath, depthFor(ctx.stepCount + 1))) reject('AvailabilityProofInvalid', `state root is not leaf ${ctx.step} of proof_root`)
  const depth = depthFor(n + 1)
  if (!onPath(r.stateRoot, stepLeaf(ctx.step), n, stepPath, depth)) reject('AvailabilityProofInvalid', `the step leaf is not leaf ${n} of the state root`)
  if (!Array.isArray(r.samples) || r.samples.length !== count) reject('InvalidAvailabilityResponse', `expected ${count} samples`)
  r.samples.forEach((s, k) => {
    if (typeof s !== 'object' || s === null || !is32(s.root)) reject('InvalidAvailabilityResponse', `sample ${k} is malformed`)
    const t = int(s.tensor, `sample ${k} tensor`)
    if (t !== sampleTensor(ctx.seed, k, n)) reject('InvalidAvailabilityResponse', `sample ${k} must be of tensor ${sampleTensor(ctx.seed, k, n)}`)
    if (!onPath(r.stateRoot, s.root, t, hashes(s.path, `sample ${k} path`), depth)) reject('AvailabilityProofInvalid', `sample ${k}: tensor ${t} is not in the state root`)
    const row = s.row
    if (typeof row !== 'object' || row === null || !['float32', 'int32', 'bool'].includes(row.dtype) || !(row.bytes instanceof Uint8Array) || !is32(row.otherRoot)) reject('InvalidAvailabilityResponse', `sample ${k}: malformed row`)
    if (!Array.isArray(row.shape) || row.shape.length > 8 || !row.shape.every(d => Number.isInteger(d) && d > 0 && d <= 1 << 24)) reject('InvalidAvailabilityResponse', `sample ${k}: bad shape`)
    const rows = rowsOf(row.shape)
    const want = sampleRow(ctx.seed, k, rows)
    if (int(row.index, `sample ${k} row`) !== want) reject('InvalidAvailabilityResponse', `sample ${k} must be row ${want} of tensor ${t}`)
    const proof: SliceProof = { dtype: row.dtype, shape: row.shape, axis: 'row', index: row.index, bytes: row.bytes, siblings: hashes(row.siblings, `sample ${k} row siblings`), otherRoot: row.otherRoot }
    if (!verifySlice(s.root, proof)) reject('AvailabilityProofInvalid', `sample ${k}: row ${want} does not verify against tensor ${t}'s commitment`)
  })
  return r
}
