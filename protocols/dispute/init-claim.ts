import { decode, encode } from 'cborg'
import { bytesEqual, merkleProof, merkleRoot, rootFromProof, sha256, toHex } from '../commit/merkle.js'
import { stepLeaf } from '../commit/state.js'
import { chunkElementBits, combineChunked, commitChunked, proveElementChunk, verifyChunk, type ChunkProof } from '../commit/chunked.js'
import { combineRoots, commitTensor, matrixView, proveSlice, sizeOf, sliceBytes, valuesFromBytes, verifySlice, type DType, type SliceProof, type TensorData } from '../commit/tensor.js'
import { InitUnsupported, initLayout, initialElement, initialTensor } from '../program/init.js'
import { validateProgram, type TaskProgram } from '../program/program.js'
import { stateIsChunked } from '../program/state-commitment.js'
import type { ChunkedHead, ClaimChunk, ClaimSlice, TensorHead } from './claim-parts.js'
import { depthOf } from './tree.js'

// The initial-state claim: the chain judges stateRoots[0] of a committed proof
// without a bisection game, since it can compute any initialised element
// itself (protocols/program/init.ts). The claim opens state root 0 of
// proof_root down to one element:
//
//   root, rootPath   state root 0, leaf 0 of proof_root (depth fixed by step_count)
//   heads, last      EVERY leaf of that state root: each tensor commitment as its
//                    preimage {dtype, shape, rowRoot, colRoot} (hashed by the
//                    chain), then the last leaf raw. Only the last leaf is raw, so
//                    no inner node can pass for a leaf: the list is the root's one
//                    decomposition, whatever the solver's tensor count. Under
//                    chunked state roots (the program's stateCommitment) each
//                    head is a chunked preimage {dtype, shape, chunkRoot}
//   t                which state tensor
//   flat, slice      a row or column of tensor t holding element `flat`
//   (chunk)          for a chunked head: the chunk holding it (commit/chunked.ts)
//   program          the canonical program bytes (sha256 = program_hash)
//
// The solver loses if the state does not have the program's n tensors, if a
// tensor is under the other commitment scheme than the program's, if the
// last leaf is not the step-0 leaf, if tensor t's dtype or shape is not the
// program's, or if element `flat` has other bits than the program's
// initialisation; otherwise the challenger loses. (A head of the other scheme
// can open a solver's root only if the solver committed that scheme: the two
// commitments are hashes under different tags.) (A leaf that opens to no
// tensor at all cannot be listed; the checkpoint-0 availability challenge
// catches it: its rows cannot be served.)

export const INIT_CLAIM_VERSION = 1
export const MAX_INIT_CLAIM_BYTES = 64 * 1024
const MAX_PROGRAM_BYTES = 16384
const MAX_TENSORS = 512
/** Element i costs i + 1 generator draws (alea has no skip-ahead): tensors beyond this are not judged (≈ 0.35 s at the bound). */
export const MAX_ADDRESSABLE_ELEMENTS = 1 << 24

export interface InitClaim {
  v: 1
  kind: 'init'
  program: Uint8Array
  root: Uint8Array
  rootPath: Uint8Array[]
  heads: Array<TensorHead | ChunkedHead>
  last: Uint8Array
  t: number
  /** absent when the tensor's dtype/shape alone convicts (a tensor of another shape may have no such element) */
  flat?: number
  slice?: ClaimSlice
  /** in place of `slice` for a chunked head */
  chunk?: ClaimChunk
}

export interface InitEnv {
  programHash: Uint8Array
  proofRoot: Uint8Array
  /** transitions the committed proof covers: proof_root has stepCount + 1 leaves */
  stepCount: number
  /** the proof's state-root spacing m (absent = 1): proof_root has ⌈stepCount / m⌉ + 1 leaves */
  rootEvery?: number
}

export interface InitRuling { winner: 'challenger' | 'solver', reason: string }

export type InitRejectReason = 'InvalidClaim' | 'InvalidProof' | 'UnsupportedInitializer'
export class InitClaimRejected extends Error {
  constructor (readonly reason: InitRejectReason, detail: string) { super(`${reason}: ${detail}`); this.name = 'InitClaimRejected' }
}
function reject (reason: InitRejectReason, detail: string): never { throw new InitClaimRejected(reason, detail) }

