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
 * At most this many forced errors per task: the draw's positions. Several
 * independent ones, so a verifier that caught one never knows the rest of its
 * sample clean (docs/economics.md, "Forced errors: several per task"); few,
 * so the solver's marks and reveals stay small. The solver's jackpot does
 * not grow with them: J is split across the task's forced errors.
 */
export const FORCED_ERRORS_PER_DRAW = 4

/**
 * The draw from a VRF output: with probability ppm/1e6 the task has forced
 * errors, at the returned on-chain steps f (transitions f → f+1, ascending,
 * distinct, 1 to FORCED_ERRORS_PER_DRAW of them), otherwise none. The
 * pre-output is hashed with a domain tag so the numbers are uniform: the
 * first decides whether, each of the next FORCED_ERRORS_PER_DRAW picks one
 * position independently and uniformly (two equal picks are one forced
 * error), so where one forced error lies says nothing about where the others
 * do. Each forced post-state f + 1 is a committed leaf that is not a
 * checkpoint (forced-leaf.ts marks that leaf; a checkpoint's file must hold
 * the state its leaf commits): f + 1 is among the multiples of the root
 * spacing m below `steps` that are not multiples of `checkpointEvery`. None
 * (e.g. checkpointEvery = m): no forced error.
 */
export function forcedErrorsFromOutput (output: Uint8Array, steps: number, ppm: number, rootEvery: number, checkpointEvery: number): number[] {
  if (output.length !== VRF_OUTPUT_BYTES) throw new Error(`a VRF output is ${VRF_OUTPUT_BYTES} bytes`)
  if (steps <= 0 || ppm <= 0) return []
  const h = sha256(new TextEncoder().encode('proofswarm/forced-error/draw'), output)
  const dv = new DataView(h.buffer, h.byteOffset, h.byteLength)
  if (dv.getUint32(0, true) % 1_000_000 >= ppm) return []
  const room = forcedErrorRoom(steps, rootEvery, checkpointEvery)
  if (room === 0) return []
  // candidate k is the state i·m with i the k-th index in 1 … A not a multiple of q
  const q = checkpointEvery / gcd(rootEvery, checkpointEvery)
  const picked = new Set<number>()
  for (let j = 1; j <= FORCED_ERRORS_PER_DRAW; j++) {
    const k = dv.getUint32(4 * j, true) % room
    const i = k + Math.floor(k / (q - 1)) + 1
    picked.add(i * rootEvery - 1)
  }
  return [...picked].sort((a, b) => a - b)
}

/** The first of the draw's forced steps (forcedErrorsFromOutput), or null when it orders none. */
export function forcedErrorFromOutput (output: Uint8Array, steps: number, ppm: number, rootEvery: number, checkpointEvery: number): number | null {
  return forcedErrorsFromOutput(output, steps, ppm, rootEvery, checkpointEvery)[0] ?? null
}

const gcd = (a: number, b: number): number => b === 0 ? a : gcd(b, a % b)

/**
 * How many leaves a forced error may mark: committed states s = i·m with
 * 0 < s < steps that are not checkpoints (s mod checkpointEvery ≠ 0). The
 * state i·m is a checkpoint iff q = checkpointEvery / gcd(m, checkpointEvery) divides i.
 */
export function forcedErrorRoom (steps: number, rootEvery: number, checkpointEvery: number): number {
  if (!Number.isInteger(rootEvery) || rootEvery < 1 || !Number.isInteger(checkpointEvery) || checkpointEvery < 1 || steps < 2) return 0
  const a = Math.floor((steps - 1) / rootEvery)
  const q = checkpointEvery / gcd(rootEvery, checkpointEvery)
  return q === 1 ? 0 : a - Math.floor(a / q)
}

export interface RevealCheck {
  publicKey: Uint8Array
  taskId: bigint | number
  selectionSeed: Uint8Array
  steps: number
  ppm: number
  /** the task's state-root spacing m */
  rootEvery: number
  /** the task's checkpoint spacing (a forced error never marks a checkpoint) */
  checkpointEvery: number
  output: Uint8Array
  proof: Uint8Array
}

/** steps: the forced steps the draw ordered, ascending (none: empty) */
export type RevealResult = { ok: true, steps: number[] } | { ok: false, reason: 'InvalidVrfProof' }

/** Checks a revealed draw: the proof must be the solver's VRF over the task's transcript; then the draw it implies. */
export function checkForcedErrorReveal (r: RevealCheck, verify: VrfVerify): RevealResult {
  if (r.output.length !== VRF_OUTPUT_BYTES || r.proof.length !== VRF_PROOF_BYTES || r.publicKey.length !== 32 || r.selectionSeed.length !== 32) return { ok: false, reason: 'InvalidVrfProof' }
  const both = new Uint8Array(VRF_OUTPUT_BYTES + VRF_PROOF_BYTES)
  both.set(r.output, 0); both.set(r.proof, VRF_OUTPUT_BYTES)
  let valid = false
  try { valid = verify(forcedErrorTranscript(r.taskId, r.selectionSeed), both, r.publicKey, FORCED_ERROR_VRF_CONTEXT) } catch { valid = false }
  if (!valid) return { ok: false, reason: 'InvalidVrfProof' }
  return { ok: true, steps: forcedErrorsFromOutput(r.output, r.steps, r.ppm, r.rootEvery, r.checkpointEvery) }
}
