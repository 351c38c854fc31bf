import { decode, encode } from 'cborg'
import { ZERO_HASH, bytesEqual, fromHex, merkleRoot, rootFromProof, sha256, sizedRoot, toHex } from '../commit/merkle.js'
import { stepLeaf } from '../commit/state.js'
import { combineRoots, matrixView, sizeOf, sliceBytes, valuesFromBytes, verifySlice, type DType, type SliceProof, type TypedValues } from '../commit/tensor.js'
import { batchElement, isBatchLayout } from '../data/layout.js'
import { batchIndices } from '../data/order.js'
import { STATE_PSEUDO_KERNEL, type TapeEntry } from '../tape/tape.js'
import { datasetRootOf } from './dataset.js'
import { decodeEntry } from './entry.js'
import { conflictOf, decodeSigned, factsOf, verifySigned, type Msg, type Signed, type VerifyFn } from './messages.js'
import { skeletonLeaf } from './skeleton.js'
import { depthOf } from './tree.js'
import type { ClaimSlice, TensorHead } from './claim-parts.js'
import { InitClaimRejected, judgeInitClaim, programOf, type InitClaim } from './init-claim.js'
import { initialStateRoot, initLayout } from '../program/init.js'
import { bytesHoldNaN, isNaNBits, runPosition, type Divergence } from './nan.js'
import { committedStep, isCommittedStep, leafOfStep, proofDepth, segmentCount, segmentLength } from '../pol/segments.js'

// The on-chain claim that ends a dispute, and the function the chain runs on
// it. A claim states ONE local fact about the defender's signed op tape of
// the disputed step and proves everything it uses against what is on chain
// (proof_root, skeleton_root, dataset_root, program_hash) or signed by the
// defender (its tape root). The chain checks the fact and rules:
//
//   skeleton  entry i's structure (kernel, attrs, refs, shapes, constants)
//             differs from the committed skeleton leaf i     → defender loses
//   input     entry i's input k is not the tensor it names: state tensor t of
//             the agreed pre-state, or output of entry j      → defender loses
//   data      a row/column element of a batch input differs from the dataset
//             row the program's data order puts there        → defender loses
//   element   one output element differs from the reference
//             semantics applied to entry i's own inputs      → defender loses
//   state     the '@state' entry's tensors do not hash to the
//             committed post-state root                      → defender loses
//   (each of the five: the fact holds → the challenger loses its bond)
//   lie       two signed defender messages contradict, or one contradicts
//             itself                                         → defender loses
//   badOpen   (defender only) the challenger's signed opening disputes a
//             pre-state the defender committed               → challenger loses
//             (at step 0 only if the committed pre-state is the program's
//             initial state, which the chain recomputes from the program bytes)
//   init      (step 0 only) state root 0 differs from the program's
//             initialisation at one element (init-claim.ts) → defender loses
//   nan       one element of a tensor the defender committed (a state tensor
//             of the disputed step's pre- or post-state, or output 0 of an
//             entry of its tape) is a NaN                  → defender loses
//
// A NaN ends the run (nan.ts): an honest defender commits none, so a NaN in
// an operand the claim proves (a state or op input) or in the proven output
// loses for the defender before the reference is run, and the reference's
// AmbiguousNaN (two different NaNs meeting) can never decide a ruling. On a
// diverged proof's last step the tape counts up to its divergence point:
// claims at later entries lose for the challenger, and the divergence
// point's element must be a NaN (and the reference's, from NaN-free operands).
//
// Only the challenger may submit the first six, init and nan, only the defender
// badOpen, so neither party can end the game with a fact about itself.

export type { ClaimSlice, TensorHead } from './claim-parts.js'

export const CLAIM_VERSION = 1
export const MAX_CLAIM_BYTES = 64 * 1024

interface EntryAt { index: number, entry: Uint8Array, path: Uint8Array[] }

/**
 * In a segment dispute, where the disputed step's pre- and post-state roots
 * come from: the defender's signed `segment` (seq 0) and the two committed
 * leaves around it with their paths in proof_root. The chain builds
 * [start, r_1 … r_{L−1}, end] and reads state s at index s − c_j.
 */
export interface SegmentProof { msg: Signed, start: Uint8Array, startPath: Uint8Array[], end: Uint8Array, endPath: Uint8Array[] }

export type Claim = ClaimBody & { seg?: SegmentProof }
type ClaimBody =
  | { v: 1, kind: 'skeleton', commit: Signed, index: number, entry?: Uint8Array, path: Uint8Array[], skelLeaf: Uint8Array, skelPath: Uint8Array[], skelCount: number, skelInner: Uint8Array }
  | ({ v: 1, kind: 'input', commit: Signed, k: number, prov: { t: number, tensor: TensorHead, tensorPath: Uint8Array[], pre: Uint8Array, prePath: Uint8Array[] } | { j: EntryAt } } & EntryAt)
  | ({ v: 1, kind: 'state', commit: Signed, post: Uint8Array, postPath: Uint8Array[] } & EntryAt)
  | ({ v: 1, kind: 'element', commit: Signed, program: Uint8Array, flat: number, slice: ClaimSlice, operands: ClaimSlice[] } & EntryAt)
  | ({ v: 1, kind: 'data', commit: Signed, program: Uint8Array, k: number, flat: number, slice: ClaimSlice, row: ClaimSlice, xRoot: Uint8Array, yRoot: Uint8Array } & EntryAt)
  | { v: 1, kind: 'lie', msgs: Signed[] }
  | { v: 1, kind: 'badOpen', open: Signed, pre: Uint8Array, prePath: Uint8Array[], program?: Uint8Array, other?: Signed }
  | InitClaim
  | NanClaim

