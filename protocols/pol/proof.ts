import { leafCount, leafOfStep } from './segments.js'
import { bytesEqual, fromHex, merkleProof, merkleRoot, toHex, verifyMerkleProof } from '../commit/merkle.js'

// Proof-of-learning (version 1). stateRoots[s] is the state root after s
// steps (s = 0 is the initial state), so a run of N steps has N+1 roots.
// proofRoot = merkleRoot(stateRoots as leaves) — the value committed on chain.
// A dispute's step level proves two adjacent leaves against proofRoot.
// With state roots every m steps (`rootEvery`, segments.ts) the leaves are
// the roots of steps 0, m, 2m, …, N only; the field is absent at m = 1, so a
// per-step proof is byte for byte what it always was.

export const POL_VERSION = 1

export interface CheckpointRef { step: number, manifestHash: string, cid?: string }

export interface ProofOfLearning {
  version: 1
  programHash: string
  runtime: string
  steps: number
  /** the state-root spacing m (absent = 1): stateRoots[j] is the root after step min(j·m, steps) */
  rootEvery?: number
  stateRoots: string[]
  proofRoot: string
  finalStateRoot: string
  checkpoints: CheckpointRef[]
  /** a diverged run's divergence point in the op tape of step `steps` (docs/disputes.md, "NaN: a NaN ends the run"): states 0..steps are NaN-free */
  divergence?: { entry: number, flat: number }
}

export function proofRootOf (stateRoots: readonly string[]): string {
  return toHex(merkleRoot(stateRoots.map(fromHex)))
}

/**
 * The proof over `stateRoots`: every step's root (m = 1, the default), or with
 * `seg` the roots of the committed steps only (leafCount(steps, m) of them).
 */
export function buildProof (
  programHash: string, runtime: string, stateRoots: readonly string[], checkpoints: readonly CheckpointRef[], seg?: { rootEvery: number, steps: number }
): ProofOfLearning {
  if (stateRoots.length < 1) throw new Error('a proof needs at least the initial state root')
  const m = seg?.rootEvery ?? 1
  const steps = seg?.steps ?? stateRoots.length - 1
  if (stateRoots.length !== leafCount(steps, m)) throw new Error(`${steps} steps with a root every ${m} need ${leafCount(steps, m)} roots, not ${stateRoots.length}`)
  return {
    version: 1,
    programHash,
    runtime,
    steps,
    ...(m !== 1 ? { rootEvery: m } : {}),
    stateRoots: [...stateRoots],
    proofRoot: proofRootOf(stateRoots),
    finalStateRoot: stateRoots[stateRoots.length - 1],
    checkpoints: [...checkpoints].sort((a, b) => a.step - b.step)
  }
}

const HEX64 = /^[0-9a-f]{64}$/

/**
 * Checks structure and the proof root; throws with a clear message. With
 * `rootEvery` (the program's m), also that the proof's spacing is the
 * program's: a proof of other spacing commits a tree of another depth
 * (proofDepth), whose leaves no dispute of the task could prove.
 */
export function validateProof (p: unknown, rootEvery?: number): ProofOfLearning {
  const q = p as ProofOfLearning
  if (typeof q !== 'object' || q === null || q.version !== POL_VERSION) throw new Error('not a version 1 proof-of-learning')
  if (!HEX64.test(String(q.programHash))) throw new Error('proof.programHash must be 64 hex digits')
  if (!Number.isInteger(q.steps) || q.steps < 0) throw new Error('proof.steps must be a non-negative integer')
  // m = 1 is written by omission only: one proof, one encoding
  if (q.rootEvery !== undefined && !(Number.isInteger(q.rootEvery) && q.rootEvery >= 2 && q.rootEvery <= 64)) throw new Error('proof.rootEvery must be an integer in [2, 64] (absent for 1)')
  const m = rootEveryOfProof(q)
  if (rootEvery !== undefined && m !== rootEvery) throw new Error(`proof.rootEvery is ${m}, the program's is ${rootEvery}: the proof commits roots at other steps than the task's`)
  const n = leafCount(q.steps, m)
  if (!Array.isArray(q.stateRoots) || q.stateRoots.length !== n) throw new Error(m === 1 ? 'proof.stateRoots must hold steps + 1 roots' : `proof.stateRoots must hold ⌈steps / ${m}⌉ + 1 = ${n} roots`)
  if (!q.stateRoots.every(r => HEX64.test(r))) throw new Error('proof.stateRoots must be 64-hex-digit roots')
  if (q.finalStateRoot !== q.stateRoots[n - 1]) throw new Error('proof.finalStateRoot is not the last state root')
  // a checkpoint is a committed state: a replay from it is checked against its root
  const committed = (s: unknown): boolean => Number.isInteger(s) && (s as number) >= 0 && (s as number) <= q.steps && ((s as number) % m === 0 || s === q.steps)
  if (!Array.isArray(q.checkpoints) || !q.checkpoints.every(c => committed(c.step) && HEX64.test(c.manifestHash))) throw new Error('malformed proof.checkpoints')
  if (proofRootOf(q.stateRoots) !== q.proofRoot) throw new Error('proof.proofRoot does not match the state roots')
  const d = q.divergence
  if (d !== undefined && !(typeof d === 'object' && d !== null && [d.entry, d.flat].every(x => Number.isInteger(x) && x >= 0 && x <= 0x7fffffff))) throw new Error('malformed proof.divergence')
  return q
}

/** The proof's state-root spacing m (1 when absent). */
export function rootEveryOfProof (p: Pick<ProofOfLearning, 'rootEvery'>): number {
  return p.rootEvery ?? 1
}

/** The committed root of the state after `step` (a committed step: a multiple of m, or the last). */
export function rootAtStep (p: ProofOfLearning, step: number): string {
  return p.stateRoots[leafOfStep(step, p.steps, rootEveryOfProof(p))]
}

/** The Merkle path of the root after committed step `step` (leaf step / m). */
export function proveStepRoot (p: ProofOfLearning, step: number): string[] {
  return merkleProof(p.stateRoots.map(fromHex), leafOfStep(step, p.steps, rootEveryOfProof(p))).map(toHex)
}

export function verifyStepRoot (proofRoot: string, step: number, root: string, siblings: readonly string[]): boolean {
  try {
    return verifyMerkleProof(fromHex(proofRoot), fromHex(root), step, siblings.map(fromHex))
  } catch { return false }
}

export function sameRoot (a: string, b: string): boolean {
  return bytesEqual(fromHex(a), fromHex(b))
}
