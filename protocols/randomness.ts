import { sha256 } from './commit/merkle.js'
import type { VrfVerify } from './dispute/forced-error.js'

// The chain's randomness (docs/protocol.md, "Randomness"). Block n carries the
// block author's sr25519 VRF over the previous block's randomness and n; the
// randomness of block n is a hash of that VRF's pre-output. A VRF output is
// unique for a key and input, so the author cannot pick among values, and
// nobody without the author's secret key can compute it before the block is
// out. Seeding draws from a block hash instead let anyone who could simulate
// the next block (an empty one, say) know the draw before committing to it.
// Pure: the VRF verification is injected.

/** schnorrkel signing context of the block randomness VRF */
export const RANDOMNESS_VRF_CONTEXT = new TextEncoder().encode('proofswarm/randomness/v1')
/** engine id of the header's pre-runtime digest that carries the VRF output ‖ proof */
export const RANDOMNESS_ENGINE_ID = new TextEncoder().encode('psrn')
/** VRF pre-output ‖ proof */
export const RANDOMNESS_VRF_BYTES = 96

const u32le = (n: number): Uint8Array => { const b = new Uint8Array(4); new DataView(b.buffer).setUint32(0, n, true); return b }

/** The VRF input of block n: a domain tag, the previous randomness (32 bytes) and n (u32 LE). */
export function randomnessTranscript (previous: Uint8Array, blockNumber: number): Uint8Array {
  if (previous.length !== 32) throw new Error('the previous randomness must be 32 bytes')
  if (!Number.isInteger(blockNumber) || blockNumber < 1 || blockNumber > 0xffffffff) throw new Error(`block number ${blockNumber} out of range`)
  const tag = new TextEncoder().encode('proofswarm/randomness/transcript')
  const out = new Uint8Array(tag.length + 32 + 4)
  out.set(tag, 0); out.set(previous, tag.length); out.set(u32le(blockNumber), tag.length + 32)
  return out
}

/** The randomness of a block from its VRF pre-output. */
export function randomnessFromOutput (output: Uint8Array): Uint8Array {
  if (output.length !== 32) throw new Error('a VRF pre-output is 32 bytes')
  return sha256(new TextEncoder().encode('proofswarm/randomness/value'), output)
}

/** The randomness before block 1: fixed by the author's public key (genesis). */
export function genesisRandomness (authorKey: Uint8Array): Uint8Array {
  if (authorKey.length !== 32) throw new Error('an sr25519 public key is 32 bytes')
  return sha256(new TextEncoder().encode('proofswarm/randomness/genesis'), authorKey)
}

/**
 * Checks block n's VRF (pre-output ‖ proof) against the author's key and the
 * previous randomness; returns the block's randomness, or undefined when the
 * VRF is not the author's over this input.
 */
export function checkBlockRandomness (
  authorKey: Uint8Array, previous: Uint8Array, blockNumber: number, vrf: Uint8Array, verify: VrfVerify
): Uint8Array | undefined {
  if (vrf.length !== RANDOMNESS_VRF_BYTES || authorKey.length !== 32 || previous.length !== 32) return undefined
  let ok = false
  try { ok = verify(randomnessTranscript(previous, blockNumber), vrf, authorKey, RANDOMNESS_VRF_CONTEXT) } catch { ok = false }
  return ok ? randomnessFromOutput(vrf.subarray(0, 32)) : undefined
}