/** A NaN in a tensor the defender committed: state tensor `t` of state root `index` (the disputed step's pre- or post-state), or output 0 of a tape entry. */
export interface NanClaim {
  v: 1
  kind: 'nan'
  flat: number
  slice: ClaimSlice
  state?: { index: number, root: Uint8Array, rootPath: Uint8Array[], t: number, tensor: TensorHead, tensorPath: Uint8Array[] }
  op?: { commit: Signed } & EntryAt
}

export type ClaimKind = Claim['kind']

export interface ReferenceApi {
  supportsElement: (runtime: string, kernel: string) => boolean
  elementOperands: (runtime: string, op: OpShapeLike, flatIndex: number) => Array<{ input: number, axis: 'row' | 'col', index: number }>
  computeElement: (runtime: string, op: OpShapeLike, flatIndex: number, operands: TypedValues[]) => number
  /** The element's bits (float32 pattern incl. NaN sign/payload); preferred over computeElement when present. */
  computeElementBits?: (runtime: string, op: OpShapeLike, flatIndex: number, operands: TypedValues[]) => number
}
export interface OpShapeLike {
  kernel: string
  attrs: Record<string, unknown>
  inputs: Array<{ shape: number[], dtype: DType }>
  output: { shape: number[], dtype: DType }
  outputIndex?: number
}

export interface JudgeEnv {
  /** the chain's genesis hash (System.BlockHash(0)): signatures are bound to it, the task and the dispute */
  genesis: Uint8Array
  taskId: number
  disputeId: number
  /** on-chain step index: the transition from state `step` to `step + 1` */
  step: number
  challenger: Uint8Array
  defender: Uint8Array
  caller: 'challenger' | 'defender'
  programHash: Uint8Array
  datasetRoot: Uint8Array
  skeletonRoot: Uint8Array
  proofRoot: Uint8Array
  /** transitions the committed proof covers: proof_root has stepCount + 1 leaves, which fixes every step path's length */
  stepCount: number
  /** a diverged proof's divergence point: its last step, `stepCount`, is taped up to it (nan.ts) */
  divergence?: Divergence
  /**
   * A segment dispute (the proof commits a root every m > 1 steps): the
   * dispute is over segment j, `step` is ignored, and the step a claim is
   * about is the one the defender's signed commit (or the challenger's
   * signed opening) names inside the segment.
   */
  segment?: { j: number, rootEvery: number }
  /**
   * Without `segment`, the proof's root spacing m (absent = 1). A one-step
   * dispute of an m > 1 proof is its diverged last step (`stepCount`): its
   * pre-state is leaf ⌈stepCount / m⌉, proven at the depth proofDepth(stepCount, m).
   */
  rootEvery?: number
  reference?: ReferenceApi
  verify: VerifyFn
}

/** What judgeStep works with in a segment dispute: the segment's first step and, when the claim carries it, its signed list of roots. */
interface SegmentView { first: number, length: number, roots?: Uint8Array[] }
type StepEnv = JudgeEnv & { seg?: SegmentView }

/** `step`: the transition the ruling is about (in a segment dispute, the one inside the segment). */
export interface Ruling { winner: 'challenger' | 'defender', kind: ClaimKind, reason: string, step?: number }

export type RejectReason = 'InvalidClaim' | 'InvalidProof' | 'UnsupportedKernel'
export class ClaimRejected extends Error {
  constructor (readonly reason: RejectReason, detail: string) { super(`${reason}: ${detail}`); this.name = 'ClaimRejected' }
}
function reject (reason: RejectReason, detail: string): never { throw new ClaimRejected(reason, detail) }

export function encodeClaim (c: Claim): Uint8Array {
  const strip = (v: unknown): unknown => {
    if (v instanceof Uint8Array || v === null || typeof v !== 'object') return v
    if (Array.isArray(v)) return v.map(strip)
    return Object.fromEntries(Object.entries(v).filter(([, x]) => x !== undefined).map(([k, x]) => [k, strip(x)]))
  }
  return encode(strip(c))
}

export function decodeClaim (bytes: Uint8Array): Claim {
  if (bytes.length > MAX_CLAIM_BYTES) reject('InvalidClaim', `claim of ${bytes.length} bytes exceeds ${MAX_CLAIM_BYTES}`)
  let c: Claim
  try { c = decode(bytes) as Claim } catch (e) { reject('InvalidClaim', `not CBOR: ${(e as Error).message}`) }
  if (typeof c !== 'object' || c === null || c.v !== CLAIM_VERSION) reject('InvalidClaim', 'not a version 1 claim')
  return c
}

// ---- helpers ----
const is32 = (v: unknown): v is Uint8Array => v instanceof Uint8Array && v.length === 32
function hashes (v: unknown, what: string): Uint8Array[] {
  if (!Array.isArray(v) || v.length > 64 || !v.every(is32)) reject('InvalidClaim', `${what} must be a list of 32-byte hashes`)
  return v
}
function h32 (v: unknown, what: string): Uint8Array { if (!is32(v)) reject('InvalidClaim', `${what} must be 32 bytes`); return v }
function int (v: unknown, what: string): number { if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 0x7fffffff) reject('InvalidClaim', `${what} must be a non-negative integer`); return v }

/** Checks a Merkle path of exactly `depth` siblings. */
function onPath (root: Uint8Array, leaf: Uint8Array, index: number, path: Uint8Array[], depth?: number): boolean {
  if (depth !== undefined && path.length !== depth) return false
  if (index >= 2 ** path.length) return false
  return bytesEqual(rootFromProof(leaf, index, path), root)
}

function shapeOf (v: unknown, what: string): number[] {
  if (!Array.isArray(v) || v.length > 8 || !v.every(d => Number.isInteger(d) && d >= 0 && d <= 1 << 24)) reject('InvalidClaim', `${what}: bad shape`)
  return v
}

