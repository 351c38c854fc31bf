import { sha256 } from '../commit/merkle.js'

// Truebit forced errors, drawn privately and proven afterwards (docs/disputes.md,
// "Forced errors"). The draw is an sr25519 VRF (schnorrkel) of the solver's key
// over a transcript the chain fixed when it selected the solver: task id ‖ the
// selection seed. Only the solver can compute it (it needs the secret key), the
// output is unique for the key and transcript (the solver cannot pick among
// outputs), and anyone holding the solver's public key can check the proof. So
// verifiers do not know which step is wrong, and the solver can prove — when a
// dispute at that step is ruled against it — that the error was ordered.
// Pure: the VRF verification is injected (the chain uses the wasm verifier).

/** schnorrkel signing context of the draw */
export const FORCED_ERROR_VRF_CONTEXT = new TextEncoder().encode('proofswarm/forced-error/v1')
/** a schnorrkel VRF pre-output (compressed Ristretto point) */
export const VRF_OUTPUT_BYTES = 32
/** a schnorrkel VRF proof (DLEQ: c, s) */
export const VRF_PROOF_BYTES = 64

/** (message, output ‖ proof, public key, context) → valid; must not throw */
export type VrfVerify = (message: Uint8Array, outputAndProof: Uint8Array, publicKey: Uint8Array, context: Uint8Array) => boolean

/** The VRF input: a domain tag, the task id (u64 little endian) and the 32-byte selection seed. */
export function forcedErrorTranscript (taskId: bigint | number, selectionSeed: Uint8Array): Uint8Array {
  if (selectionSeed.length !== 32) throw new Error('the selection seed must be 32 bytes')
  const tag = new TextEncoder().encode('proofswarm/forced-error/transcript')
  const id = new Uint8Array(8)
  new DataView(id.buffer).setBigUint64(0, BigInt(taskId), true)
  const out = new Uint8Array(tag.length + 8 + 32)
  out.set(tag, 0); out.set(id, tag.length); out.set(selectionSeed, tag.length + 8)
  return out
}

/**
 * The draw from a VRF output: with probability ppm/1e6 a forced error at the
 * returned on-chain step (the transition from state i to i+1, in [0, steps)),
 * otherwise null. The pre-output is hashed with a domain tag so the two
 * numbers are uniform. With a state root every m > 1 steps the draw picks a
 * segment j and the error is at its last transition, min((j+1)·m, steps) − 1,
 * so the forced post-state is a committed leaf and its exactness proof is
 * checked against proof_root as at m = 1 (where this is the same formula).
 */
export function forcedErrorFromOutput (output: Uint8Array, steps: number, ppm: number, rootEvery = 1): number | null {
  if (output.length !== VRF_OUTPUT_BYTES) throw new Error(`a VRF output is ${VRF_OUTPUT_BYTES} bytes`)
  if (steps <= 0 || ppm <= 0) return null
  const h = sha256(new TextEncoder().encode('proofswarm/forced-error/draw'), output)
  const dv = new DataView(h.buffer, h.byteOffset, h.byteLength)
  if (dv.getUint32(0, true) % 1_000_000 >= ppm) return null
  if (rootEvery === 1) return dv.getUint32(4, true) % steps
  const j = dv.getUint32(4, true) % Math.ceil(steps / rootEvery)
  return Math.min((j + 1) * rootEvery, steps) - 1
}

export interface RevealCheck {
  publicKey: Uint8Array
  taskId: bigint | number
  selectionSeed: Uint8Array
  steps: number
  ppm: number
  /** the task's state-root spacing m (absent = 1) */
  rootEvery?: number
  output: Uint8Array
  proof: Uint8Array
}

export type RevealResult = { ok: true, step: number | null } | { ok: false, reason: 'InvalidVrfProof' }

/** Checks a revealed draw: the proof must be the solver's VRF over the task's transcript; then the draw it implies. */
export function checkForcedErrorReveal (r: RevealCheck, verify: VrfVerify): RevealResult {
  if (r.output.length !== VRF_OUTPUT_BYTES || r.proof.length !== VRF_PROOF_BYTES || r.publicKey.length !== 32 || r.selectionSeed.length !== 32) return { ok: false, reason: 'InvalidVrfProof' }
  const both = new Uint8Array(VRF_OUTPUT_BYTES + VRF_PROOF_BYTES)
  both.set(r.output, 0); both.set(r.proof, VRF_OUTPUT_BYTES)
  let valid = false
  try { valid = verify(forcedErrorTranscript(r.taskId, r.selectionSeed), both, r.publicKey, FORCED_ERROR_VRF_CONTEXT) } catch { valid = false }
  if (!valid) return { ok: false, reason: 'InvalidVrfProof' }
  return { ok: true, step: forcedErrorFromOutput(r.output, r.steps, r.ppm, r.rootEvery) }
}
