import { decode, encode } from 'cborg'
import { bytesEqual, fromHex, leafHash, merkleProof, merkleRoot, rootFromProof } from '../commit/merkle.js'
import { stepLeaf } from '../commit/state.js'
import { axisLayout, combineRoots, commitTensor, leafSpan, tensorLeafBytes, tensorLeaves, type DType, type TensorData } from '../commit/tensor.js'
import { STATE_PSEUDO_KERNEL } from '../tape/tape.js'
import type { Claim, TensorHead } from './claim.js'
import { decodeEntry } from './entry.js'
import { depthOf } from './tree.js'

// A Truebit forced error is exactly ONE element of the post-state: the solver
// trains step f honestly, then sets element 0 of state tensor 0 to |v| + 1 (v
// its honest value). An honest challenger's tapes then agree with the
// solver's and its claim is `state`: the honest post-state H (what the
// defender's signed @state entry hashes to) is not the committed one P. The
// solver's reveal must prove P = H with that element changed and nothing
// else, in O(log) data:
//   - tensor 0 of H and of P by their commitment preimages (dtype, shape, row
//     root, column root; same dtype float32 and shape), each on the SAME
//     state-tree path of leaf 0 to H and to P: every other tensor and the
//     step leaf are unchanged;
//   - row-tree leaf 0 of both with the same sibling path, and column-tree
//     leaf 0 of both with the same sibling path: every other group of rows and
//     of columns is unchanged, so the tensors can differ only inside both
//     leaves, i.e. only at element (0, 0);
//   - both leaves differ at most at element 0, whose honest value v is finite
//     and whose committed value is fround(|v| + 1), the same in both trees.
// So a forced step cannot carry another change: a second element, another
// tensor or a different op leaves either a ruling that is not `state` (the
// tapes differ) or a P that no such proof reaches.

export const EXACT_VERSION = 1
export const MAX_EXACT_BYTES = 64 * 1024

export interface ExactnessProof {
  v: 1
  /** committed post-state root: leaf step + 1 of proof_root, and its path */
  post: Uint8Array
  postPath: Uint8Array[]
  /** state tensor 0: honest (the @state entry's) and committed */
  honest: TensorHead
  forced: TensorHead
  /** siblings of leaf 0 in both state trees */
  statePath: Uint8Array[]
  /** row-tree leaf 0 (its group of rows) of both, and its path in both */
  rowHonest: Uint8Array
  rowForced: Uint8Array
  rowPath: Uint8Array[]
  /** column-tree leaf 0 (its group of columns, each contiguous) of both, and its path in both */
  colHonest: Uint8Array
  colForced: Uint8Array
  colPath: Uint8Array[]
}

/** The value a forced error writes: positive and different from v (a ReLU cannot hide it). */
export function forcedValue (v: number): number { return Math.fround(Math.abs(v) + 1) }

/** The post-state a forced error commits: `honest` with element 0 of tensor 0 set to forcedValue. */
export function forcedState (honest: readonly TensorData[]): TensorData[] {
  return honest.map((t, i) => {
    if (i !== 0 || t.values.length === 0) return t
    const values = t.values.slice()
    values[0] = forcedValue(values[0])
    return { ...t, values }
  })
}

/** What a SolverProof ruling was decided on: its claim kind, and for a `state` claim the post-state root the defender's signed @state entry hashes to. */
export function rulingBasis (c: Claim, step: number): { kind: Claim['kind'], honestPost: Uint8Array | null } {
  if (c.kind !== 'state') return { kind: c.kind, honestPost: null }
  // judgeClaim proved the entry against the defender's signed tape root before a ruling exists
  const e = decodeEntry(c.entry)
  if (e === undefined || e.kernel !== STATE_PSEUDO_KERNEL) return { kind: c.kind, honestPost: null }
  return { kind: c.kind, honestPost: merkleRoot([...e.inputs.map(i => fromHex(i.commitment)), stepLeaf(step + 1)]) }
}

const headOf = (t: TensorData): TensorHead => {
  const c = commitTensor(t); return { dtype: t.dtype, shape: [...t.shape], rowRoot: c.rowRoot, colRoot: c.colRoot }
}