function slice (p: unknown, what: string): SliceProof {
  const s = p as ClaimSlice
  if (typeof s !== 'object' || s === null || !['float32', 'int32', 'bool'].includes(s.dtype) || (s.axis !== 'row' && s.axis !== 'col')) reject('InvalidClaim', `${what}: malformed slice`)
  shapeOf(s.shape, what)
  if (!(s.bytes instanceof Uint8Array) || s.bytes.length > 1 << 20) reject('InvalidClaim', `${what}: bad bytes`)
  return { dtype: s.dtype, shape: s.shape, axis: s.axis, index: int(s.index, `${what}.index`), bytes: s.bytes, siblings: hashes(s.siblings, `${what}.siblings`), otherRoot: h32(s.otherRoot, `${what}.otherRoot`) }
}

function tensorOf (v: unknown): Uint8Array {
  const t = v as TensorHead
  if (typeof t !== 'object' || t === null || !['float32', 'int32', 'bool'].includes(t.dtype)) reject('InvalidClaim', 'tensor: malformed head')
  return combineRoots(t.dtype, shapeOf(t.shape, 'tensor'), h32(t.rowRoot, 'tensor.rowRoot'), h32(t.colRoot, 'tensor.colRoot'))
}

function sameShape (a: readonly number[], b: readonly number[]): boolean { return a.length === b.length && a.every((x, i) => x === b[i]) }

/** Bits of element `pos` of a slice (float32 bit pattern, int32 as uint32, bool byte: the committed bytes). */
function bitsAt (dtype: DType, values: TypedValues, pos: number): number {
  if (dtype === 'float32') return new Uint32Array(values.buffer, values.byteOffset, values.length)[pos]
  if (dtype === 'int32') return (values[pos] | 0) >>> 0
  return values[pos] & 0xff
}
/** Bits of a number in `dtype`. A NaN number has no defined bits (engines may canonicalise): references give bits. */
export function valueBits (dtype: DType, v: number): number {
  if (dtype === 'float32') return new Uint32Array(new Float32Array([v]).buffer)[0]
  if (dtype === 'int32') return (v | 0) >>> 0
  return v & 0xff
}

/** Position of flat element `flat` inside a row or column slice, or undefined if the slice does not hold it. */
export function posInSlice (shape: readonly number[], axis: 'row' | 'col', index: number, flat: number): number | undefined {
  const { cols } = matrixView(shape)
  const r = Math.floor(flat / cols); const c = flat % cols
  if (axis === 'row') return r === index ? c : undefined
  return c === index ? r : undefined
}

interface ProgramFacts { runtime: string, seed: number, batchSize: number, trainSize: number, rowSize: number, classes: number }
function programFacts (bytes: unknown, programHash: Uint8Array): ProgramFacts {
  if (!(bytes instanceof Uint8Array) || bytes.length > 16384) reject('InvalidClaim', 'program must be at most 16 KiB of bytes')
  if (!bytesEqual(sha256(bytes), programHash)) reject('InvalidProof', 'program bytes do not hash to the task\'s program_hash')
  let p: { runtime?: unknown, seed?: unknown, batchSize?: unknown, dataset?: { trainSize?: unknown, rowSize?: unknown, classes?: unknown } }
  try { p = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes)) } catch { reject('InvalidClaim', 'program is not UTF-8 JSON') }
  const n = (v: unknown, what: string): number => { if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) reject('InvalidClaim', `program.${what}`); return v }
  if (typeof p.runtime !== 'string') reject('InvalidClaim', 'program.runtime')
  return { runtime: p.runtime, seed: n(p.seed, 'seed'), batchSize: n(p.batchSize, 'batchSize'), trainSize: n(p.dataset?.trainSize, 'trainSize'), rowSize: n(p.dataset?.rowSize, 'rowSize'), classes: n(p.dataset?.classes, 'classes') }
}

/**
 * A message signed by `who` in this dispute: the signature covers the chain's
 * genesis hash, the task and dispute ids and the author's role (messages.ts),
 * so a message of another chain, task or dispute does not verify.
 */
function signedBy (env: JudgeEnv, who: 'challenger' | 'defender', s: unknown, what: string): Msg {
  let signed: Signed
  try { signed = decodeSigned(s) } catch (e) { reject('InvalidClaim', `${what}: ${(e as Error).message}`) }
  try {
    const segmented = env.segment !== undefined && env.segment.rootEvery > 1
    return verifySigned(signed, who === 'defender' ? env.defender : env.challenger, env.verify, { genesis: env.genesis, taskId: env.taskId, disputeId: env.disputeId, segmented })
  } catch (e) { reject('InvalidProof', `${what} is not signed by the ${who} in this dispute: ${(e as Error).message}`) }
}

/** The defender's signed commitment to its tape of this step. */
function tapeCommit (env: JudgeEnv, s: unknown): Extract<Msg, { t: 'commit' }> {
  const m = signedBy(env, 'defender', s, 'tape commitment')
  if (m.t !== 'commit' || m.step !== env.step) reject('InvalidClaim', 'tape commitment is for another step')
  return m
}

/** Entry i of the defender's signed tape. */
function provenEntry (env: JudgeEnv, commit: Extract<Msg, { t: 'commit' }>, at: { index: unknown, entry: unknown, path: unknown }, what: string): TapeEntry {
  const index = int(at.index, `${what}.index`)
  if (!(at.entry instanceof Uint8Array) || at.entry.length > 32768) reject('InvalidClaim', `${what}: entry bytes`)
  const path = hashes(at.path, `${what}.path`)
  if (!onPath(commit.traceRoot, sha256(at.entry), index, path, commit.depth)) reject('InvalidProof', `${what}: entry ${index} is not in the defender's tape`)
  const e = decodeEntry(at.entry)
  if (e === undefined || e.index !== index) reject('InvalidClaim', `${what}: malformed entry`)
  return e
}

