import { Keyring } from '@polkadot/keyring'
import { u8aToHex } from '@polkadot/util'
import { cryptoWaitReady } from '@polkadot/util-crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { devPair } from '../../../devnet/chain/dev-keys.js'

// devPair derives dev accounts from one root pair of the dev phrase: it must
// give exactly the keys Keyring.addFromUri gives for the same URI.

beforeAll(async () => { await cryptoWaitReady() })

describe('devPair', () => {
  for (const type of ['sr25519', 'ed25519'] as const) {
    it(`${type}: the same key as Keyring.addFromUri for dev paths and other SURIs`, () => {
      const kr = new Keyring({ type })
      const uris = ['//Alice', '//Peer3', '//Bench0', '//Alice//stash', '//Alice///secret', '0x' + '5a'.repeat(32) + '//Bob']
      if (type === 'sr25519') uris.push('//Peer1/soft')
      for (const uri of uris) {
        const p = devPair(uri, type)
        expect(u8aToHex(p.publicKey), uri).toBe(u8aToHex(kr.addFromUri(uri).publicKey))
        expect(p.type).toBe(type)
        expect(p.address).toBe(kr.addFromUri(uri).address)
      }
    })
  }

  it('signs as the account: a signature verifies against the addFromUri key', () => {
    const msg = new TextEncoder().encode('proofswarm')
    expect(new Keyring({ type: 'sr25519' }).addFromUri('//Dave').verify(msg, devPair('//Dave').sign(msg), devPair('//Dave').publicKey)).toBe(true)
  })
})
