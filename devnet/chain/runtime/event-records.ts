import { hexToU8a, u8aConcat } from '@polkadot/util'
import { variant, type Plain } from './codec.js'
import type { EventOut } from './context.js'
import type { RuntimeTypes } from './metadata.js'
import { u128Bytes, u32Bytes } from './fast-codec.js'
import { camel } from './call-table.js'

// SCALE encoding of the runtime's event records (what System.Events holds).

type FieldEncoder = (v: unknown) => Uint8Array
const HEX32 = /^0x[0-9a-fA-F]{64}$/

/** Encoders for event field types that occur on every transfer; undefined (anything unusual) → createType. */
const FAST_FIELDS: Record<string, (v: unknown) => Uint8Array | undefined> = {
  AccountId: v => typeof v === 'string' && HEX32.test(v) ? hexToU8a(v) : undefined,
  u128: v => typeof v === 'bigint' && v >= 0n && v < (1n << 128n) ? u128Bytes(v) : undefined,
  u32: v => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 0xffffffff ? u32Bytes(v) : undefined
}

/** frame_system::Phase: ApplyExtrinsic(u32) = 0, Finalization = 1, Initialization = 2. */
function encodePhase (p: Plain): Uint8Array | undefined {
  if (p === 'Finalization') return Uint8Array.of(1)
  if (p === 'Initialization') return Uint8Array.of(2)
  const [k, v] = variant(p)
  if (k === 'ApplyExtrinsic' && typeof v === 'number') return u8aConcat(Uint8Array.of(0), u32Bytes(v))
  return undefined
}

export class EventRecordEncoder {
  private eventCodecs: Map<string, { prefix: Uint8Array, fields: Array<[string, FieldEncoder]> }> | undefined

  constructor (private readonly types: RuntimeTypes) {}

  /**
   * EventRecord = Phase ++ pallet index ++ event index ++ fields ++ topics. Encoded
   * by hand: polkadot.js's registry maps RuntimeEvent to its GenericEvent, which
   * cannot be built from a nested object. Hot field types (accounts, balances)
   * have hand-written encoders; the rest go through createType, memoised by value.
   */
  encode (e: EventOut): Uint8Array {
    if (this.eventCodecs === undefined) {
      const codecs = new Map<string, { prefix: Uint8Array, fields: Array<[string, FieldEncoder]> }>()
      for (const p of this.types.pallets) {
        p.events.forEach((ev, i) => {
          codecs.set(`${p.name}.${ev.name}`, { prefix: Uint8Array.of(p.index, i), fields: ev.fields.map(([n, t]) => [camel(n as string), this.fieldEncoder(t)]) })
        })
      }
      this.eventCodecs = codecs
    }
    const [pallet, inner] = variant(e.event)
    const [name, fields] = variant(inner)
    const codec = this.eventCodecs.get(`${pallet}.${name}`)
    if (codec === undefined) throw new Error(`unknown event ${pallet}.${name}`)
    const f = fields as Record<string, unknown>
    return u8aConcat(
      encodePhase(e.phase) ?? this.types.registry.createType(this.types.lookupName('Phase'), e.phase).toU8a(),
      codec.prefix,
      ...codec.fields.map(([n, enc]) => enc(f[n])),
      Uint8Array.of(0)
    )
  }

  private fieldEncoder (expr: string): FieldEncoder {
    const fast = FAST_FIELDS[expr]
    const reg = this.types.registry
    const type = this.types.lookupName(expr)
    const memo = new Map<string, Uint8Array>()
    return (v: unknown) => {
      const quick = fast?.(v)
      if (quick !== undefined) return quick
      const k = JSON.stringify(v, (_k, x: unknown) => typeof x === 'bigint' ? `${x}n` : x)
      const hit = memo.get(k)
      if (hit !== undefined) return hit
      const out = reg.createType(type, v).toU8a()
      if (memo.size < 256) memo.set(k, out)
      return out
    }
  }
}