function stateLeafProven (env: StepEnv, which: number, root: unknown, path: unknown): Uint8Array {
  const r = h32(root, 'state root')
  if (env.seg !== undefined) {
    // inside a segment the roots are the defender's signed ones, tied to the committed ends
    const list = env.seg.roots
    if (list === undefined) reject('InvalidClaim', 'a segment dispute\'s claim carries the defender\'s signed segment')
    const k = which - env.seg.first
    if (k < 0 || k >= list.length) reject('InvalidClaim', `state ${which} is outside the disputed segment`)
    if (!bytesEqual(list[k], r)) reject('InvalidProof', `state root ${which} is not the one the defender signed in its segment`)
    return r
  }
  // the depth is the chain's, not the claimant's: a shorter path would pass an inner node off as a state root
  const m = env.rootEvery ?? 1
  if (m === 1) {
    if (!onPath(env.proofRoot, r, which, hashes(path, 'state root path'), depthOf(env.stepCount + 1))) reject('InvalidProof', `state root ${which} is not leaf ${which} of the committed proof_root`)
    return r
  }
  // a root every m steps: only committed states are leaves, state s is leaf s / m
  if (!isCommittedStep(which, env.stepCount, m)) reject('InvalidClaim', `state ${which} is not committed (a root every ${m} steps)`)
  const leaf = leafOfStep(which, env.stepCount, m)
  if (!onPath(env.proofRoot, r, leaf, hashes(path, 'state root path'), proofDepth(env.stepCount, m))) reject('InvalidProof', `state root ${which} is not leaf ${leaf} of the committed proof_root`)
  return r
}

/** Bound on the state the chain recomputes for a step-0 badOpen (4 Mi float32 elements: 16 MiB). */
export const MAX_INIT_RECOMPUTE = 4 * 1024 * 1024

/** A step-0 badOpen stands only if the committed state 0 is the program's initial state, recomputed whole. */
function checkInitialRoot (env: JudgeEnv, program: unknown, pre: Uint8Array): void {
  let root: Uint8Array
  try {
    const p = programOf(program, env.programHash)
    if (initLayout(p).reduce((n, t) => n + sizeOf(t.shape), 0) > MAX_INIT_RECOMPUTE) reject('UnsupportedKernel', 'initial state too large to recompute on chain')
    root = initialStateRoot(p)
  } catch (e) {
    if (e instanceof ClaimRejected) throw e
    if (e instanceof InitClaimRejected) reject(e.reason === 'UnsupportedInitializer' ? 'UnsupportedKernel' : e.reason, `badOpen at step 0: ${e.message}`)
    reject('UnsupportedKernel', `badOpen at step 0: ${(e as Error).message}`)
  }
  if (!bytesEqual(root, pre)) reject('InvalidClaim', 'badOpen at step 0: the committed state 0 is not the program\'s initial state')
}

// ---- segments ----

/** The defender's signed roots of segment j with the committed leaves around it: [leaf j, r_1 … r_{L−1}, leaf j+1]. */
function segmentRoots (env: JudgeEnv, seg: { j: number, rootEvery: number }, length: number, p: unknown): Uint8Array[] {
  const q = p as SegmentProof
  if (typeof q !== 'object' || q === null) reject('InvalidClaim', 'seg must be a map')
  const m = signedBy(env, 'defender', q.msg, 'segment')
  if (m.t !== 'segment' || m.seq !== 0 || m.j !== seg.j) reject('InvalidClaim', 'not the defender\'s segment of this dispute')
  if (m.roots.length !== length - 1) reject('InvalidClaim', `segment ${seg.j} has ${length - 1} roots inside it, the message ${m.roots.length}`)
  const depth = proofDepth(env.stepCount, seg.rootEvery)
  const start = h32(q.start, 'seg.start'); const end = h32(q.end, 'seg.end')
  if (!onPath(env.proofRoot, start, seg.j, hashes(q.startPath, 'seg.startPath'), depth)) reject('InvalidProof', `seg.start is not leaf ${seg.j} of proof_root`)
  if (!onPath(env.proofRoot, end, seg.j + 1, hashes(q.endPath, 'seg.endPath'), depth)) reject('InvalidProof', `seg.end is not leaf ${seg.j + 1} of proof_root`)
  return [start, ...m.roots, end]
}

/** The step of the defender's signed commit a claim carries, which must lie inside the segment. */
function commitStepIn (env: JudgeEnv, s: unknown, first: number, length: number): number {
  const m = signedBy(env, 'defender', s, 'tape commitment')
  if (m.t !== 'commit') reject('InvalidClaim', 'not a tape commitment')
  if (m.step < first || m.step >= first + length) reject('InvalidClaim', `the commitment is for step ${m.step}, outside the disputed segment`)
  return m.step
}

/**
 * A segment dispute's claim: the step it is about comes from a signed message
 * (the defender's commit, or for badOpen the challenger's opening), the pre-
 * and post-state roots from the defender's signed segment, and then the claim
 * is judged exactly as in a one-step dispute at that step.
 */
