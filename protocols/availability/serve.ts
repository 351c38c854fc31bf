import { decode, encode } from 'cborg'
import { bytesEqual, merkleProof, merkleRoot, rootFromProof } from '../commit/merkle.js'
import type { CommitScheme } from '../commit/scheme.js'
import { stepLeaf } from '../commit/state.js'
import { leafCount } from '../pol/segments.js'
import { canonicalBytes, dtypeBytes, sizeOf, valuesFromBytes, type TensorData } from '../commit/tensor.js'
import { AvailabilityRejected, stateLeafOf, type AvailabilityContext, type AvailabilityError, type TensorHeader } from './headers.js'
import { serveScheme, type ServeHeader } from './serve-schemes.js'

// Serving a challenged checkpoint through the chain (docs/disputes.md,
// "Withheld checkpoints"; docs/economics.md "Selective serving").
//
// An availability challenge is answered only by putting the whole state on
// chain: every row-tree leaf of every state tensor (its canonical bytes,
// about LEAF_BYTES each) with its path to the tensor's row root, in parts of
// at most MAX_SERVE_PART_BYTES, leaves in one global order (tensor by tensor,
// leaf by leaf), each part starting where the last one stopped. Every part
// repeats the tensor headers and the state path; the chain recomputes the
// state root from the headers (it must be the committed leaf of proof_root)
// and checks each leaf against its tensor's commitment. The first part also
// carries every leaf of proof_root (the committed state roots: what a replay
// from the served state compares against, in case proof.json is withheld
// too), checked against proof_root. So what is on chain
// once the last leaf is in IS the committed state, bit for bit: no bad
// encoding (unlike erasure-coded chunks, which are checked against the
// solver's chunk root only), and the challenger rebuilds its checkpoint from
// the parts (assembleServedState) with nothing fetched off chain.
// A chunked program's serve (ctx.stateCommitment 'chunked': the chain knows it
// from the task's program) has chunked headers and 4 KiB chunks for leaves,
// each with its path to its tensor's chunk root (serve-schemes.ts).
//
// Pure: the chain runtime, the solver's node and the challenger share it.

export const SERVE_VERSION = 2
/** The chain refuses a larger part (it goes on chain, in an event): the devnet's 1.2 MB state is two parts. */
export const MAX_SERVE_PART_BYTES = 1024 * 1024
/**
 * A part carrying at least this many bytes of state, the serve not yet complete, moves the
 * challenge's deadline to at least its block + 1 + the answer window (renews it): a solver that is serving is not
 * timed out for the size of its state, and a solver cannot stretch the serve with tiny parts.
 */
export const SERVE_EXTEND_BYTES = 256 * 1024
const MAX_DEPTH = 48
const MAX_TENSORS = 4096

export interface ServedLeaf { bytes: Uint8Array, siblings: Uint8Array[] }
/** H: row + column headers (TensorHeader), or chunked ones ({dtype, shape, chunkRoot}) for a chunked program */
export interface ServePart<H extends ServeHeader = TensorHeader> {
  v: 2
  tensors: H[]
  /** path of the recomputed state root to proof_root */
  statePath: Uint8Array[]
  /** global index of the first leaf in this part (leaves served before it) */
  from: number
  leaves: ServedLeaf[]
  /**
   * first part only: every leaf of proof_root (the committed state roots), what a
   * replay from the served state compares against (proof.json may be withheld too)
   */
  roots?: Uint8Array[]
}

function reject (reason: AvailabilityError, detail: string): never { throw new AvailabilityRejected(reason, detail) }

/** Leaves of each tensor in state order (row-tree leaves, or chunks under `c`): a pure function of the headers. */
export function leafCounts (tensors: ReadonlyArray<Pick<TensorHeader, 'dtype' | 'shape'>>, c?: CommitScheme): number[] {
  const sc = serveScheme(c)
  return tensors.map(t => sc.leafCount(t))
}

/** Global leaf g → (tensor, leaf within it). */
function locate (counts: readonly number[], g: number): { tensor: number, leaf: number } {
  for (let t = 0; t < counts.length; t++) {
    if (g < counts[t]) return { tensor: t, leaf: g }
    g -= counts[t]
  }
  throw new RangeError('leaf beyond the state')
}

/** The hash a challenge's serve binds its parts to: every part must carry the same headers. */
export function headersHash (tensors: readonly ServeHeader[], c?: CommitScheme): Uint8Array {
  return serveScheme(c).headersHash(tensors)
}

/**
 * The solver's parts serving its state at `step`, from leaf `from` on (0: the
 * whole state), under the program's state commitment `o.stateCommitment`.
 * Throws if the state does not hash to the committed root.
 */
