import { hexToU8a, u8aConcat, u8aToHex } from '@polkadot/util'
import { blake2AsU8a } from '@polkadot/util-crypto'
import type { RuntimeTypes } from './runtime/metadata.js'

// System.Account is read by the pool on every admission and block, so its
// key and nonce are computed by hand instead of through the storage codec.

/** Storage key of System.Account(account): prefix ++ blake2_128(id) ++ id. */
export function accountStorageKey (types: RuntimeTypes, account: string): string {
  const info = types.storage('System', 'Account')
  const enc = hexToU8a(account)
  return u8aToHex(u8aConcat(info.prefix, blake2AsU8a(enc, 128), enc))
}

/** The account nonce (the first field of AccountInfo, a little-endian u32); 0 for an unknown account. */
export function accountNonce (raw: Uint8Array | undefined): number {
  if (raw === undefined) return 0
  return new DataView(raw.buffer, raw.byteOffset).getUint32(0, true)
}
