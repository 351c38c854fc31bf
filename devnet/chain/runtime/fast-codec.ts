import type { AccountInfo } from './account-info.js'

// Hand-written SCALE codecs for the few values on the hot path of every
// transfer (System.Account, compact integers, event fields). polkadot.js's
// createType costs tens of microseconds per value and dominated block
// building; these are byte-for-byte the same encodings (checked against
// createType in test/unit/chain/fast-codec.test.ts).

const U128_MAX = (1n << 128n) - 1n

function writeU32 (out: Uint8Array, at: number, v: number): void {
  out[at] = v & 0xff
  out[at + 1] = (v >>> 8) & 0xff
  out[at + 2] = (v >>> 16) & 0xff
  out[at + 3] = (v >>> 24) & 0xff
}

function readU32 (b: Uint8Array, at: number): number {
  return (b[at] | (b[at + 1] << 8) | (b[at + 2] << 16) | (b[at + 3] << 24)) >>> 0
}

export function u128Bytes (v: bigint): Uint8Array {
  if (v < 0n || v > U128_MAX) throw new RangeError(`u128 out of range: ${v}`)
  const out = new Uint8Array(16)
  writeU128(out, 0, v)
  return out
}

function writeU128 (out: Uint8Array, at: number, v: bigint): void {
  if (v < 0n || v > U128_MAX) throw new RangeError(`u128 out of range: ${v}`)
  let lo = v & 0xffffffffffffffffn
  let hi = v >> 64n
  for (let i = 0; i < 8; i++) { out[at + i] = Number(lo & 0xffn); lo >>= 8n }
  for (let i = 8; i < 16; i++) { out[at + i] = Number(hi & 0xffn); hi >>= 8n }
}

function readU128 (b: Uint8Array, at: number): bigint {
  let v = 0n
  for (let i = 15; i >= 0; i--) v = (v << 8n) | BigInt(b[at + i])
  return v
}

export function u32Bytes (v: number): Uint8Array {
  if (!Number.isInteger(v) || v < 0 || v > 0xffffffff) throw new RangeError(`u32 out of range: ${v}`)
  const out = new Uint8Array(4)
  writeU32(out, 0, v)
  return out
}

/** frame_system::AccountInfo<u32, AccountData<u128>>: 4 × u32 then 4 × u128 = 80 bytes. */
export const ACCOUNT_INFO_BYTES = 80

export function encodeAccountInfo (a: AccountInfo): Uint8Array {
  const out = new Uint8Array(ACCOUNT_INFO_BYTES)
  for (const [i, v] of [a.nonce, a.consumers, a.providers, a.sufficients].entries()) {
    if (!Number.isInteger(v) || v < 0 || v > 0xffffffff) throw new RangeError(`AccountInfo u32 field out of range: ${v}`)
    writeU32(out, 4 * i, v)
  }
  // BigInt(): callers may hand plain numbers, as createType accepted them
  writeU128(out, 16, BigInt(a.data.free))
  writeU128(out, 32, BigInt(a.data.reserved))
  writeU128(out, 48, BigInt(a.data.frozen))
  writeU128(out, 64, BigInt(a.data.flags ?? 0n))
  return out
}

export function emptyAccountInfo (): AccountInfo {
  return { nonce: 0, consumers: 0, providers: 0, sufficients: 0, data: { free: 0n, reserved: 0n, frozen: 0n, flags: 0n } }
}

/** undefined if the bytes are not exactly one AccountInfo (the caller falls back to the generic codec). */
export function decodeAccountInfo (b: Uint8Array): AccountInfo | undefined {
  if (b.length !== ACCOUNT_INFO_BYTES) return undefined
  return {
    nonce: readU32(b, 0),
    consumers: readU32(b, 4),
    providers: readU32(b, 8),
    sufficients: readU32(b, 12),
    data: { free: readU128(b, 16), reserved: readU128(b, 32), frozen: readU128(b, 48), flags: readU128(b, 64) }
  }
}

/** SCALE compact integer at `at`: value and encoded length; undefined if truncated or non-canonical. */
export function readCompact (b: Uint8Array, at: number): { value: bigint, length: number } | undefined {
  if (at >= b.length) return undefined
  const mode = b[at] & 3
  if (mode === 0) return { value: BigInt(b[at] >> 2), length: 1 }
  if (mode === 1) {
    if (at + 2 > b.length) return undefined
    const v = (b[at] | (b[at + 1] << 8)) >> 2
    return v < 64 ? undefined : { value: BigInt(v), length: 2 }
  }
  if (mode === 2) {
    if (at + 4 > b.length) return undefined
    const v = readU32(b, at) >>> 2
    return v < 16384 ? undefined : { value: BigInt(v), length: 4 }
  }
  const n = (b[at] >> 2) + 4
  if (at + 1 + n > b.length || b[at + n] === 0) return undefined
  let v = 0n
  for (let i = n; i >= 1; i--) v = (v << 8n) | BigInt(b[at + i])
  return v < (1n << 30n) ? undefined : { value: v, length: 1 + n }
}
