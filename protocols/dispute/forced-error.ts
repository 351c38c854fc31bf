import { sha256 } from '../commit/merkle.js'

// Truebit forced errors, drawn privately and proven afterwards (docs/disputes.md,
// "Forced errors"). The draw is an sr25519 VRF (schnorrkel) of the solver's key
// over transcripts the chain fixed when it selected the solver: task id ‖ the
// selection seed ‖ pick, one VRF per pick (up to FORCED_ERRORS_PER_DRAW forced
// errors, each revealed on its own). Only the solver can compute it (it needs the secret key), the
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

/**
 * At most this many forced errors per task: the draw's picks. Several
 * independent ones, so a verifier that caught one never knows the rest of its
 * sample clean (docs/economics.md, "Forced errors: several per task"); few,
 * so the solver's marks and reveals stay small. The solver's jackpot does
 * not grow with them: J is split across the task's forced errors.
 */
export const FORCED_ERRORS_PER_DRAW = 4

/**
 * The VRF input of pick `pick` (1 … FORCED_ERRORS_PER_DRAW): a domain tag,
 * the task id (u64 little endian), the 32-byte selection seed and the pick.
 * One VRF per pick, so revealing one forced step (after a ruling, inside the
 * challenge window) reveals nothing about the others.
 */
export function forcedErrorTranscript (taskId: bigint | number, selectionSeed: Uint8Array, pick: number): Uint8Array {
  if (selectionSeed.length !== 32) throw new Error('the selection seed must be 32 bytes')
  if (!Number.isInteger(pick) || pick < 1 || pick > FORCED_ERRORS_PER_DRAW) throw new Error(`a pick is 1 … ${FORCED_ERRORS_PER_DRAW}`)
  const tag = new TextEncoder().encode('proofswarm/forced-error/transcript')
  const id = new Uint8Array(8)
  new DataView(id.buffer).setBigUint64(0, BigInt(taskId), true)
  const out = new Uint8Array(tag.length + 8 + 32 + 1)
  out.set(tag, 0); out.set(id, tag.length); out.set(selectionSeed, tag.length + 8); out[tag.length + 40] = pick
  return out
}

/**
 * One pick of the draw from its VRF output: with probability ppm/1e6 a
 * forced error at the returned on-chain step f (the transition from state f
 * to f+1, in [0, steps)), otherwise null. The pre-output is hashed with a
 * domain tag so the two numbers are uniform. The forced post-state f + 1 is a
 * committed leaf that is not a checkpoint (forced-leaf.ts marks that leaf; a
 * checkpoint's file must hold the state its leaf commits): f + 1 is uniform
 * among the multiples of the root spacing m below `steps` that are not
 * multiples of `checkpointEvery`. None (e.g. checkpointEvery = m): no forced error.
 */
export function forcedErrorFromOutput (output: Uint8Array, steps: number, ppm: number, rootEvery: number, checkpointEvery: number): number | null {
  if (output.length !== VRF_OUTPUT_BYTES) throw new Error(`a VRF output is ${VRF_OUTPUT_BYTES} bytes`)
  if (steps <= 0 || ppm <= 0) return null
  const h = sha256(new TextEncoder().encode('proofswarm/forced-error/draw'), output)
  const dv = new DataView(h.buffer, h.byteOffset, h.byteLength)
  if (dv.getUint32(0, true) % 1_000_000 >= ppm) return null
  const room = forcedErrorRoom(steps, rootEvery, checkpointEvery)
  if (room === 0) return null
  // candidate k is the state i·m with i the k-th index in 1 … A not a multiple of q
  const q = checkpointEvery / gcd(rootEvery, checkpointEvery)
  const k = dv.getUint32(4, true) % room
  const i = k + Math.floor(k / (q - 1)) + 1
  return i * rootEvery - 1
}

/**
 * The draw: its picks' outputs (FORCED_ERRORS_PER_DRAW VRF outputs, pick 1
 * first), each a forced error with probability ppm/1e6 at a uniform markable
 * step, independently of the others (forcedErrorFromOutput); the forced steps,
 * ascending, two equal picks one forced error: 0 to FORCED_ERRORS_PER_DRAW of them.
 */
export function forcedErrorsFromOutputs (outputs: readonly Uint8Array[], steps: number, ppm: number, rootEvery: number, checkpointEvery: number): number[] {
  if (outputs.length !== FORCED_ERRORS_PER_DRAW) throw new Error(`a draw is ${FORCED_ERRORS_PER_DRAW} VRF outputs`)
  const picked = new Set<number>()
  for (const o of outputs) {
    const f = forcedErrorFromOutput(o, steps, ppm, rootEvery, checkpointEvery)
    if (f !== null) picked.add(f)
  }
  return [...picked].sort((a, b) => a - b)
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

/** pick: which of the draw's picks the VRF is (1 …); step: the forced step it orders, or null */
export type RevealResult = { ok: true, pick: number, step: number | null } | { ok: false, reason: 'InvalidVrfProof' }

/**
 * Checks one revealed pick: the proof must be the solver's VRF over the
 * transcript of one of the task's picks (each is tried); then the step that
 * pick orders.
 */
export function checkForcedErrorReveal (r: RevealCheck, verify: VrfVerify): RevealResult {
  if (r.output.length !== VRF_OUTPUT_BYTES || r.proof.length !== VRF_PROOF_BYTES || r.publicKey.length !== 32 || r.selectionSeed.length !== 32) return { ok: false, reason: 'InvalidVrfProof' }
  const both = new Uint8Array(VRF_OUTPUT_BYTES + VRF_PROOF_BYTES)
  both.set(r.output, 0); both.set(r.proof, VRF_OUTPUT_BYTES)
  for (let pick = 1; pick <= FORCED_ERRORS_PER_DRAW; pick++) {
    let valid = false
    try { valid = verify(forcedErrorTranscript(r.taskId, r.selectionSeed, pick), both, r.publicKey, FORCED_ERROR_VRF_CONTEXT) } catch { valid = false }
    if (valid) return { ok: true, pick, step: forcedErrorFromOutput(r.output, r.steps, r.ppm, r.rootEvery, r.checkpointEvery) }
  }
  return { ok: false, reason: 'InvalidVrfProof' }
}

/**
 * Checks a revealed draw (reveal_draw): every pick's VRF, pick 1 first, each
 * the solver's over its own transcript; then the forced steps they order.
 */
export function checkDrawReveal (
  r: Omit<RevealCheck, 'output' | 'proof'> & { outputs: readonly Uint8Array[], proofs: readonly Uint8Array[] }, verify: VrfVerify
): { ok: true, steps: number[] } | { ok: false, reason: 'InvalidVrfProof' } {
  if (r.outputs.length !== FORCED_ERRORS_PER_DRAW || r.proofs.length !== FORCED_ERRORS_PER_DRAW) return { ok: false, reason: 'InvalidVrfProof' }
  for (let i = 0; i < FORCED_ERRORS_PER_DRAW; i++) {
    const one = checkForcedErrorReveal({ ...r, output: r.outputs[i], proof: r.proofs[i] }, verify)
    if (!one.ok || one.pick !== i + 1) return { ok: false, reason: 'InvalidVrfProof' }
  }
  return { ok: true, steps: forcedErrorsFromOutputs(r.outputs, r.steps, r.ppm, r.rootEvery, r.checkpointEvery) }
}
