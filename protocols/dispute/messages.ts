import { decode, encode } from 'cborg'
import { ZERO_HASH, bytesEqual, sha256 } from '../commit/merkle.js'
import type { DType } from '../commit/tensor.js'

// Messages of the bisection game (version 2). Every message is CBOR, signed by
// its author's chain account (sr25519) over DOMAIN || context || bytes, the
// context being the chain's genesis hash, the task and dispute ids and the
// author's role, so a signature is worth nothing on another chain, task,
// dispute or side. Every message carries its place in the transcript: `seq`
// (0 = the defender's commit; even = defender, odd = challenger) and `prev`,
// the sha256 of the previous message's bytes, so one signed message commits
// to the whole transcript before it (protocols/dispute/transcript.ts).
//
//   D segment {j, roots}                  (segment disputes, seq 0) the L − 1 state roots
//                                         inside segment j, between two committed leaves
//   D commit  {traceRoot, depth}          the defender's op tape of the step
//   C open    {pre, post}                 agreed pre-state, claimed post-state;
//                                         asks for the children of the tape root
//   C query   {want: children|entry|roots|slice, tree, level, index}
//   D nodes   {tree, level, index, depth, node, left, right}   depth: of that tree
//   D entry   {index, entry?}             the tape entry at a leaf (absent: empty leaf)
//   D roots   {tree: {e, io, k}, dtype, shape, commitment, rowRoot, colRoot}
//   D chunks  {tree: {e, io, k}, dtype, shape, commitment, chunkRoot}
//                                         the other answer to a `roots` query: a tensor under
//                                         its chunked commitment (commit/chunked.ts), the
//                                         chunked side of a state conversion
//   D slice   {tree, index, bytes}        leaf `index` of a tensor's row or column tree:
//                                         a group of consecutive rows or columns; of its
//                                         chunk tree: the chunk
//   D refuse  {reason}                    answer to a query outside the rules
//
// A tree is the tape ({e: -1}) or one tensor of entry e: input/output k,
// its row or column tree, or its chunk tree ({axis: 'chunk'}, after `chunks`).
//
// A segment dispute (a proof with a state root every m > 1 steps) starts one
// level higher: seq 0 is the defender's `segment`, seq 1 the challenger's
// `open` naming a step inside it, seq 2 the defender's `commit` of that
// step's tape, seq 3 the challenger's query for the tape root's children,
// and the game goes on as above (two messages more: MAX_SEGMENT_SEQ).

export const DISPUTE_PROTOCOL = '/proofswarm/dispute/3.0.0'
export const SIGN_DOMAIN = new TextEncoder().encode('proofswarm/dispute/v2:')
/** Highest sequence number: 2 × (tape depth ≤ 40 + tensor depth ≤ 40 + 4) moves and the commit. */
export const MAX_SEQ = 2 * (40 + 40 + 4)
/** A segment dispute has two messages more: the segment and the query that follows the commit. */
export const MAX_SEGMENT_SEQ = MAX_SEQ + 2
/** A segment holds at most 64 steps (MAX_ROOT_EVERY), so at most 63 roots inside it. */
export const MAX_SEGMENT_ROOTS = 63
/** A single message (a state blob excepted) is at most this big. */
export const MAX_MESSAGE_BYTES = 256 * 1024
/**
 * A slice answer's bytes are at most this many: the answer must fit in a claim (≤ 64 KiB,
 * claim-codec.ts) beside the roots and the node answer it may contradict, or a cheater's oversized
 * leaf could be proven false by no claim the chain takes. Admissible programs' leaves are smaller.
 */
export const MAX_SLICE_BYTES = 60 * 1024

export interface TapeTree { e: -1 }
export type TensorAxis = 'row' | 'col' | 'chunk'
export interface TensorTree { e: number, io: 'in' | 'out', k: number, axis?: TensorAxis }
export type TreeId = TapeTree | TensorTree

/** Place in the transcript: sequence number and sha256 of the previous message's bytes (zero for seq 0). */
export interface Link { seq: number, prev: Uint8Array }