export function encodeInitClaim (c: InitClaim): Uint8Array {
  const { flat, slice, chunk, ...rest } = c
  if (flat === undefined) return encode(rest)
  if (chunk !== undefined) return encode({ ...rest, flat, chunk })
  return encode(slice === undefined ? rest : { ...rest, flat, slice })
}

export function decodeInitClaim (bytes: Uint8Array): InitClaim {
  if (bytes.length > MAX_INIT_CLAIM_BYTES) reject('InvalidClaim', `claim of ${bytes.length} bytes exceeds ${MAX_INIT_CLAIM_BYTES}`)
  let c: InitClaim
  try { c = decode(bytes) as InitClaim } catch (e) { reject('InvalidClaim', `not CBOR: ${(e as Error).message}`) }
  if (typeof c !== 'object' || c === null || c.v !== INIT_CLAIM_VERSION || c.kind !== 'init') reject('InvalidClaim', 'not a version 1 init claim')
  return c
}

const is32 = (v: unknown): v is Uint8Array => v instanceof Uint8Array && v.length === 32
function hashes (v: unknown, what: string, max = 64): Uint8Array[] {
  if (!Array.isArray(v) || v.length > max || !v.every(is32)) reject('InvalidClaim', `${what} must be a list of at most ${max} 32-byte hashes`)
  return v
}
function int (v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 0x7fffffff) reject('InvalidClaim', `${what} must be a non-negative integer`)
  return v
}
const DTYPES: readonly DType[] = ['float32', 'int32', 'bool']
function shapeOk (s: unknown): s is number[] { return Array.isArray(s) && s.length <= 8 && s.every(d => Number.isInteger(d) && d >= 0 && d <= 1 << 24) }
const sameShape = (a: readonly number[], b: readonly number[]): boolean => a.length === b.length && a.every((x, i) => x === b[i])

/** The program behind program_hash, validated. */
export function programOf (bytes: unknown, programHash: Uint8Array): TaskProgram {
  if (!(bytes instanceof Uint8Array) || bytes.length > MAX_PROGRAM_BYTES) reject('InvalidClaim', `program must be at most ${MAX_PROGRAM_BYTES} bytes`)
  if (!bytesEqual(sha256(bytes), programHash)) reject('InvalidProof', 'program bytes do not hash to the task\'s program_hash')
  try { return validateProgram(JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes))) } catch (e) { reject('InvalidClaim', `program: ${(e as Error).message}`) }
}

