import { createPublicKey, verify, type KeyObject } from 'node:crypto'
import { generateKeyPair } from '@libp2p/crypto/keys'

// Every gossip message's author signature (StrictSign) is checked with
// @libp2p/crypto's Ed25519PublicKey.verify, which builds a node KeyObject
// from a JWK for each call (base64url of the key, a JWK parse, an OpenSSL key
// import) before the verification itself: that import was ~40 % of the check
// (docs/benchmarks.md, "Swarm scale: CPU per message"). The same check, with
// the KeyObject of each recently seen key kept: node's crypto.verify over the
// same bytes, key and signature, so exactly the same messages pass.

/** KeyObjects kept, least recently used dropped first: a swarm's authors, with room */
export const KEY_CACHE_SIZE = 1024

/** DER SubjectPublicKeyInfo of an Ed25519 key: this prefix, then the 32 raw bytes (RFC 8410) */
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex')

export class KeyObjectCache {
  private readonly keys = new Map<string, KeyObject>()
  constructor (readonly capacity = KEY_CACHE_SIZE) {}

  get size (): number { return this.keys.size }

  of (raw: Uint8Array): KeyObject {
    const id = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('base64')
    let key = this.keys.get(id)
    if (key !== undefined) {
      this.keys.delete(id) // re-inserted last: most recently used
    } else {
      key = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, raw]), format: 'der', type: 'spki' })
      if (this.keys.size >= this.capacity) this.keys.delete(this.keys.keys().next().value as string)
    }
    this.keys.set(id, key)
    return key
  }
}

interface Ed25519PublicKeyProto {
  raw: Uint8Array
  verify: (data: Uint8Array | { subarray: () => Uint8Array }, sig: Uint8Array, options?: { signal?: AbortSignal }) => boolean | Promise<boolean>
}

let patched: Promise<boolean> | undefined
export const keyCache = new KeyObjectCache()

/**
 * From now on, Ed25519 signature checks of this process's @libp2p/crypto use a
 * cached KeyObject per key. Anything but a 32-byte key with a 64-byte
 * signature goes to the original (which throws for those). Returns false,
 * changing nothing, if the class is not the one this was written for. Idempotent.
 */
export async function cacheEd25519Keys (): Promise<boolean> {
  patched ??= (async () => {
    // the class is not exported: the prototype of a key it made
    const proto = Object.getPrototypeOf((await generateKeyPair('Ed25519')).publicKey) as Ed25519PublicKeyProto
    const original = proto.verify
    if (typeof original !== 'function' || proto.constructor.name !== 'Ed25519PublicKey') return false
    proto.verify = function (this: Ed25519PublicKeyProto, data, sig, options) {
      if (!(this.raw instanceof Uint8Array) || this.raw.byteLength !== 32 || !(sig instanceof Uint8Array) || sig.byteLength !== 64) {
        return original.call(this, data, sig, options)
      }
      options?.signal?.throwIfAborted()
      return verify(null, data instanceof Uint8Array ? data : data.subarray(), keyCache.of(this.raw), sig)
    }
    return true
  })()
  return await patched
}