function judgeSegment (env: JudgeEnv, seg: { j: number, rootEvery: number }, c: Claim): Ruling {
  // a diverged proof's segments end at its last leaf, before the diverged step: they are ordinary
  if (seg.j >= segmentCount(env.stepCount, seg.rootEvery)) reject('InvalidClaim', `no segment ${seg.j} in this proof`)
  const first = committedStep(seg.j, env.stepCount, seg.rootEvery)
  const length = segmentLength(seg.j, env.stepCount, seg.rootEvery)
  const view: SegmentView = { first, length, roots: c.seg === undefined ? undefined : segmentRoots(env, seg, length, c.seg) }
  const at = (step: number): StepEnv => ({ ...env, step, seg: view })
  let step: number
  switch (c.kind) {
    case 'badOpen': {
      if (env.caller !== 'defender') reject('InvalidClaim', 'only the defender submits badOpen')
      const m = signedBy(env, 'challenger', c.open, 'opening')
      if (m.t !== 'open' || m.seq !== 1) reject('InvalidClaim', 'not the opening of this dispute')
      if (c.other !== undefined) {
        // one opening per dispute: the defender commits to one step, and a second signed opening of another would
        // let the challenger force it to sign a second tape whose tree contradicts the first (a `lie` it did not tell)
        const o = signedBy(env, 'challenger', c.other, 'second opening')
        if (o.t !== 'open' || o.seq !== 1) reject('InvalidClaim', 'the second message is not an opening of this dispute')
        if (o.step === m.step) reject('InvalidClaim', 'the two openings name the same step')
        return { winner: 'defender', kind: 'badOpen', reason: `the challenger opened steps ${m.step} and ${o.step} of one segment`, step: m.step }
      }
      if (m.step < first || m.step >= first + length) return { winner: 'defender', kind: 'badOpen', reason: 'the opening names a step outside the segment', step: first }
      step = m.step
      break
    }
    case 'init':
      if (seg.j !== 0) reject('InvalidClaim', 'an init claim ends a dispute of segment 0 only')
      step = 0
      break
    case 'lie': {
      step = first
      if (!Array.isArray(c.msgs)) reject('InvalidClaim', 'lie: 1 to 4 messages')
      // the tape facts of two steps would conflict without a lie: one step per claim
      const steps = new Set<number>()
      for (const x of c.msgs) {
        const m = signedBy(env, 'defender', x, 'lie: message')
        if (m.t === 'commit') steps.add(commitStepIn(env, x, first, length))
        if (m.t === 'segment' && m.j !== seg.j) reject('InvalidClaim', 'lie: a segment of another dispute')
      }
      if (steps.size > 1) reject('InvalidClaim', 'lie: commitments for two steps')
      if (steps.size === 1) step = [...steps][0]
      break
    }
    case 'nan':
      if (c.op !== undefined) step = commitStepIn(env, (c.op as { commit?: unknown }).commit, first, length)
      else {
        const i = int(c.state?.index, 'nan.state.index')
        if (i < first || i > first + length) reject('InvalidClaim', 'nan: the state must be inside the disputed segment')
        // the transition that produced state i (the segment's first state: its first transition reads it)
        step = i === first ? first : i - 1
      }
      break
    default:
      step = commitStepIn(env, (c as { commit?: unknown }).commit, first, length)
  }
  return { ...judgeStep(at(step), c), step }
}

// ---- the ruling ----

export function judgeClaim (env: JudgeEnv, c: Claim): Ruling {
  if (env.segment !== undefined && env.segment.rootEvery > 1) return judgeSegment(env, env.segment, c)
  // at m > 1 the one step disputed alone is a diverged proof's last: every other is inside a segment
  if ((env.rootEvery ?? 1) > 1 && (env.divergence === undefined || env.step !== env.stepCount)) reject('InvalidClaim', 'with a root every m > 1 steps only a diverged proof\'s last step is disputed alone')
  return judgeStep(env, c)
}

