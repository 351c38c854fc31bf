import { Bool, Compact, Enum, Int, Null, Option, Raw, Struct, Text, Tuple, UInt, Vec, VecFixed } from '@polkadot/types'
import type { Codec } from '@polkadot/types/types'
import { u8aToHex } from '@polkadot/util'

// Plain values from SCALE codecs, shared by the dev chain runtime and the node's
// chain client (both sides of the wire must agree on them):
// byte-like (AccountId, H256, Vec<u8>, [u8;N]) → 0x-hex string; u8/u16/u32 →
// number; u64/u128 → bigint; bool; str; Option → value | null; Vec/tuple →
// array; struct → object with camelCase keys; enum → variant name (unit
// variants) or { Variant: value }. These are also accepted by createType.

export type Plain = null | boolean | number | bigint | string | Plain[] | { [k: string]: Plain }

export function toPlain (c: Codec): Plain {
  if (c instanceof Raw) return u8aToHex(c.toU8a(true))
  if (c instanceof Text) return c.toString()
  if (c instanceof Bool) return c.isTrue
  if (c instanceof UInt || c instanceof Int) return c.bitLength() > 32 ? c.toBigInt() : c.toNumber()
  if (c instanceof Compact) return toPlain(c.unwrap())
  if (c instanceof Option) return c.isSome ? toPlain(c.unwrap()) : null
  if (c instanceof Enum) {
    if (c.isBasic) return c.type
    return { [c.type]: toPlain(c.value) }
  }
  if (c instanceof Struct) {
    const o: Record<string, Plain> = {}
    for (const [k, v] of c.entries()) o[String(k)] = toPlain(v)
    return o
  }
  if (c instanceof Tuple || c instanceof Vec || c instanceof VecFixed) return (c as unknown as Codec[]).map(toPlain)
  if (c instanceof Null) return null
  throw new Error(`toPlain: unsupported codec ${c.toRawType()}`)
}

/** The single variant of a plain enum value: name and payload (null for unit variants). */
export function variant (v: Plain): [string, Plain] {
  if (typeof v === 'string') return [v, null]
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    const [k] = Object.keys(v)
    return [k, (v as Record<string, Plain>)[k]]
  }
  throw new TypeError('not an enum value')
}