/** Rules on an initial-state claim; throws InitClaimRejected if the claim proves nothing. */
export function judgeInitClaim (env: InitEnv, c: InitClaim): InitRuling {
  const solverLoses = (reason: string): InitRuling => ({ winner: 'challenger', reason })
  const challengerLoses = (reason: string): InitRuling => ({ winner: 'solver', reason })
  const program = programOf(c.program, env.programHash)
  let layout: ReturnType<typeof initLayout>
  try { layout = initLayout(program) } catch (e) {
    if (e instanceof InitUnsupported) reject('UnsupportedInitializer', e.message)
    reject('InvalidClaim', `program: ${(e as Error).message}`)
  }
  // state root 0 is leaf 0 of proof_root; the depth is the chain's, so no inner node passes for it
  const rootPath = hashes(c.rootPath, 'rootPath')
  if (!is32(c.root) || rootPath.length !== depthOf(Math.ceil(env.stepCount / (env.rootEvery ?? 1)) + 1) || !bytesEqual(rootFromProof(c.root, 0, rootPath), env.proofRoot)) reject('InvalidProof', 'root is not leaf 0 of the committed proof_root')
  const n = layout.length
  if (!Array.isArray(c.heads) || c.heads.length === 0 || c.heads.length > MAX_TENSORS || !is32(c.last)) reject('InvalidClaim', `heads: 1 to ${MAX_TENSORS} tensor preimages, then the last leaf`)
  const heads = c.heads.map((h, i) => {
    const x = h as Partial<TensorHead & ChunkedHead> | null
    if (typeof x !== 'object' || x === null || !DTYPES.includes(x.dtype as DType) || !shapeOk(x.shape)) reject('InvalidClaim', `heads[${i}]: malformed commitment preimage`)
    if ('chunkRoot' in x ? !is32(x.chunkRoot) : !is32(x.rowRoot) || !is32(x.colRoot)) reject('InvalidClaim', `heads[${i}]: malformed commitment preimage`)
    return h
  })
  const leaves = heads.map(h => 'chunkRoot' in h ? combineChunked(h.dtype, h.shape, h.chunkRoot) : combineRoots(h.dtype, h.shape, h.rowRoot, h.colRoot))
  if (!bytesEqual(merkleRoot([...leaves, c.last]), c.root)) reject('InvalidProof', 'heads and last do not hash to state root 0')
  const chunked = stateIsChunked(program)
  const other = heads.findIndex(h => ('chunkRoot' in h) !== chunked)
  if (other >= 0) return solverLoses(`state tensor ${other} of state root 0 is under the ${chunked ? 'row + column' : 'chunked'} commitment, the program's state under the ${chunked ? 'chunked' : 'row + column'} one`)
  if (heads.length !== n) return solverLoses(`state root 0 holds ${heads.length} tensors, the program's state ${n}`)
  if (!bytesEqual(c.last, stepLeaf(0))) return solverLoses('the last leaf of state root 0 is not the step-0 leaf')
  const t = int(c.t, 't')
  if (t >= n) reject('InvalidClaim', `state tensor ${t} out of range [0, ${n})`)
  const head = heads[t]
  const want = layout[t]
  if (head.dtype !== want.dtype || !sameShape(head.shape, want.shape)) return solverLoses(`state tensor ${t} (${want.name}) is ${head.dtype}[${head.shape.join(',')}], the program's is ${want.dtype}[${want.shape.join(',')}]`)
  const flat = int(c.flat, 'flat')
  if (flat >= sizeOf(want.shape)) reject('InvalidClaim', `element ${flat} outside ${want.name}`)
  if (flat >= MAX_ADDRESSABLE_ELEMENTS) reject('UnsupportedInitializer', `element ${flat} of ${want.name} is beyond the ${MAX_ADDRESSABLE_ELEMENTS} elements the chain generates`)
  const got = 'chunkRoot' in head ? chunkBits(c.chunk, head, leaves[t], flat) : sliceBits(c.slice, head, leaves[t], want.shape, flat)
  const expected = new Uint32Array(new Float32Array([initialElement(want, flat)]).buffer)[0]
  return got === expected
    ? challengerLoses(`element ${flat} of ${want.name} is the program's initial value`)
    : solverLoses(`element ${flat} of ${want.name}: solver 0x${got.toString(16)}, initialisation 0x${expected.toString(16)} (state root 0 ${toHex(c.root).slice(0, 16)}…)`)
}

/** Bits of element `flat` in a row or column of tensor `leaf` (its row + column head). */
function sliceBits (v: unknown, head: TensorHead, leaf: Uint8Array, shape: readonly number[], flat: number): number {
  const s = v as ClaimSlice | undefined
  if (typeof s !== 'object' || s === null || (s.axis !== 'row' && s.axis !== 'col') || !(s.bytes instanceof Uint8Array) || s.bytes.length > 1 << 20) reject('InvalidClaim', 'slice: malformed')
  const p: SliceProof = { dtype: head.dtype, shape: head.shape, axis: s.axis, index: int(s.index, 'slice.index'), bytes: s.bytes, siblings: hashes(s.siblings, 'slice.siblings'), otherRoot: is32(s.otherRoot) ? s.otherRoot : reject('InvalidClaim', 'slice.otherRoot') }
  const cols = shape.length === 0 ? 1 : shape[shape.length - 1]
  const pos = p.axis === 'row' ? (Math.floor(flat / cols) === p.index ? flat % cols : undefined) : (flat % cols === p.index ? Math.floor(flat / cols) : undefined)
  if (pos === undefined) reject('InvalidClaim', `the slice does not hold element ${flat}`)
  if (!verifySlice(leaf, p)) reject('InvalidProof', 'slice of the state tensor')
  return new Uint32Array((valuesFromBytes('float32', sliceBytes(p)) as Float32Array).buffer)[pos]
}