function judgeStep (env: StepEnv, c: Claim): Ruling {
  const defenderLoses = (reason: string): Ruling => ({ winner: 'challenger', kind: c.kind, reason })
  const challengerLoses = (reason: string): Ruling => ({ winner: 'defender', kind: c.kind, reason })
  if (c.kind === 'badOpen') {
    if (env.caller !== 'defender') reject('InvalidClaim', 'only the defender submits badOpen')
    const m = signedBy(env, 'challenger', c.open, 'opening')
    if (m.t !== 'open') reject('InvalidClaim', 'not the opening of this dispute')
    if (m.step !== env.step) return defenderWins('the opening names another step')
    const pre = stateLeafProven(env, env.step, c.pre, c.prePath)
    if (bytesEqual(pre, m.pre)) reject('InvalidClaim', 'the challenger agreed with the committed pre-state')
    // there is no earlier step to dispute than 0: the committed state 0 must be the program's
    if (env.step === 0) checkInitialRoot(env, c.program, pre)
    return defenderWins('the challenger disputes the pre-state: it should have disputed an earlier step')
  }
  if (c.kind === 'init') {
    if (env.caller !== 'challenger') reject('InvalidClaim', 'only the challenger submits an init claim')
    if (env.step !== 0) reject('InvalidClaim', 'an init claim ends a dispute of step 0 only (else: challenge_initial_state)')
    try {
      const rootEvery = env.segment?.rootEvery ?? env.rootEvery
      const r = judgeInitClaim({ programHash: env.programHash, proofRoot: env.proofRoot, stepCount: env.stepCount, rootEvery }, c)
      return { winner: r.winner === 'challenger' ? 'challenger' : 'defender', kind: 'init', reason: r.reason }
    } catch (e) {
      if (e instanceof InitClaimRejected) reject(e.reason === 'UnsupportedInitializer' ? 'UnsupportedKernel' : e.reason, e.message)
      throw e
    }
  }
  if (env.caller !== 'challenger') reject('InvalidClaim', `only the challenger submits a ${String(c.kind)} claim`)
  switch (c.kind) {
    case 'lie': {
      if (!Array.isArray(c.msgs) || c.msgs.length < 1 || c.msgs.length > 4) reject('InvalidClaim', 'lie: 1 to 4 messages')
      const msgs: Msg[] = c.msgs.map((x, i) => {
        const m = signedBy(env, 'defender', x, `lie: message ${i}`)
        if (m.t === 'commit' && m.step !== env.step) reject('InvalidClaim', 'lie: commitment for another step')
        return m
      })
      const { facts, selfContradiction } = factsOf(msgs)
      if (selfContradiction !== undefined) return defenderLoses(selfContradiction)
      const conflict = conflictOf(facts)
      if (conflict === undefined) reject('InvalidClaim', 'lie: the messages do not contradict each other')
      return defenderLoses(`contradicting statements at ${conflict}`)
    }
    case 'skeleton': {
      const commit = tapeCommit(env, c.commit)
      const index = int(c.index, 'index')
      const skelPath = hashes(c.skelPath, 'skelPath')
      const skelLeaf = h32(c.skelLeaf, 'skelLeaf')
      const skelCount = int(c.skelCount, 'skelCount')
      const skelInner = h32(c.skelInner, 'skelInner')
      if (skelCount === 0 || !bytesEqual(sizedRoot(skelCount, skelInner), env.skeletonRoot)) reject('InvalidProof', 'skelCount/skelInner do not open the task\'s skeleton_root')
      const skelDepth = depthOf(skelCount)
      if (!onPath(skelInner, skelLeaf, index, skelPath, skelDepth)) reject('InvalidProof', `skeleton leaf ${index} is not in the task's skeleton_root`)
      // the skeleton fixes the number of entries, hence the tape tree's depth
      if (skelDepth !== commit.depth) return defenderLoses(`the defender's tape has depth ${commit.depth}, the program's ${skelDepth}`)
      const path = hashes(c.path, 'path')
      let dSkel: Uint8Array | undefined
      if (c.entry !== undefined) {
        if (!(c.entry instanceof Uint8Array) || c.entry.length > 32768) reject('InvalidClaim', 'skeleton: entry bytes')
        if (!onPath(commit.traceRoot, sha256(c.entry), index, path, commit.depth)) reject('InvalidProof', `skeleton: entry ${index} is not in the defender's tape`)
        const e = decodeEntry(c.entry)
        dSkel = e === undefined || e.index !== index ? undefined : skeletonLeaf(e)
      } else {
        if (!onPath(commit.traceRoot, ZERO_HASH, index, path, commit.depth)) reject('InvalidProof', 'skeleton: the defender has no empty leaf there')
        dSkel = ZERO_HASH
      }
      if (dSkel === undefined) return defenderLoses(`entry ${index} of the defender's tape is malformed`)
      return bytesEqual(dSkel, skelLeaf) ? challengerLoses(`entry ${index} matches the skeleton`) : defenderLoses(`entry ${index} differs from the committed skeleton`)
    }
    case 'input': {
      const commit = tapeCommit(env, c.commit)
      const e = provenEntry(env, commit, c, 'input')
      if (runPosition(env, e.index) === 'after') return challengerLoses(afterEnd(e.index))
      const k = int(c.k, 'k')
      const inp = e.inputs[k]
      if (inp === undefined) reject('InvalidClaim', `entry ${e.index} has no input ${k}`)
      const declared = fromHex(inp.commitment)
      const prov = c.prov as Record<string, unknown>
      if (inp.ref.kind === 'state') {
        const p = prov as { t: unknown, tensor: unknown, tensorPath: unknown, pre: unknown, prePath: unknown }
        if (int(p.t, 't') !== inp.ref.index) reject('InvalidClaim', 'input: provenance names another state tensor')
        const pre = stateLeafProven(env, env.step, p.pre, p.prePath)
        const tensor = tensorOf(p.tensor)
        if (!onPath(pre, tensor, inp.ref.index, hashes(p.tensorPath, 'tensorPath'))) reject('InvalidProof', `input: tensor ${inp.ref.index} is not in the pre-state root`)
        return bytesEqual(tensor, declared) ? challengerLoses(`input ${k} of entry ${e.index} is state tensor ${inp.ref.index}`) : defenderLoses(`input ${k} of entry ${e.index} is not state tensor ${inp.ref.index} of the pre-state`)
      }
      if (inp.ref.kind === 'op') {
        const j = provenEntry(env, commit, (prov as { j: EntryAt }).j ?? {}, 'input.j')
        if (j.index !== inp.ref.index) reject('InvalidClaim', 'input: provenance names another entry')
        const out = j.outputs[inp.ref.output]
        if (out === undefined) return defenderLoses(`entry ${j.index} has no output ${inp.ref.output}`)
        return bytesEqual(fromHex(out.commitment), declared) ? challengerLoses(`input ${k} of entry ${e.index} is output ${inp.ref.output} of entry ${j.index}`) : defenderLoses(`input ${k} of entry ${e.index} is not what entry ${j.index} output`)
      }
      reject('InvalidClaim', `input claims are for state and op inputs (this one is ${inp.ref.kind}: use a ${inp.ref.kind === 'data' ? 'data' : 'skeleton'} claim)`)
    }

    case 'state': {
      const commit = tapeCommit(env, c.commit)
      const e = provenEntry(env, commit, c, 'state')
      if (e.kernel !== STATE_PSEUDO_KERNEL) reject('InvalidClaim', `entry ${e.index} is not the ${STATE_PSEUDO_KERNEL} entry`)
      // a diverged proof's last step has no post-state: the run ended inside it
      if (env.step >= env.stepCount) return challengerLoses('the run diverged in this step: it has no post-state')
      const post = stateLeafProven(env, env.step + 1, c.post, c.postPath)
      const recomputed = merkleRoot([...e.inputs.map(i => fromHex(i.commitment)), stepLeaf(env.step + 1)])
      return bytesEqual(recomputed, post) ? challengerLoses('the @state entry hashes to the committed post-state') : defenderLoses(`the @state entry hashes to ${toHex(recomputed).slice(0, 16)}…, not the committed post-state root`)
    }
    case 'element': {
      const commit = tapeCommit(env, c.commit)
      const e = provenEntry(env, commit, c, 'element')
      const at = runPosition(env, e.index)
      if (at === 'after') return challengerLoses(afterEnd(e.index))
      const prog = programFacts(c.program, env.programHash)
      const ref = env.reference
      if (ref === undefined || !ref.supportsElement(prog.runtime, e.kernel)) reject('UnsupportedKernel', `${prog.runtime} ${e.kernel}`)
      const out = e.outputs[0]
      if (out === undefined) reject('InvalidClaim', 'entry has no output')
      const op: OpShapeLike = {
        kernel: e.kernel, attrs: e.attrs, inputs: e.inputs.map(i => ({ shape: i.shape, dtype: i.dtype })),
        output: { shape: out.shape, dtype: out.dtype }, outputIndex: 0
      }
      const flat = int(c.flat, 'flat')
      if (flat >= sizeOf(out.shape)) reject('InvalidClaim', 'flat index outside the output')
      const d = slice(c.slice, 'slice')
      const pos = posInSlice(out.shape, d.axis, d.index, flat)
      if (pos === undefined || d.dtype !== out.dtype || !sameShape(d.shape, out.shape)) reject('InvalidClaim', 'the defender slice does not hold the element')
      if (!verifySlice(fromHex(out.commitment), d)) reject('InvalidProof', 'defender output slice')
      let refs: Array<{ input: number, axis: 'row' | 'col', index: number }>
      try { refs = ref.elementOperands(prog.runtime, op, flat) } catch (x) { reject('InvalidClaim', `operands: ${(x as Error).message}`) }
      if (!Array.isArray(c.operands) || c.operands.length !== refs.length) reject('InvalidClaim', `expected ${refs.length} operands`)
      const proofs = refs.map((r, i) => {
        const p = slice(c.operands[i], `operand ${i}`)
        const inp = e.inputs[r.input]
        if (inp === undefined || p.axis !== r.axis || p.index !== r.index || p.dtype !== inp.dtype || !sameShape(p.shape, inp.shape)) reject('InvalidClaim', `operand ${i} must be ${r.axis} ${r.index} of input ${r.input}`)
        if (!verifySlice(fromHex(inp.commitment), p)) reject('InvalidProof', `operand ${i}`)
        return p
      })
      const got = bitsAt(out.dtype, valuesFromBytes(d.dtype, sliceBytes(d)), pos)
      // NaNs first: no ruling may rest on the reference's treatment of a NaN operand
      const nan = nanRule(e, refs.map(r => r.input), proofs, at, flat, d, got, env.divergence?.flat)
      if (nan !== undefined) return defenderLoses(nan)
      const operands = proofs.map(p => valuesFromBytes(p.dtype, sliceBytes(p)))
      let want: number
      try {
        // bits from the reference: a NaN's sign and payload are part of the value the defender committed
        want = ref.computeElementBits !== undefined
          ? ref.computeElementBits(prog.runtime, op, flat, operands) >>> 0
          : valueBits(out.dtype, ref.computeElement(prog.runtime, op, flat, operands))
      } catch (x) { reject('InvalidClaim', `compute: ${(x as Error).message}`) }
      return want === got ? challengerLoses(`element ${flat} of entry ${e.index} (${e.kernel}) is right`) : defenderLoses(`element ${flat} of entry ${e.index} (${e.kernel}): defender 0x${got.toString(16)}, reference 0x${want.toString(16)}`)
    }
    case 'data': {
      const commit = tapeCommit(env, c.commit)
      const e = provenEntry(env, commit, c, 'data')
      if (runPosition(env, e.index) === 'after') return challengerLoses(afterEnd(e.index))
      const prog = programFacts(c.program, env.programHash)
      const k = int(c.k, 'k')
      const inp = e.inputs[k]
      if (inp === undefined || inp.ref.kind !== 'data') reject('InvalidClaim', `input ${k} of entry ${e.index} is not batch data`)
      // the batch holds one dataset row per example, of any shape ([b,784], [b,28,28,1])
      const cols = inp.ref.name === 'x' ? prog.rowSize : prog.classes
      if (!isBatchLayout(inp.shape, prog.batchSize, cols)) reject('UnsupportedKernel', `batch input of shape [${inp.shape.join(',')}] is not [${prog.batchSize}, ...] with ${cols} values per example`)
      const xRoot = h32(c.xRoot, 'xRoot'); const yRoot = h32(c.yRoot, 'yRoot')
      if (!bytesEqual(datasetRootOf(xRoot, yRoot), env.datasetRoot)) reject('InvalidProof', 'xRoot/yRoot do not open dataset_root')
      const flat = int(c.flat, 'flat')
      if (flat >= sizeOf(inp.shape)) reject('InvalidClaim', 'flat index outside the batch')
      const d = slice(c.slice, 'slice')
      const pos = posInSlice(inp.shape, d.axis, d.index, flat)
      if (pos === undefined || d.dtype !== 'float32' || !sameShape(d.shape, inp.shape)) reject('InvalidClaim', 'the defender slice does not hold the element')
      if (!verifySlice(fromHex(inp.commitment), d)) reject('InvalidProof', 'defender batch slice')
      const { r, offset } = batchElement(flat, cols)
      const row = batchIndices(prog.seed, prog.trainSize, prog.batchSize, env.step)[r]
      const ds = slice(c.row, 'row')
      if (ds.axis !== 'row' || ds.index !== row || ds.dtype !== 'float32' || !sameShape(ds.shape, [prog.trainSize, cols])) reject('InvalidClaim', `the dataset slice must be row ${row} of [${prog.trainSize}, ${cols}]`)
      if (!verifySlice(inp.ref.name === 'x' ? xRoot : yRoot, ds)) reject('InvalidProof', 'dataset row')
      const want = bitsAt('float32', valuesFromBytes('float32', sliceBytes(ds)), offset)
      const got = bitsAt('float32', valuesFromBytes('float32', sliceBytes(d)), pos)
      return want === got ? challengerLoses(`batch element ${flat} is dataset row ${row}`) : defenderLoses(`batch element ${flat} of entry ${e.index} is not dataset row ${row}, element ${offset}`)
    }
    case 'nan': return judgeNan(env, c, defenderLoses, challengerLoses)
    default: reject('InvalidClaim', `unknown claim kind ${String((c as { kind?: unknown }).kind)}`)
  }
  function defenderWins (reason: string): Ruling { return { winner: 'defender', kind: c.kind, reason } }
  function afterEnd (index: number): string { return `the run diverged at entry ${env.divergence?.entry ?? -1} of this step: entry ${index} is past its end` }
}

