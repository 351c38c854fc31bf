import { hexToU8a, u8aToHex } from '@polkadot/util'
import { randomAsU8a } from '@polkadot/util-crypto'
import { sr25519KeypairFromSeed, vrfSign } from '@polkadot/wasm-crypto'
import { RANDOMNESS_VRF_CONTEXT, randomnessTranscript } from '../../protocols/randomness.js'

// The dev chain's block author key for randomness: a fresh sr25519 key per
// chain, kept in the chain's own store and never served. Its VRF over the
// previous randomness and the block number is each block's randomness
// (protocols/randomness.ts); the public key is in the genesis state so anyone
// can check every block's VRF.

// The wasm schnorrkel (as the chain's verifier): @polkadot/util-crypto's
// sr25519VrfSign is pure JS and ~10x slower, once per block.
export class RandomnessAuthor {
  private readonly secret: Uint8Array
  private readonly public: Uint8Array

  /** needs @polkadot/wasm-crypto initialised (cryptoWaitReady) */
  private constructor (readonly seed: Uint8Array) {
    const kp = sr25519KeypairFromSeed(seed)
    this.secret = kp.slice(0, 64)
    this.public = kp.slice(64)
  }

  /** A new key from the system's CSPRNG. */
  static generate (): RandomnessAuthor { return new RandomnessAuthor(randomAsU8a(32)) }

  static fromSeed (seed: Uint8Array | string): RandomnessAuthor {
    const s = typeof seed === 'string' ? hexToU8a(seed) : seed
    if (s.length !== 32) throw new Error('a randomness author seed is 32 bytes')
    return new RandomnessAuthor(s)
  }

  get publicKey (): string { return u8aToHex(this.public) }

  /** Block `number`'s VRF over the previous randomness: pre-output ‖ proof (96 bytes), hex. */
  sign (previous: string, number: number): string {
    return u8aToHex(vrfSign(this.secret, RANDOMNESS_VRF_CONTEXT, randomnessTranscript(hexToU8a(previous), number), new Uint8Array()))
  }
}
