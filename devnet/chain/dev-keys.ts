import { DEV_PHRASE, Keyring } from '@polkadot/keyring'
import type { KeyringPair } from '@polkadot/keyring/types'

// A dev account's key from its URI (//Alice). Keyring.addFromUri runs the dev
// phrase through PBKDF2 (2048 rounds) for every URI; here the phrase's root
// pair is made once per key type and each path derived from it: the same keys,
// ~40× faster (a dev genesis derives 14 accounts, tests many more).

const roots = new Map<string, KeyringPair>()

/** The pair of `uri`: a dev path (//Alice, //Peer1//stash) from the dev phrase; any other SURI (a phrase, a seed, a ///password) as Keyring.addFromUri makes it. Needs cryptoWaitReady. */
export function devPair (uri: string, type: 'sr25519' | 'ed25519' = 'sr25519'): KeyringPair {
  if (!uri.startsWith('//') || uri.includes('///')) return new Keyring({ type }).addFromUri(uri)
  let root = roots.get(type)
  if (root === undefined) {
    root = new Keyring({ type }).addFromUri(DEV_PHRASE)
    roots.set(type, root)
  }
  return root.derive(uri)
}