/**
 * Why an element claim's NaN loses for the defender, if it does: a NaN in an
 * operand slice of a state or op input (data and constants are the task's,
 * not the defender's), in the output before the run's divergence point, or
 * no NaN at the divergence point itself.
 */
function nanRule (
  e: TapeEntry, inputs: number[], proofs: SliceProof[], at: ReturnType<typeof runPosition>, flat: number, out: SliceProof, got: number, divFlat = 0
): string | undefined {
  for (let i = 0; i < proofs.length; i++) {
    const kind = e.inputs[inputs[i]].ref.kind
    if ((kind === 'state' || kind === 'op') && bytesHoldNaN(proofs[i].dtype, proofs[i].bytes)) return `NaN in a committed tensor: operand ${i} (input ${inputs[i]}) of entry ${e.index}`
  }
  if (out.dtype !== 'float32') return undefined
  if (at === 'normal' || at === 'before') return bytesHoldNaN('float32', out.bytes) ? `NaN in a committed tensor: the output of entry ${e.index}` : undefined
  // at the divergence point: NaN-free operands, so the reference is exact from here on
  if (flat < divFlat && isNaNBits(got)) return `a NaN at element ${flat} of entry ${e.index}, before the divergence point's element ${divFlat}`
  if (flat === divFlat && !isNaNBits(got)) return `the divergence point (entry ${e.index}, element ${flat}) holds no NaN`
  return undefined
}