export type Body =
  | { t: 'segment', d: number, j: number, roots: Uint8Array[] }
  | { t: 'commit', d: number, step: number, traceRoot: Uint8Array, depth: number }
  | { t: 'open', d: number, step: number, pre: Uint8Array, post: Uint8Array }
  | { t: 'query', d: number, want: 'children' | 'entry' | 'roots' | 'slice', tree: TreeId, level: number, index: number }
  | { t: 'nodes', d: number, tree: TreeId, level: number, index: number, depth: number, node: Uint8Array, left: Uint8Array, right: Uint8Array }
  | { t: 'entry', d: number, index: number, entry?: Uint8Array }
  | { t: 'roots', d: number, tree: TensorTree, dtype: DType, shape: number[], commitment: Uint8Array, rowRoot: Uint8Array, colRoot: Uint8Array }
  | { t: 'chunks', d: number, tree: TensorTree, dtype: DType, shape: number[], commitment: Uint8Array, chunkRoot: Uint8Array }
  | { t: 'slice', d: number, tree: TensorTree, index: number, bytes: Uint8Array }
  | { t: 'refuse', d: number, reason: string }
export type Msg = Body & Link

export interface Signed { m: Uint8Array, s: Uint8Array, a: Uint8Array }

/**
 * What every signature is bound to besides the message. `segmented`: the
 * dispute is over a segment (the task's proof commits a root every m > 1
 * steps), which decides which messages may decode (decodeMsg); it is not
 * signed, the dispute id already fixes it.
 */
export interface DisputeContext { genesis: Uint8Array, taskId: number, disputeId: number, segmented?: boolean }
export type Role = 'challenger' | 'defender'
/** The author of a message by its sequence number. */
export const roleOfSeq = (seq: number): Role => seq % 2 === 0 ? 'defender' : 'challenger'

export class MessageError extends Error {
  constructor (message: string) { super(message); this.name = 'MessageError' }
}

export function encodeMsg (m: Msg): Uint8Array {
  return encode(stripUndefined(m))
}

function stripUndefined (o: object): object {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined))
}

function u64le (n: number): Uint8Array {
  const b = new Uint8Array(8)
  new DataView(b.buffer).setBigUint64(0, BigInt(n), true)
  return b
}

/** DOMAIN ‖ genesis hash ‖ task id (u64 LE) ‖ dispute id (u64 LE) ‖ role (0 challenger, 1 defender) ‖ message bytes */
export function signingPayload (ctx: DisputeContext, role: Role, m: Uint8Array): Uint8Array {
  if (ctx.genesis.length !== 32) throw new MessageError('the genesis hash must be 32 bytes')
  const head = [SIGN_DOMAIN, ctx.genesis, u64le(ctx.taskId), u64le(ctx.disputeId), Uint8Array.of(role === 'challenger' ? 0 : 1)]
  const out = new Uint8Array(head.reduce((n, x) => n + x.length, 0) + m.length)
  let o = 0
  for (const x of [...head, m]) { out.set(x, o); o += x.length }
  return out
}

/** The hash the next message's `prev` names. */
export function moveHash (s: Signed): Uint8Array { return sha256(s.m) }

/** A signed message as bytes (the argument of force_move / answer_move). */
export function encodeSigned (s: Signed): Uint8Array { return encode({ m: s.m, s: s.s, a: s.a }) }
export function decodeSignedBytes (b: Uint8Array): Signed {
  if (b.length > MAX_MESSAGE_BYTES + 256) throw new MessageError('signed message too large')
  let v: unknown
  try { v = decode(b) } catch (e) { throw new MessageError(`not CBOR: ${(e as Error).message}`) }
  return decodeSigned(v)
}

export type SignFn = (payload: Uint8Array) => Uint8Array
export type VerifyFn = (payload: Uint8Array, signature: Uint8Array, publicKey: Uint8Array) => boolean

export function signMsg (m: Msg, account: Uint8Array, sign: SignFn, ctx: DisputeContext): Signed {
  const bytes = encodeMsg(m)
  return { m: bytes, s: sign(signingPayload(ctx, roleOfSeq(m.seq), bytes)), a: account }
}

