import { createPublicKey, randomBytes, verify } from 'node:crypto'
import { generateKeyPair, publicKeyFromRaw } from '@libp2p/crypto/keys'
import { describe, expect, it } from 'vitest'
import { cacheEd25519Keys, keyCache, KeyObjectCache } from '../../../node/p2p/ed25519-verify.js'

// The cached-key check must accept and refuse exactly what @libp2p/crypto's
// own Ed25519 check did (a key imported from a JWK for each check, then
// crypto.verify): the gossip signature (StrictSign) is what it guards.
const uncached = (sig: Uint8Array, msg: Uint8Array, raw: Uint8Array): boolean =>
  verify(null, msg, createPublicKey({ format: 'jwk', key: { crv: 'Ed25519', x: Buffer.from(raw).toString('base64url'), kty: 'OKP' } }), sig)

describe('Ed25519 checks with cached keys', () => {
  it('agree with the uncached check on valid, tampered and foreign signatures', async () => {
    const a = await generateKeyPair('Ed25519')
    const b = await generateKeyPair('Ed25519')
    const msg = randomBytes(200)
    const sig = await a.sign(msg)
    expect(await cacheEd25519Keys()).toBe(true)
    // a fresh key object from the raw bytes, as gossipsub makes one from each message's author id
    const pub = publicKeyFromRaw(a.publicKey.raw)
    const cases: Array<[Uint8Array, Uint8Array, typeof pub]> = []
    const flipped = Uint8Array.from(sig); flipped[5] ^= 1
    const otherMsg = Uint8Array.from(msg); otherMsg[0] ^= 0x80
    const sigS = Uint8Array.from(sig); sigS[63] |= 0xe0 // S out of range
    cases.push([msg, sig, pub], [msg, flipped, pub], [otherMsg, sig, pub], [msg, sig, b.publicKey], [msg, await b.sign(msg), pub], [msg, sigS, pub])
    for (let round = 0; round < 2; round++) { // second round: every key from the cache
      for (const [m, s, k] of cases) {
        expect(await k.verify(m, s)).toBe(uncached(s, m, k.raw))
      }
    }
    expect(await pub.verify(msg, sig)).toBe(true)
    expect(await pub.verify(msg, flipped)).toBe(false)
  })

  it('still refuses a signature of the wrong length, as before', async () => {
    await cacheEd25519Keys()
    const a = await generateKeyPair('Ed25519')
    const msg = randomBytes(32)
    const sig = await a.sign(msg)
    expect(() => a.publicKey.verify(msg, sig.subarray(0, 63))).toThrow()
  })

  it('keeps a bounded number of keys, the most recently used', async () => {
    const c = new KeyObjectCache(3)
    const keys = await Promise.all([1, 2, 3, 4].map(async () => (await generateKeyPair('Ed25519')).publicKey.raw))
    const k0 = c.of(keys[0])
    c.of(keys[1]); c.of(keys[2])
    expect(c.of(keys[0])).toBe(k0) // a hit, and now the most recent
    c.of(keys[3]) // evicts keys[1], the least recent
    expect(c.size).toBe(3)
    expect(c.of(keys[0])).toBe(k0)
    expect(keyCache.capacity).toBeGreaterThan(0)
  })
})