export function buildServeParts (
  tensors: readonly TensorData[], step: number, stateRoots: readonly Uint8Array[], seg?: { rootEvery: number, steps: number },
  o: { from?: number, maxBytes?: number, stateCommitment?: CommitScheme } = {}
): Uint8Array[] {
  const leafIndex = seg === undefined ? step : stateLeafOf(step, seg.steps, seg.rootEvery).leaf
  const sc = serveScheme(o.stateCommitment)
  const { headers, roots: tensorRoots } = sc.headersOf(tensors)
  if (!bytesEqual(merkleRoot([...tensorRoots, stepLeaf(step)]), stateRoots[leafIndex])) throw new Error(`the local state at step ${step} does not hash to the committed state root`)
  const head = { v: SERVE_VERSION, tensors: headers, statePath: merkleProof(stateRoots, leafIndex) }
  const roots = [...stateRoots]
  const maxBytes = o.maxBytes ?? MAX_SERVE_PART_BYTES
  const overhead = encode({ ...head, from: 0xffffffff, leaves: [], roots: (o.from ?? 0) === 0 ? roots : undefined }).length + 16
  const parts: Uint8Array[] = []
  let cur: ServedLeaf[] = []
  let curBytes = overhead
  let start = o.from ?? 0
  let g = 0
  const flush = (): void => {
    if (cur.length === 0) return
    parts.push(encode(start === 0 ? { ...head, from: start, leaves: cur, roots } : { ...head, from: start, leaves: cur }))
    start += cur.length
    cur = []
    // only the first part carries the roots
    curBytes = overhead - (parts.length === 1 ? encode(roots).length : 0)
  }
  for (const t of tensors) {
    const ls = sc.leavesOf(t)
    for (let j = 0; j < ls.count; j++, g++) {
      if (g < (o.from ?? 0)) continue
      const leaf = ls.leaf(j)
      const size = encode(leaf).length + 1
      if (cur.length > 0 && curBytes + size > maxBytes) flush()
      cur.push(leaf)
      curBytes += size
    }
  }
  flush()
  return parts
}

const is32 = (v: unknown): v is Uint8Array => v instanceof Uint8Array && v.length === 32
function hashes (v: unknown, what: string): Uint8Array[] {
  if (!Array.isArray(v) || v.length > MAX_DEPTH || !v.every(is32)) reject('InvalidAvailabilityResponse', `${what} must be a list of 32-byte hashes`)
  return v
}
function hashes2 (v: unknown, n: number): Uint8Array[] {
  if (!Array.isArray(v) || v.length !== n || !v.every(is32)) reject('InvalidAvailabilityResponse', `the first part carries the ${n} leaves of proof_root`)
  return v
}

export function decodeServePart (bytes: Uint8Array): ServePart<ServeHeader> {
  if (bytes.length > MAX_SERVE_PART_BYTES) reject('ResponseTooLarge', `${bytes.length} bytes exceed ${MAX_SERVE_PART_BYTES}`)
  let r: ServePart<ServeHeader>
  try { r = decode(bytes) as ServePart<ServeHeader> } catch (e) { reject('InvalidAvailabilityResponse', `not CBOR: ${(e as Error).message}`) }
  if (typeof r !== 'object' || r === null || r.v !== SERVE_VERSION) reject('InvalidAvailabilityResponse', 'not a version 2 serve part (an answer serves the whole checkpoint)')
  return r
}

export interface ServeCheckContext extends AvailabilityContext {
  /** the task's state commitment (absent: row + column): what its headers and leaves are */
  stateCommitment?: CommitScheme
  /** leaves already on chain for this challenge: the part must start there */
  served: number
  /** the headers hash of the parts before (absent for the first part) */
  headersHash?: Uint8Array
}

/** A part the chain took: leaves served after it, of `total`; the headers hash; the part; its leaves' bytes. */
export interface CheckedPart { served: number, total: number, headersHash: Uint8Array, part: ServePart<ServeHeader>, leafBytes: number }

/**
 * The chain's rule for one serve part: its headers make the committed state
 * root at the challenged step (and are those of the parts before), it starts
 * at the next leaf not yet served, the first part carries every leaf of
 * proof_root, and every leaf verifies against its tensor's commitment.
 */
