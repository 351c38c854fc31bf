import { decode, encode } from 'cborg'
import { bytesEqual, merkleProof, merkleRoot, rootFromProof, sha256 } from '../../protocols/commit/merkle.js'
import { stepLeaf } from '../../protocols/commit/state.js'
import { combineRoots, commitTensor, matrixView, proveSlice, verifySlice, type SliceProof, type TensorData } from '../../protocols/commit/tensor.js'
import {
  AvailabilityRejected, SAMPLE_COUNT, checkedHeader, stateLeafOf, type AvailabilityContext, type AvailabilityError, type TensorHeader
} from '../../protocols/availability/index.js'

// The version-1 answer to a data-availability challenge: a proof of
// possession of SAMPLE_COUNT rows of the challenged state, drawn from the
// challenge's seed, each with its path to its tensor's row root, and the
// tensor headers with the state root's path to proof_root. The chain took it
// once; it now refuses it (an answer serves the whole checkpoint,
// protocols/availability/serve.ts). Kept for the tests that show the refusal
// and for the figure it is compared with (AVAILABILITY-FIGURES: its size for
// the same state). A leaf is at most max(LEAF_BYTES, one row): ~37 KiB for
// the Adam mlp's state, at most MAX_RESPONSE_BYTES.

export const AVAILABILITY_VERSION = 1
/** the chain refused a bigger answer (the whole answer went on chain) */
export const MAX_RESPONSE_BYTES = 64 * 1024
const MAX_DEPTH = 48
const MAX_TENSORS = 4096

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

export interface SampledContext extends AvailabilityContext {
  seed: Uint8Array
  count?: number
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

const rowsOf = (shape: readonly number[]): number => matrixView(shape).rows

/** Sample k: a row drawn uniformly over all rows of all tensors (up to a 2^-64 bias), as (tensor, row). */
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
 * The solver's sampled answer from its local state at `step`; throws if the state does not hash to
 * the committed root. With `seg` (a root every m > 1 steps) the state after `step` is leaf step / m.
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

const is32 = (v: unknown): v is Uint8Array => v instanceof Uint8Array && v.length === 32
function hashes (v: unknown, what: string): Uint8Array[] {
  if (!Array.isArray(v) || v.length > MAX_DEPTH || !v.every(is32)) reject('InvalidAvailabilityResponse', `${what} must be a list of 32-byte hashes`)
  return v
}
function int (v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 0x7fffffff) reject('InvalidAvailabilityResponse', `${what} must be a non-negative integer`)
  return v
}

/**
 * Checks a sampled answer (CBOR bytes) against the committed proof root and the seed, as the chain
 * once did; throws AvailabilityRejected, returns the decoded answer.
 */
export function checkAvailabilityResponse (ctx: SampledContext, bytes: Uint8Array): AvailabilityResponse {
  if (bytes.length > MAX_RESPONSE_BYTES) reject('ResponseTooLarge', `${bytes.length} bytes exceed ${MAX_RESPONSE_BYTES}`)
  let r: AvailabilityResponse
  try { r = decode(bytes) as AvailabilityResponse } catch (e) { reject('InvalidAvailabilityResponse', `not CBOR: ${(e as Error).message}`) }
  if (typeof r !== 'object' || r === null || r.v !== AVAILABILITY_VERSION) reject('InvalidAvailabilityResponse', 'not a version 1 availability response')
  const count = ctx.count ?? SAMPLE_COUNT
  if (!Array.isArray(r.tensors) || r.tensors.length < 1 || r.tensors.length > MAX_TENSORS) reject('InvalidAvailabilityResponse', `a state has 1 to ${MAX_TENSORS} tensors`)
  const headers = r.tensors.map(checkedHeader)
  const roots = headers.map(h => combineRoots(h.dtype, h.shape, h.rowRoot, h.colRoot))
  const stateRoot = merkleRoot([...roots, stepLeaf(ctx.step)])
  let at: { leaf: number, depth: number }
  try { at = stateLeafOf(ctx.step, ctx.stepCount, ctx.rootEvery ?? 1) } catch (e) { reject('InvalidAvailabilityResponse', (e as Error).message) }
  const path = hashes(r.statePath, 'statePath')
  if (path.length !== at.depth || at.leaf >= 2 ** at.depth || !bytesEqual(rootFromProof(stateRoot, at.leaf, path), ctx.proofRoot)) {
    reject('AvailabilityProofInvalid', `the tensors do not make the state root at leaf ${at.leaf} of proof_root`)
  }
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
