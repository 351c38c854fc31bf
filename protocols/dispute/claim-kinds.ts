import type { ChunkedHead, ClaimChunk, ClaimSlice, TensorHead } from './claim-parts.js'
import type { InitClaim } from './init-claim.js'
import type { Signed } from './messages.js'

// The claim's kinds as data: what each one carries (claim.ts says what each
// states and who it makes lose). Apart from the judge so that every part of
// it names them without importing the whole.

export interface EntryAt { index: number, entry: Uint8Array, path: Uint8Array[] }

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
  | ({ v: 1, kind: 'input', commit: Signed, k: number, prov: { t: number, tensor: TensorHead | ChunkedHead, tensorPath: Uint8Array[], pre: Uint8Array, prePath: Uint8Array[] } | { j: EntryAt } } & EntryAt)
  | ({ v: 1, kind: 'state', commit: Signed, post: Uint8Array, postPath: Uint8Array[] } & EntryAt)
  | ({ v: 1, kind: 'element', commit: Signed, program: Uint8Array, flat: number, slice: ClaimSlice, operands: ClaimSlice[] } & EntryAt)
  | ({ v: 1, kind: 'data', commit: Signed, program: Uint8Array, k: number, flat: number, slice: ClaimSlice, row: ClaimSlice, xRoot: Uint8Array, yRoot: Uint8Array } & EntryAt)
  | ({ v: 1, kind: 'convert', commit: Signed, flat: number, chunk: ClaimChunk, slice: ClaimSlice } & EntryAt)
  | { v: 1, kind: 'lie', msgs: Signed[] }
  | { v: 1, kind: 'badOpen', open: Signed, pre: Uint8Array, prePath: Uint8Array[], program?: Uint8Array, other?: Signed }
  | InitClaim
  | NanClaim

/** A NaN in a tensor the defender committed: state tensor `t` of state root `index` (the disputed step's pre- or post-state), or output 0 of a tape entry. */
export interface NanClaim {
  v: 1
  kind: 'nan'
  flat: number
  /** the element's row or column (an op output, or a state tensor under a row + column head) */
  slice?: ClaimSlice
  /** the element's chunk (a state tensor under a chunked head: chunked state roots, not yet in use) */
  chunk?: ClaimChunk
  state?: { index: number, root: Uint8Array, rootPath: Uint8Array[], t: number, tensor: TensorHead | ChunkedHead, tensorPath: Uint8Array[] }
  op?: { commit: Signed } & EntryAt
}

export type ClaimKind = Claim['kind']