export function checkServePart (ctx: ServeCheckContext, bytes: Uint8Array): CheckedPart {
  const r = decodeServePart(bytes)
  if (!Array.isArray(r.tensors) || r.tensors.length < 1 || r.tensors.length > MAX_TENSORS) reject('InvalidAvailabilityResponse', `a state has 1 to ${MAX_TENSORS} tensors`)
  const sc = serveScheme(ctx.stateCommitment)
  const headers = r.tensors.map((h, i) => sc.checkedHeader(h, i))
  const hh = sc.headersHash(headers)
  if (ctx.headersHash !== undefined && !bytesEqual(hh, ctx.headersHash)) reject('InvalidAvailabilityResponse', 'the tensor headers differ from the parts served before')
  const roots = headers.map(h => sc.rootOf(h))
  const root = merkleRoot([...roots, stepLeaf(ctx.step)])
  let at: { leaf: number, depth: number }
  try { at = stateLeafOf(ctx.step, ctx.stepCount, ctx.rootEvery ?? 1) } catch (e) { reject('InvalidAvailabilityResponse', (e as Error).message) }
  const path = hashes(r.statePath, 'statePath')
  if (path.length !== at.depth || at.leaf >= 2 ** at.depth || !bytesEqual(rootFromProof(root, at.leaf, path), ctx.proofRoot)) reject('AvailabilityProofInvalid', `the tensors do not make the state root at leaf ${at.leaf} of proof_root`)
  const counts = headers.map(h => sc.leafCount(h))
  const total = counts.reduce((a, b) => a + b, 0)
  if (r.from !== ctx.served) reject('InvalidAvailabilityResponse', `the part must start at leaf ${ctx.served}, not ${String(r.from)}`)
  // the first part carries every leaf of proof_root: the roots a replay from this state compares against
  if (r.from === 0) {
    const m = ctx.rootEvery ?? 1
    const roots = hashes2(r.roots, leafCount(ctx.stepCount, m))
    if (!bytesEqual(merkleRoot(roots), ctx.proofRoot)) reject('AvailabilityProofInvalid', 'the roots of the first part are not the leaves of proof_root')
  } else if (r.roots !== undefined) reject('InvalidAvailabilityResponse', 'only the first part carries the roots')
  if (!Array.isArray(r.leaves) || r.leaves.length < 1 || ctx.served + r.leaves.length > total) reject('InvalidAvailabilityResponse', `1 to ${total - ctx.served} leaves`)
  r.leaves.forEach((s, k) => {
    if (typeof s !== 'object' || s === null || !(s.bytes instanceof Uint8Array)) reject('InvalidAvailabilityResponse', `leaf ${ctx.served + k} is malformed`)
    const { tensor, leaf } = locate(counts, ctx.served + k)
    const ok = sc.verifyLeaf(headers[tensor], roots[tensor], leaf, s.bytes, hashes(s.siblings, `leaf ${ctx.served + k} siblings`))
    if (!ok) reject('AvailabilityProofInvalid', `leaf ${leaf} of tensor ${tensor} does not verify against its commitment`)
  })
  return { served: ctx.served + r.leaves.length, total, headersHash: hh, part: r, leafBytes: r.leaves.reduce((a, l) => a + l.bytes.length, 0) }
}

/**
 * The challenger's side: the state rebuilt from a complete serve's parts (as
 * the chain accepted them, in order), checked once more against the committed
 * proof root. Throws if the parts are incomplete or do not make the state.
 */
export function assembleServedState (ctx: Omit<ServeCheckContext, 'served' | 'headersHash'>, parts: readonly Uint8Array[]): TensorData[] {
  return assembleServe(ctx, parts).tensors
}

/** The served state and the committed state roots (every leaf of proof_root) from a complete serve's parts. */
export function assembleServe (ctx: Omit<ServeCheckContext, 'served' | 'headersHash'>, parts: readonly Uint8Array[]): { tensors: TensorData[], roots: Uint8Array[] } {
  let served = 0
  let hh: Uint8Array | undefined
  let total = -1
  const leaves: Uint8Array[] = []
  let headers: ServeHeader[] = []
  let roots: Uint8Array[] = []
  for (const bytes of parts) {
    const c = checkServePart({ ...ctx, served, headersHash: hh }, bytes)
    if (c.part.roots !== undefined) roots = c.part.roots
    served = c.served
    hh = c.headersHash
    total = c.total
    headers = c.part.tensors
    for (const l of c.part.leaves) leaves.push(l.bytes)
  }
  if (total < 0 || served !== total) throw new Error(`the serve holds ${served} of ${total < 0 ? '?' : total} leaves`)
  const counts = leafCounts(headers, ctx.stateCommitment)
  let g = 0
  // a tensor's leaves in order are its canonical bytes, under either scheme
  const tensors = headers.map((h, t) => {
    const bytes = new Uint8Array(sizeOf(h.shape) * dtypeBytes(h.dtype))
    let o = 0
    for (let j = 0; j < counts[t]; j++, g++) { bytes.set(leaves[g], o); o += leaves[g].length }
    return { dtype: h.dtype, shape: [...h.shape], values: valuesFromBytes(h.dtype, bytes) }
  })
  return { tensors, roots }
}

/** A served state as a checkpoint's data file (state.bin): the tensors' canonical bytes back to back, in state order. */
export function servedStateBytes (tensors: readonly TensorData[]): Uint8Array {
  const bytes = tensors.map(canonicalBytes)
  const out = new Uint8Array(bytes.reduce((a, b) => a + b.length, 0))
  let o = 0
  for (const b of bytes) { out.set(b, o); o += b.length }
  return out
}
