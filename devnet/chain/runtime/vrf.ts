import { sr25519VrfVerify } from '@polkadot/util-crypto'
import { isReady as wasmReady, vrfVerify as wasmVrfVerify } from '@polkadot/wasm-crypto'

/** schnorrkel VRF verification: the wasm verifier when loaded (~1 ms), the JS one otherwise (~35 ms). */
export function vrfVerify (message: Uint8Array, outputAndProof: Uint8Array, publicKey: Uint8Array, context: Uint8Array): boolean {
  try {
    return wasmReady()
      ? wasmVrfVerify(publicKey, context, message, new Uint8Array(), outputAndProof)
      : sr25519VrfVerify(message, outputAndProof, publicKey, context)
  } catch { return false }
}
