import { hexToU8a } from '@polkadot/util'
import { cryptoWaitReady } from '@polkadot/util-crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { RandomnessAuthor } from '../../../devnet/chain/randomness-author.js'
import { vrfVerify } from '../../../devnet/chain/runtime/vrf.js'
import { RANDOMNESS_VRF_CONTEXT, randomnessTranscript } from '../../../protocols/randomness.js'

// vrfVerify remembers its last verdicts: a remembered verdict must be the one
// for exactly those inputs, never another input's.

beforeAll(async () => { await cryptoWaitReady() })

describe('vrfVerify with remembered verdicts', () => {
  it('a valid VRF passes again and again; the same VRF over another input, by another key or with a flipped byte fails, before and after', () => {
    const author = RandomnessAuthor.fromSeed('0x' + '5a'.repeat(32))
    const other = RandomnessAuthor.fromSeed('0x' + '6b'.repeat(32))
    const prev = '0x' + '11'.repeat(32)
    const vrf = hexToU8a(author.sign(prev, 7))
    const msg = randomnessTranscript(hexToU8a(prev), 7)
    const key = hexToU8a(author.publicKey)
    const flipped = vrf.slice(); flipped[40] ^= 1
    for (let round = 0; round < 2; round++) {
      expect(vrfVerify(msg, vrf, key, RANDOMNESS_VRF_CONTEXT)).toBe(true)
      expect(vrfVerify(randomnessTranscript(hexToU8a(prev), 8), vrf, key, RANDOMNESS_VRF_CONTEXT)).toBe(false)
      expect(vrfVerify(msg, vrf, hexToU8a(other.publicKey), RANDOMNESS_VRF_CONTEXT)).toBe(false)
      expect(vrfVerify(msg, flipped, key, RANDOMNESS_VRF_CONTEXT)).toBe(false)
      expect(vrfVerify(msg, vrf, key, new TextEncoder().encode('another context'))).toBe(false)
    }
  })
})