const isBytes = (v: unknown, n?: number): v is Uint8Array => v instanceof Uint8Array && (n === undefined || v.length === n)
const isInt = (v: unknown, lo = 0, hi = 0x7fffffff): v is number => typeof v === 'number' && Number.isInteger(v) && v >= lo && v <= hi

function checkTree (t: unknown): TreeId {
  const x = t as TensorTree
  if (typeof x !== 'object' || x === null) throw new MessageError('tree must be a map')
  if (x.e === -1) return { e: -1 }
  if (!isInt(x.e, 0, 1 << 20) || (x.io !== 'in' && x.io !== 'out') || !isInt(x.k, 0, 64)) throw new MessageError('bad tensor tree')
  if (x.axis !== undefined && x.axis !== 'row' && x.axis !== 'col' && x.axis !== 'chunk') throw new MessageError('bad axis')
  return x.axis === undefined ? { e: x.e, io: x.io, k: x.k } : { e: x.e, io: x.io, k: x.k, axis: x.axis }
}

/**
 * Decodes and validates a message's structure (not its meaning). `segmented`:
 * a segment dispute's message (a `segment` at seq 0, the commit at seq 2, two
 * more messages); a one-step dispute's otherwise.
 */
export function decodeMsg (bytes: Uint8Array, segmented = false): Msg {
  if (bytes.length > MAX_MESSAGE_BYTES) throw new MessageError(`message of ${bytes.length} bytes exceeds ${MAX_MESSAGE_BYTES}`)
  let m: Record<string, unknown>
  try { m = decode(bytes) as Record<string, unknown> } catch (e) { throw new MessageError(`not CBOR: ${(e as Error).message}`) }
  if (typeof m !== 'object' || m === null) throw new MessageError('message must be a map')
  if (!isInt(m.d, 0, Number.MAX_SAFE_INTEGER)) throw new MessageError('bad dispute id')
  const h = (k: string): Uint8Array => { if (!isBytes(m[k], 32)) throw new MessageError(`${String(m.t)}.${k} must be 32 bytes`); return m[k] as Uint8Array }
  const i = (k: string, hi?: number): number => { if (!isInt(m[k], 0, hi)) throw new MessageError(`${String(m.t)}.${k} must be a non-negative integer`); return m[k] as number }
  const d = m.d as number
  const link: Link = { seq: i('seq', segmented ? MAX_SEGMENT_SEQ : MAX_SEQ), prev: h('prev') }
  if (segmented) {
    if (link.seq === 0 && (m.t !== 'segment' || !bytesEqual(link.prev, ZERO_HASH))) throw new MessageError('seq 0 of a segment dispute is the defender\'s segment, with no previous message')
    if (m.t === 'segment' && link.seq !== 0) throw new MessageError('the segment is message 0')
    if (m.t === 'commit' && link.seq !== 2) throw new MessageError('the commit of a segment dispute is message 2')
  } else {
    if (link.seq === 0 && (m.t !== 'commit' || !bytesEqual(link.prev, ZERO_HASH))) throw new MessageError('seq 0 is the defender\'s commit, with no previous message')
    if (m.t === 'commit' && link.seq !== 0) throw new MessageError('the commit is message 0')
    if (m.t === 'segment') throw new MessageError('a segment belongs to a segment dispute')
  }
  if (link.seq !== 0 && roleOfSeq(link.seq) !== (['open', 'query'].includes(m.t as string) ? 'challenger' : 'defender')) throw new MessageError(`${String(m.t)} at seq ${link.seq} has the wrong author parity`)
  const msg: Msg = { ...decodeBody(m, d, h, i), ...link }
  // one message, one byte string: `prev` names bytes, so a re-encoding of a message (another key order, a
  // longer integer, an extra field) would be a second message of the same content that answers nothing
  // sent after the first (forced on chain, the other side's next move no longer continues it)
  if (!bytesEqual(encodeMsg(msg), bytes)) throw new MessageError('not the canonical encoding of its message')
  return msg
}

