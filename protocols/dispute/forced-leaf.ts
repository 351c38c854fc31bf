import { decode, encode } from 'cborg'
import { bytesEqual, fromHex, merkleProof, merkleRoot, rootFromProof, sha256 } from '../commit/merkle.js'
import { stepLeaf } from '../commit/state.js'
import { isCommittedStep, leafOfStep, proofDepth } from '../pol/segments.js'
import { STATE_PSEUDO_KERNEL } from '../tape/tape.js'
import type { Claim } from './claim-kinds.js'
import { decodeEntry } from './entry.js'

// A Truebit forced error is a MARKED LEAF, not a changed state (docs/disputes.md
// "Forced errors"). The solver trains the forced step f honestly, reaching
// state H, commits leaf f + 1 (leaf (f + 1) / m with a root every m steps) as
// forcedLeaf(root(H)) instead of root(H), and continues from H. A verifier that
// replays f sees the leaf differ from its root: its `state` claim wins. The
// reveal proves that the committed leaf is forcedLeaf of the ruling's honest
// post-state (the root the defender's own signed @state entry hashes to). An
// honest run never commits forcedLeaf(x) for the state x it reached (that would
// need a sha256 preimage), so a coalition cannot turn an honest step into a
// "forced error" with a puppet's fake @state entry and slash the verifiers who
// accepted it. The preimage is 25 + 32 = 57 bytes starting with 'p' (0x70);
// Merkle leaves start with 0x00, inner nodes 0x01 (65 bytes), tensor
// commitments 0x02, sized roots 0x03: a marked leaf is none of them.

const TAG = new TextEncoder().encode('proofswarm/forced-leaf/v1')

/** The committed leaf of a forced error whose honest post-state root is `root`. */
export function forcedLeaf (root: Uint8Array): Uint8Array {
  if (root.length !== 32) throw new Error('a state root is 32 bytes')
  return sha256(TAG, root)
}

/** Whether committed leaf `leaf` is the forced mark of state root `root`. */
export const isForcedLeafOf = (leaf: Uint8Array, root: Uint8Array): boolean => root.length === 32 && bytesEqual(leaf, forcedLeaf(root))

/**
 * A committed leaf read as a PRE-state: the marked leaf of a forced error
 * stands for its preimage (the honest state the solver continued from), so a
 * leaf is reached from `root` either directly or through its mark. As a
 * post-state a marked leaf is not its preimage: that is the forced error.
 */
export function preLeafOnPath (root: Uint8Array, on: (leaf: Uint8Array) => boolean): boolean {
  return on(root) || (root.length === 32 && on(forcedLeaf(root)))
}

/** Two pre-state roots that name the same state: equal, or one the forced mark of the other. */
export function samePre (a: Uint8Array, b: Uint8Array): boolean {
  return bytesEqual(a, b) || isForcedLeafOf(a, b) || isForcedLeafOf(b, a)
}

/** samePre on hex roots (0x or not): the committed pre-state leaf and our own root of that state. */
export function samePreHex (committed: string, ours: string): boolean {
  const c = committed.replace(/^0x/, ''); const o = ours.replace(/^0x/, '')
  return c === o || (o.length === 64 && samePre(fromHex(c), fromHex(o)))
}

export const REVEAL_PROOF_VERSION = 2
export const MAX_REVEAL_PROOF_BYTES = 4 * 1024

/** The reveal's proof: the Merkle path of the forced leaf in proof_root (`exactness` of reveal_forced_error). */
export interface ForcedLeafProof { v: 2, path: Uint8Array[] }

/** The proof for the forced step `step` of a run with committed roots `stateRoots` (hex), `steps` transitions, a root every `rootEvery`. */
export function proveForcedLeaf (stateRoots: readonly string[], step: number, steps: number, rootEvery = 1): ForcedLeafProof {
  const leaf = leafOfStep(step + 1, steps, rootEvery)
  return { v: 2, path: merkleProof(stateRoots.map(fromHex), leaf) }
}

export function encodeForcedLeafProof (p: ForcedLeafProof): Uint8Array { return encode(p) }

export interface ForcedLeafEnv {
  /** the forced on-chain step: the transition from state `step` to `step + 1` */
  step: number
  proofRoot: Uint8Array
  /** transitions the committed proof covers */
  stepCount: number
  /** the proof's state-root spacing m (absent = 1) */
  rootEvery?: number
  /** the ruling's basis: the post-state root the defender's signed @state entry hashes to */
  honestPost: Uint8Array
}

export type ForcedLeafResult = { ok: true } | { ok: false, reason: string }

const is32 = (v: unknown): v is Uint8Array => v instanceof Uint8Array && v.length === 32

/** Checks that leaf step + 1 of proof_root, at the chain's depth, is forcedLeaf(honestPost). */
export function checkForcedLeaf (env: ForcedLeafEnv, raw: Uint8Array): ForcedLeafResult {
  const no = (reason: string): ForcedLeafResult => ({ ok: false, reason })
  if (!(raw instanceof Uint8Array) || raw.length > MAX_REVEAL_PROOF_BYTES) return no('proof too large')
  let p: ForcedLeafProof
  try { p = decode(raw) as ForcedLeafProof } catch { return no('not CBOR') }
  if (typeof p !== 'object' || p === null || p.v !== REVEAL_PROOF_VERSION) return no('not a version 2 proof')
  if (!Array.isArray(p.path) || p.path.length > 64 || !p.path.every(is32)) return no('malformed path')
  const m = env.rootEvery ?? 1
  const s = env.step + 1
  if (!Number.isInteger(s) || s < 1 || s > env.stepCount || !isCommittedStep(s, env.stepCount, m)) return no('the forced post-state is not a committed leaf')
  // the depth is the chain's: no inner node passes for the leaf
  if (p.path.length !== proofDepth(env.stepCount, m)) return no('the path has the wrong depth')
  const leaf = leafOfStep(s, env.stepCount, m)
  if (!bytesEqual(rootFromProof(forcedLeaf(env.honestPost), leaf, p.path), env.proofRoot)) return no('the committed leaf is not the forced mark of the ruling\'s honest post-state')
  return { ok: true }
}

/** What a SolverProof ruling was decided on: its claim kind, and for a `state` claim the post-state root the defender's signed @state entry hashes to. */
export function rulingBasis (c: Claim, step: number): { kind: Claim['kind'], honestPost: Uint8Array | null } {
  if (c.kind !== 'state') return { kind: c.kind, honestPost: null }
  // judgeClaim proved the entry against the defender's signed tape root before a ruling exists
  const e = decodeEntry(c.entry)
  if (e === undefined || e.kernel !== STATE_PSEUDO_KERNEL) return { kind: c.kind, honestPost: null }
  return { kind: c.kind, honestPost: merkleRoot([...e.inputs.map(i => fromHex(i.commitment)), stepLeaf(step + 1)]) }
}
