import { isReady as wasmReady, sr25519Verify as wasmSr25519Verify } from '@polkadot/wasm-crypto'
import { ed25519Verify, secp256k1Verify, sr25519Verify } from '@polkadot/util-crypto'

// One extrinsic signature check, as a plain job: the host may run it inline or
// in a worker thread (devnet/chain/verify-pool.ts); the runtime only states
// what must be verified.

export type SignatureKind = 'Sr25519' | 'Ed25519' | 'Ecdsa'

export interface SignatureJob {
  kind: SignatureKind
  signature: Uint8Array
  /** the signed payload (already blake2-hashed when longer than 256 bytes) */
  message: Uint8Array
  publicKey: Uint8Array
}

/** A verifier: true iff the signature is valid. Must never throw. */
export type Verifier = (job: SignatureJob) => boolean

export const verifySignature: Verifier = j => {
  try {
    // the wasm verifier is ~50x faster than util-crypto 14's pure-JS one
    if (j.kind === 'Sr25519') return wasmReady() ? wasmSr25519Verify(j.signature, j.message, j.publicKey) : sr25519Verify(j.message, j.signature, j.publicKey)
    if (j.kind === 'Ed25519') return ed25519Verify(j.message, j.signature, j.publicKey)
    if (j.kind === 'Ecdsa') return secp256k1Verify(j.message, j.signature, j.publicKey, 'blake2')
  } catch {}
  return false
}
