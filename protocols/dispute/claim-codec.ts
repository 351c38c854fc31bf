import { decode, encode } from 'cborg'
import type { Claim } from './claim-kinds.js'
import { reject } from './ruling.js'

// A claim's bytes on chain: CBOR, bounded before it is decoded.

export const CLAIM_VERSION = 1
export const MAX_CLAIM_BYTES = 64 * 1024

export function encodeClaim (c: Claim): Uint8Array {
  const strip = (v: unknown): unknown => {
    if (v instanceof Uint8Array || v === null || typeof v !== 'object') return v
    if (Array.isArray(v)) return v.map(strip)
    return Object.fromEntries(Object.entries(v).filter(([, x]) => x !== undefined).map(([k, x]) => [k, strip(x)]))
  }
  return encode(strip(c))
}

export function decodeClaim (bytes: Uint8Array): Claim {
  if (bytes.length > MAX_CLAIM_BYTES) reject('InvalidClaim', `claim of ${bytes.length} bytes exceeds ${MAX_CLAIM_BYTES}`)
  let c: Claim
  try { c = decode(bytes) as Claim } catch (e) { reject('InvalidClaim', `not CBOR: ${(e as Error).message}`) }
  if (typeof c !== 'object' || c === null || c.v !== CLAIM_VERSION) reject('InvalidClaim', 'not a version 1 claim')
  return c
}
