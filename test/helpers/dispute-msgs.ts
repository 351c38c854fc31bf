import { u8aToHex } from '@polkadot/util'
import { decode } from 'cborg'
import { ZERO_HASH } from '../../protocols/commit/merkle.js'
import { devPair } from '../../devnet/chain/dev-keys.js'
import { encodeSigned, moveHash, signMsg, type Body, type DisputeContext, type Msg, type Signed } from '../../protocols/dispute/index.js'

// Hand-made dispute messages for the pallet's rule tests: any body, signed by
// a dev account for any context, linked after any message.

/** `body` signed by //name in context `ctx`, as the message after `after` (none: seq 0). */
export function signed (name: string, ctx: DisputeContext, body: Body, after?: Signed, link?: Partial<Pick<Msg, 'seq' | 'prev'>>): Signed {
  const pair = devPair(`//${name}`)
  const seq = link?.seq ?? (after === undefined ? 0 : seqOf(after) + 1)
  const prev = link?.prev ?? (after === undefined ? ZERO_HASH : moveHash(after))
  return signMsg({ ...body, seq, prev } as Msg, pair.publicKey, m => pair.sign(m), ctx)
}

/** The seq field of a signed message (read from its CBOR without verifying). */
export const seqOf = (s: Signed): number => (decode(s.m) as { seq: number }).seq

export const hex = (s: Signed): string => u8aToHex(encodeSigned(s))
export const h32 = (b: number): Uint8Array => new Uint8Array(32).fill(b)