/**
 * An exactness proof from the honest post-state tensors of step `step` (the
 * tape's @state values), the committed ones (a forced error's: forcedState
 * of the honest ones) and the proof's committed state roots (hex), the
 * post-state being leaf `leaf` (step + 1; (step + 1) / m with a root every m
 * steps). Paths are the committed state's; they reach the honest roots only if
 * the two differ exactly at element 0 of tensor 0.
 */
export function proveExactness (
  honest: readonly TensorData[], committed: readonly TensorData[], step: number, stateRoots: readonly string[], leaf = step + 1
): ExactnessProof {
  const t = honest[0]; const f = committed[0]
  const leaves = [...committed.map(x => commitTensor(x).root), stepLeaf(step + 1)]
  const roots = stateRoots.map(fromHex)
  return {
    v: 1,
    post: roots[leaf],
    postPath: merkleProof(roots, leaf),
    honest: headOf(t),
    forced: headOf(f),
    statePath: merkleProof(leaves, 0),
    rowHonest: tensorLeafBytes(t, 'row', 0),
    rowForced: tensorLeafBytes(f, 'row', 0),
    rowPath: merkleProof(tensorLeaves(f, 'row'), 0),
    colHonest: tensorLeafBytes(t, 'col', 0),
    colForced: tensorLeafBytes(f, 'col', 0),
    colPath: merkleProof(tensorLeaves(f, 'col'), 0)
  }
}

export function encodeExactness (p: ExactnessProof): Uint8Array { return encode(p) }

export interface ExactEnv {
  /** the forced on-chain step: the transition from state `step` to `step + 1` */
  step: number
  proofRoot: Uint8Array
  /** transitions the committed proof covers (proof_root has stepCount + 1 leaves) */
  stepCount: number
  /** the proof's state-root spacing m (absent = 1): the forced post-state is then leaf (step + 1) / m, a segment's end (forced-error.ts) */
  rootEvery?: number
  /** the ruling's basis: the post-state root the defender's signed @state entry hashes to */
  honestPost: Uint8Array
}

export type ExactResult = { ok: true } | { ok: false, reason: string }

const is32 = (v: unknown): v is Uint8Array => v instanceof Uint8Array && v.length === 32
const hashes = (v: unknown): v is Uint8Array[] => Array.isArray(v) && v.length <= 64 && v.every(is32)
const bytes = (v: unknown): v is Uint8Array => v instanceof Uint8Array && v.length <= 1 << 16
function head (v: unknown): { dtype: DType, shape: number[], rowRoot: Uint8Array, colRoot: Uint8Array } | undefined {
  const t = v as TensorHead
  if (typeof t !== 'object' || t === null || t.dtype !== 'float32' || !is32(t.rowRoot) || !is32(t.colRoot)) return undefined
  if (!Array.isArray(t.shape) || t.shape.length > 8 || !t.shape.every(d => Number.isInteger(d) && d > 0 && d <= 1 << 24)) return undefined
  return t
}
const sameShape = (a: readonly number[], b: readonly number[]): boolean => a.length === b.length && a.every((x, i) => x === b[i])

/** Leaf 0 bytes of both tensors: the right size, equal but for element 0 (4 bytes); the element pair (honest, forced) as float32 bit patterns. */
function leafPair (h: Uint8Array, f: Uint8Array, size: number): { hv: number, fv: number } | undefined {
  if (h.length !== size || f.length !== size || size < 4) return undefined
  if (!bytesEqual(h.subarray(4), f.subarray(4))) return undefined
  const dv = (b: Uint8Array): DataView => new DataView(b.buffer, b.byteOffset, b.byteLength)
  return { hv: dv(h).getFloat32(0, true), fv: dv(f).getUint32(0, true) }
}

const f32bits = (x: number): number => new DataView(Float32Array.of(x).buffer).getUint32(0, true)