/** Bits of element `flat` in the chunk of tensor `leaf` (its chunked head) holding it. */
function chunkBits (v: unknown, head: ChunkedHead, leaf: Uint8Array, flat: number): number {
  const s = v as ClaimChunk | undefined
  if (typeof s !== 'object' || s === null || !(s.bytes instanceof Uint8Array) || s.bytes.length > 1 << 16) reject('InvalidClaim', 'chunk: malformed')
  const p: ChunkProof = { dtype: head.dtype, shape: head.shape, index: int(s.index, 'chunk.index'), bytes: s.bytes, siblings: hashes(s.siblings, 'chunk.siblings') }
  if (!verifyChunk(leaf, p)) reject('InvalidProof', 'chunk of the state tensor')
  const bits = chunkElementBits(p, flat)
  if (bits === undefined) reject('InvalidClaim', `the chunk does not hold element ${flat}`)
  return bits
}

/**
 * The claim on element `flat` of state tensor `t` of a solver's step-0 state,
 * from the tensors it published (checkpoint 0) and its state roots.
 */
export function buildInitClaim (
  o: { program: Uint8Array, stateRoots: readonly Uint8Array[], state: readonly TensorData[], t: number, flat: number, last?: Uint8Array }
): InitClaim {
  // the solver's tensors under the program's state commitment (the scheme its root 0 is under)
  const chunked = stateIsChunked(JSON.parse(new TextDecoder().decode(o.program)) as { stateCommitment?: unknown })
  const heads: Array<TensorHead | ChunkedHead> = o.state.map(x => {
    if (chunked) return { dtype: x.dtype, shape: [...x.shape], chunkRoot: commitChunked(x).chunkRoot }
    const c = commitTensor(x); return { dtype: x.dtype, shape: [...x.shape], rowRoot: c.rowRoot, colRoot: c.colRoot }
  })
  const base = { v: 1 as const, kind: 'init' as const, program: o.program, root: o.stateRoots[0], rootPath: merkleProof(o.stateRoots, 0), heads, last: o.last ?? stepLeaf(0), t: o.t }
  const x = o.state[o.t]
  if (x === undefined || sizeOf(x.shape) <= o.flat) return base
  if (chunked) {
    const p = proveElementChunk(x, o.flat)
    return { ...base, flat: o.flat, chunk: { dtype: p.dtype, shape: p.shape, index: p.index, bytes: p.bytes, siblings: p.siblings } }
  }
  const { rows, cols } = matrixView(x.shape)
  // the smaller of the two slices holding the element
  const axis = cols <= rows ? 'row' : 'col'
  const p = proveSlice(x, axis, axis === 'row' ? Math.floor(o.flat / cols) : o.flat % cols)
  return {
    ...base, flat: o.flat, slice: { dtype: p.dtype, shape: p.shape, axis: p.axis, index: p.index, bytes: p.bytes, siblings: p.siblings, otherRoot: p.otherRoot }
  }
}

/** The first element where a state differs from the program's initialisation (tensor count, dtype/shape first), or undefined if it is the initial state. */
export function firstInitMismatch (program: TaskProgram, state: readonly TensorData[]): { t: number, flat: number } | undefined {
  const layout = initLayout(program)
  if (state.length !== layout.length) return { t: 0, flat: 0 }
  for (let t = 0; t < layout.length; t++) {
    const l = layout[t]; const x = state[t]
    if (x.dtype !== l.dtype || !sameShape(x.shape, l.shape)) return { t, flat: 0 }
    const want = initialTensor(l).values as Float32Array
    const a = new Uint32Array(want.buffer)
    const b = new Uint32Array((x.values as Float32Array).buffer, x.values.byteOffset, x.values.length)
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return { t, flat: i }
  }
  return undefined
}
