import { bytesEqual, fromHex, merkleProof, merkleRoot, toHex, verifyMerkleProof } from '../commit/merkle.js'

// Proof-of-learning (version 1). stateRoots[s] is the state root after s
// steps (s = 0 is the initial state), so a run of N steps has N+1 roots.
// proofRoot = merkleRoot(stateRoots as leaves) — the value committed on chain.
// A dispute's step level proves two adjacent leaves against proofRoot.

export const POL_VERSION = 1

export interface CheckpointRef { step: number, manifestHash: string, cid?: string }

export interface ProofOfLearning {
  version: 1
  programHash: string
  runtime: string
  steps: number
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

export function buildProof (programHash: string, runtime: string, stateRoots: readonly string[], checkpoints: readonly CheckpointRef[]): ProofOfLearning {
  if (stateRoots.length < 1) throw new Error('a proof needs at least the initial state root')
  return {
    version: 1,
    programHash,
    runtime,
    steps: stateRoots.length - 1,
    stateRoots: [...stateRoots],
    proofRoot: proofRootOf(stateRoots),
    finalStateRoot: stateRoots[stateRoots.length - 1],
    checkpoints: [...checkpoints].sort((a, b) => a.step - b.step)
  }
}

const HEX64 = /^[0-9a-f]{64}$/

/** Checks structure and the proof root; throws with a clear message. */
export function validateProof (p: unknown): ProofOfLearning {
  const q = p as ProofOfLearning
  if (typeof q !== 'object' || q === null || q.version !== POL_VERSION) throw new Error('not a version 1 proof-of-learning')
  if (!HEX64.test(String(q.programHash))) throw new Error('proof.programHash must be 64 hex digits')
  if (!Array.isArray(q.stateRoots) || q.stateRoots.length !== q.steps + 1) throw new Error('proof.stateRoots must hold steps + 1 roots')
  if (!q.stateRoots.every(r => HEX64.test(r))) throw new Error('proof.stateRoots must be 64-hex-digit roots')
  if (q.finalStateRoot !== q.stateRoots[q.steps]) throw new Error('proof.finalStateRoot is not the last state root')
  if (!Array.isArray(q.checkpoints) || !q.checkpoints.every(c => Number.isInteger(c.step) && c.step >= 0 && c.step <= q.steps && HEX64.test(c.manifestHash))) throw new Error('malformed proof.checkpoints')
  if (proofRootOf(q.stateRoots) !== q.proofRoot) throw new Error('proof.proofRoot does not match the state roots')
  const d = q.divergence
  if (d !== undefined && !(typeof d === 'object' && d !== null && [d.entry, d.flat].every(x => Number.isInteger(x) && x >= 0 && x <= 0x7fffffff))) throw new Error('malformed proof.divergence')
  return q
}

export function proveStepRoot (p: ProofOfLearning, step: number): string[] {
  return merkleProof(p.stateRoots.map(fromHex), step).map(toHex)
}

export function verifyStepRoot (proofRoot: string, step: number, root: string, siblings: readonly string[]): boolean {
  try {
    return verifyMerkleProof(fromHex(proofRoot), fromHex(root), step, siblings.map(fromHex))
  } catch { return false }
}

export function sameRoot (a: string, b: string): boolean {
  return bytesEqual(fromHex(a), fromHex(b))
}