function decodeBody (m: Record<string, unknown>, d: number, h: (k: string) => Uint8Array, i: (k: string, hi?: number) => number): Body {
  switch (m.t) {
    case 'segment': {
      const roots = m.roots
      if (!Array.isArray(roots) || roots.length > MAX_SEGMENT_ROOTS || !roots.every(r => isBytes(r, 32))) throw new MessageError(`segment.roots must be at most ${MAX_SEGMENT_ROOTS} hashes of 32 bytes`)
      return { t: 'segment', d, j: i('j'), roots: roots as Uint8Array[] }
    }
    case 'commit': return { t: 'commit', d, step: i('step'), traceRoot: h('traceRoot'), depth: i('depth', 40) }
    case 'open': return { t: 'open', d, step: i('step'), pre: h('pre'), post: h('post') }
    case 'query': {
      if (!['children', 'entry', 'roots', 'slice'].includes(m.want as string)) throw new MessageError('bad query')
      return { t: 'query', d, want: m.want as 'children', tree: checkTree(m.tree), level: i('level', 64), index: i('index') }
    }
    case 'nodes': return { t: 'nodes', d, tree: checkTree(m.tree), level: i('level', 40), index: i('index'), depth: i('depth', 40), node: h('node'), left: h('left'), right: h('right') }
    case 'entry': {
      if (m.entry !== undefined && !isBytes(m.entry)) throw new MessageError('entry must be bytes')
      return m.entry === undefined ? { t: 'entry', d, index: i('index') } : { t: 'entry', d, index: i('index'), entry: m.entry as Uint8Array }
    }
    case 'roots':
    case 'chunks': {
      const tree = checkTree(m.tree) as TensorTree
      if (tree.e === -1) throw new MessageError(`${m.t} of the tape tree`)
      if (!['float32', 'int32', 'bool'].includes(m.dtype as string)) throw new MessageError('bad dtype')
      if (!Array.isArray(m.shape) || m.shape.length > 8 || !m.shape.every(x => isInt(x, 0, 1 << 24))) throw new MessageError('bad shape')
      const head = { d, tree, dtype: m.dtype as DType, shape: m.shape as number[], commitment: h('commitment') }
      return m.t === 'roots' ? { t: 'roots', ...head, rowRoot: h('rowRoot'), colRoot: h('colRoot') } : { t: 'chunks', ...head, chunkRoot: h('chunkRoot') }
    }
    case 'slice': {
      const tree = checkTree(m.tree) as TensorTree
      if (tree.e === -1 || tree.axis === undefined) throw new MessageError('slice needs a row, column or chunk tree')
      if (!isBytes(m.bytes)) throw new MessageError('slice.bytes must be bytes')
      return { t: 'slice', d, tree, index: i('index'), bytes: m.bytes as Uint8Array }
    }
    case 'refuse': {
      if (typeof m.reason !== 'string' || m.reason.length > 200) throw new MessageError('refuse.reason must be a string of at most 200 characters')
      return { t: 'refuse', d, reason: m.reason }
    }
    default: throw new MessageError(`unknown message type ${String(m.t)}`)
  }
}

export function decodeSigned (v: unknown): Signed {
  const s = v as Signed
  if (typeof s !== 'object' || s === null || !isBytes(s.m) || !isBytes(s.s, 64) || !isBytes(s.a, 32)) throw new MessageError('malformed signed message')
  return { m: s.m, s: s.s, a: s.a }
}

/**
 * Checks that `s` is `expectedAccount`'s message in this very dispute (the
 * signature is over the context) and returns it; its role follows from its
 * sequence number.
 */
export function verifySigned (s: Signed, expectedAccount: Uint8Array, verify: VerifyFn, ctx: DisputeContext): Msg {
  if (!bytesEqual(s.a, expectedAccount)) throw new MessageError('signed by another account')
  const m = decodeMsg(s.m, ctx.segmented === true)
  if (m.d !== ctx.disputeId) throw new MessageError('a message of another dispute')
  let ok = false
  try { ok = verify(signingPayload(ctx, roleOfSeq(m.seq), s.m), s.s, s.a) } catch { ok = false }
  if (!ok) throw new MessageError('bad signature (or signed for another chain, task, dispute or role)')
  return m
}

export function treeKey (t: TreeId): string {
  if (t.e === -1) return 'tape'
  const x = t as TensorTree
  return `${x.e}/${x.io}/${x.k}/${x.axis ?? '-'}`
}