function judgeNan (env: StepEnv, c: NanClaim, defenderLoses: (r: string) => Ruling, challengerLoses: (r: string) => Ruling): Ruling {
  const s = slice(c.slice, 'slice')
  const flat = int(c.flat, 'flat')
  if (s.dtype !== 'float32') reject('InvalidClaim', 'nan: only float32 tensors hold NaNs')
  let where: string
  let at: ReturnType<typeof runPosition> = 'normal'
  if (c.state !== undefined && c.op === undefined) {
    const st = c.state
    const i = int(st.index, 'nan.state.index')
    // the disputed step's own states: an accepting verdict that replayed this step vouched for them
    if (env.seg === undefined && ((i !== env.step && i !== env.step + 1) || i > env.stepCount)) reject('InvalidClaim', 'nan: the state must be the disputed step\'s pre- or post-state')
    const root = stateLeafProven(env, i, st.root, st.rootPath)
    const t = int(st.t, 'nan.state.t')
    const tensor = tensorOf(st.tensor)
    if (!onPath(root, tensor, t, hashes(st.tensorPath, 'nan.state.tensorPath'))) reject('InvalidProof', `nan: tensor ${t} is not in state root ${i}`)
    if (s.dtype !== st.tensor.dtype || !sameShape(s.shape, st.tensor.shape)) reject('InvalidClaim', 'nan: the slice is not of the tensor')
    if (!verifySlice(tensor, s)) reject('InvalidProof', 'nan: state tensor slice')
    where = `state tensor ${t} of state ${i}`
  } else if (c.op !== undefined && c.state === undefined) {
    const commit = tapeCommit(env, c.op.commit)
    const e = provenEntry(env, commit, c.op, 'nan')
    const out = e.outputs[0]
    if (out === undefined) reject('InvalidClaim', `nan: entry ${e.index} has no output`)
    if (s.dtype !== out.dtype || !sameShape(s.shape, out.shape)) reject('InvalidClaim', 'nan: the slice is not of the output')
    if (!verifySlice(fromHex(out.commitment), s)) reject('InvalidProof', 'nan: output slice')
    at = runPosition(env, e.index)
    where = `the output of entry ${e.index} (${e.kernel})`
  } else reject('InvalidClaim', 'nan: name a state tensor or a tape entry')
  const pos = posInSlice(s.shape, s.axis, s.index, flat)
  if (flat >= sizeOf(s.shape) || pos === undefined) reject('InvalidClaim', 'nan: the slice does not hold the element')
  const bits = bitsAt('float32', valuesFromBytes('float32', sliceBytes(s)), pos)
  if (!isNaNBits(bits)) return challengerLoses(`element ${flat} of ${where} is not a NaN`)
  if (at === 'after' || (at === 'at' && flat >= (env.divergence?.flat ?? 0))) return challengerLoses(`element ${flat} of ${where} is at or past the run's divergence point`)
  return defenderLoses(`NaN in a committed tensor: element ${flat} of ${where}`)
}