/** Checks an exactness proof against a `state` ruling's honest post-state root. */
export function checkForcedExact (env: ExactEnv, raw: Uint8Array): ExactResult {
  const no = (reason: string): ExactResult => ({ ok: false, reason })
  if (!(raw instanceof Uint8Array) || raw.length > MAX_EXACT_BYTES) return no('proof too large')
  let p: ExactnessProof
  try { p = decode(raw) as ExactnessProof } catch { return no('not CBOR') }
  if (typeof p !== 'object' || p === null || p.v !== EXACT_VERSION) return no('not a version 1 proof')
  if (!is32(p.post) || !hashes(p.postPath) || !hashes(p.statePath) || !hashes(p.rowPath) || !hashes(p.colPath)) return no('malformed hashes')
  if (!bytes(p.rowHonest) || !bytes(p.rowForced) || !bytes(p.colHonest) || !bytes(p.colForced)) return no('malformed leaves')
  const h = head(p.honest); const f = head(p.forced)
  if (h === undefined || f === undefined) return no('tensor heads must be float32 with a positive shape')
  if (!sameShape(h.shape, f.shape)) return no('tensor 0 changed shape')
  // P is leaf step + 1 of proof_root at the chain's depth: no inner node passes for it
  const m = env.rootEvery ?? 1
  if (env.step + 1 <= env.stepCount && (env.step + 1) % m !== 0 && env.step + 1 !== env.stepCount) return no('the forced post-state is not a committed leaf')
  const depth = depthOf(Math.ceil(env.stepCount / m) + 1)
  const leaf = Math.ceil((env.step + 1) / m)
  if (p.postPath.length !== depth || env.step + 1 > env.stepCount || !bytesEqual(rootFromProof(p.post, leaf, p.postPath), env.proofRoot)) return no('post is not leaf step + 1 of proof_root')
  // the same path from both tensor commitments: every other state leaf is the same in H and P
  // (commitments are tagged 0x02, inner nodes 0x01: a commitment cannot stand for a subtree)
  const hc = combineRoots(h.dtype, h.shape, h.rowRoot, h.colRoot)
  const fc = combineRoots(f.dtype, f.shape, f.rowRoot, f.colRoot)
  if (!bytesEqual(rootFromProof(fc, 0, p.statePath), p.post)) return no('the committed tensor 0 is not leaf 0 of the committed post-state')
  if (!bytesEqual(rootFromProof(hc, 0, p.statePath), env.honestPost)) return no('the honest tensor 0 on that path is not leaf 0 of the ruling\'s honest post-state')
  // within tensor 0: leaf 0 of each axis tree, on the same path in both
  let pair: { hv: number, fv: number } | undefined
  for (const axis of ['row', 'col'] as const) {
    const l = axisLayout(h.dtype, h.shape, axis)
    const size = leafSpan(l, 0).n * l.sliceBytes
    const path = axis === 'row' ? p.rowPath : p.colPath
    if (path.length !== depthOf(l.leaves)) return no(`${axis} path has the wrong depth`)
    const hb = axis === 'row' ? p.rowHonest : p.colHonest
    const fb = axis === 'row' ? p.rowForced : p.colForced
    const lp = leafPair(hb, fb, size)
    if (lp === undefined) return no(`${axis} leaf 0 differs elsewhere than element 0, or has the wrong size`)
    if (!bytesEqual(rootFromProof(leafHash(hb), 0, path), axis === 'row' ? h.rowRoot : h.colRoot)) return no(`honest ${axis} leaf 0 is not in tensor 0`)
    if (!bytesEqual(rootFromProof(leafHash(fb), 0, path), axis === 'row' ? f.rowRoot : f.colRoot)) return no(`committed ${axis} leaf 0 is not in tensor 0`)
    // element (0, 0) opens both leaves: its two trees must agree on it
    if (pair !== undefined && (f32bits(pair.hv) !== f32bits(lp.hv) || pair.fv !== lp.fv)) return no('rows and columns disagree on element 0')
    pair = lp
  }
  if (pair === undefined || !Number.isFinite(pair.hv)) return no('the honest element is not finite')
  if (pair.fv !== f32bits(forcedValue(pair.hv))) return no('element 0 is not |v| + 1')
  return { ok: true }
}
