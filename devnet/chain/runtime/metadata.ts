import { Metadata, TypeRegistry } from '@polkadot/types'
import { u8aConcat, u8aToHex } from '@polkadot/util'
import { blake2AsU8a, xxhashAsU8a } from '@polkadot/util-crypto'
import { NAMED_TYPES, PALLETS, type Hasher, type PalletSpec, type StorageSpec } from './spec.js'
import { TypeBuilder, type NamedTypes } from './types.js'
import { encodeRuntimeVersion } from './runtime-version.js'

// Generates metadata V14 from the declarative description and a registry
// loaded with it. Pure: the result depends only on the spec and constants.

export interface RuntimeConstants {
  blockHashCount: number
  ss58Prefix: number
  existentialDeposit: bigint
}

export interface StorageItemInfo {
  pallet: string
  spec: StorageSpec
  prefix: Uint8Array
  keyType?: string
  valueType: string
}

export interface RuntimeTypes {
  registry: TypeRegistry
  metadata: Metadata
  metadataHex: string
  /** lookup type name (usable in registry.createType) of a type expression */
  lookupName: (expr: string) => string
  storage: (pallet: string, item: string) => StorageItemInfo
  pallets: PalletSpec[]
  constants: RuntimeConstants
}

const SIGNED_EXTENSIONS: Array<[string, string, string]> = [
  ['CheckNonZeroSender', 'CheckNonZeroSender', '()'],
  ['CheckSpecVersion', 'CheckSpecVersion', 'u32'],
  ['CheckTxVersion', 'CheckTxVersion', 'u32'],
  ['CheckGenesis', 'CheckGenesis', 'H256'],
  ['CheckMortality', 'CheckMortality', 'H256'],
  ['CheckNonce', 'CheckNonce', '()'],
  ['CheckWeight', 'CheckWeight', '()'],
  ['ChargeTransactionPayment', 'ChargeTransactionPayment', '()']
]

function variantsOf (p: PalletSpec, what: 'calls' | 'events' | 'errors'): Array<{ name: string, index: number, fields: Array<[string | null, string]>, docs: string[] }> {
  if (what === 'calls') return p.calls.map(c => ({ name: c.name, index: c.index, fields: c.args, docs: [c.docs] }))
  if (what === 'events') return p.events.map((e, i) => ({ name: e.name, index: i, fields: e.fields, docs: [e.docs] }))
  return p.errors.map((e, i) => ({ name: e.name, index: i, fields: [], docs: [e.docs] }))
}

function encodeConstant (type: string, value: bigint | number): string {
  if (type === 'RuntimeVersion') return u8aToHex(encodeRuntimeVersion())
  const bytes = type === 'u16' ? 2 : type === 'u32' ? 4 : type === 'u64' ? 8 : 16
  const out = new Uint8Array(bytes)
  let v = BigInt(value)
  for (let i = 0; i < bytes; i++) { out[i] = Number(v & 0xffn); v >>= 8n }
  return u8aToHex(out)
}

export function storagePrefix (pallet: string, item: string): Uint8Array {
  return u8aConcat(xxhashAsU8a(pallet, 128), xxhashAsU8a(item, 128))
}

export function hashKey (hasher: Hasher, encoded: Uint8Array): Uint8Array {
  if (hasher === 'Blake2_128Concat') return u8aConcat(blake2AsU8a(encoded, 128), encoded)
  if (hasher === 'Twox64Concat') return u8aConcat(xxhashAsU8a(encoded, 64), encoded)
  return encoded
}

export function buildRuntimeTypes (constants: RuntimeConstants, pallets: PalletSpec[] = PALLETS): RuntimeTypes {
  const named: NamedTypes = { ...NAMED_TYPES }
  // pallet enums and the outer RuntimeCall/RuntimeEvent enums come from the pallet list
  const palletType = (p: PalletSpec, what: 'calls' | 'events' | 'errors'): string => {
    const suffix = what === 'calls' ? 'Call' : what === 'events' ? 'Event' : 'Error'
    const name = `${p.name}${suffix}`
    const crate = p.name === 'System' ? 'frame_system' : `pallet_${p.name.toLowerCase()}`
    named[name] = { path: [crate, 'pallet', suffix], variants: variantsOf(p, what) }
    return name
  }
  named.RuntimeCall = { path: ['proofswarm_runtime', 'RuntimeCall'], variants: pallets.filter(p => p.calls.length > 0).map(p => ({ name: p.name, index: p.index, fields: [[null, palletType(p, 'calls')]] })) }
  named.RuntimeEvent = { path: ['proofswarm_runtime', 'RuntimeEvent'], variants: pallets.filter(p => p.events.length > 0).map(p => ({ name: p.name, index: p.index, fields: [[null, palletType(p, 'events')]] })) }
  for (const p of pallets) if (p.errors.length > 0) palletType(p, 'errors')

  const tb = new TypeBuilder(named)
  const constValues: Record<string, Record<string, bigint | number>> = {
    System: { BlockHashCount: constants.blockHashCount, SS58Prefix: constants.ss58Prefix },
    Balances: { ExistentialDeposit: constants.existentialDeposit }
  }
  const build = (fallbacks: Map<string, string>): unknown => ({
    magicNumber: 0x6174656d,
    metadata: {
      v14: {
        pallets: pallets.map(p => ({
          name: p.name,
          index: p.index,
          storage: p.storage.length === 0
            ? null
            : {
                prefix: p.name,
                items: p.storage.map(s => ({
                  name: s.name,
                  modifier: s.modifier,
                  type: s.key === undefined
                    ? { Plain: tb.id(s.type) }
                    : { Map: { hashers: [s.hasher ?? 'Blake2_128Concat'], key: tb.id(s.key), value: tb.id(s.type) } },
                  fallback: fallbacks.get(`${p.name}.${s.name}`) ?? '0x00',
                  docs: [s.docs]
                }))
              },
          calls: p.calls.length > 0 ? { type: tb.id(`${p.name}Call`) } : null,
          events: p.events.length > 0 ? { type: tb.id(`${p.name}Event`) } : null,
          constants: p.constants.map(
            c => ({ name: c.name, type: tb.id(c.type), value: encodeConstant(c.type, constValues[p.name]?.[c.name] ?? c.value ?? 0), docs: [c.docs] })
          ),
          errors: p.errors.length > 0 ? { type: tb.id(`${p.name}Error`) } : null
        })),
        extrinsic: {
          type: tb.id('UncheckedExtrinsic'),
          version: 4,
          signedExtensions: SIGNED_EXTENSIONS.map(([identifier, ty, add]) => ({ identifier, type: tb.id(ty), additionalSigned: tb.id(add) }))
        },
        type: tb.id('Runtime'),
        lookup: { types: tb.types }
      }
    }
  })
  // Pass 1 builds the type table; pass 2 fills Default fallbacks with each
  // type's encoded zero value, which needs a registry that knows the types.
  const r1 = new TypeRegistry()
  // type ids are assigned while building, so build twice to freeze the table first
  build(new Map())
  const m1 = new Metadata(r1, build(new Map()) as never)
  r1.setMetadata(m1)
  const fallbacks = new Map<string, string>()
  for (const p of pallets) {
    for (const s of p.storage) {
      if (s.modifier === 'Default') fallbacks.set(`${p.name}.${s.name}`, (r1.createType(r1.createLookupType(tb.id(s.type))) as { toHex: () => string }).toHex())
    }
  }
  const registry = new TypeRegistry()
  const metadata = new Metadata(registry, build(fallbacks) as never)
  registry.setMetadata(metadata)
  const infos = new Map<string, StorageItemInfo>()
  for (const p of pallets) {
    for (const s of p.storage) {
      infos.set(`${p.name}.${s.name}`, {
        pallet: p.name,
        spec: s,
        prefix: storagePrefix(p.name, s.name),
        keyType: s.key === undefined ? undefined : registry.createLookupType(tb.id(s.key)),
        valueType: registry.createLookupType(tb.id(s.type))
      })
    }
  }
  return {
    registry,
    metadata,
    metadataHex: metadata.toHex(),
    lookupName: (expr: string) => registry.createLookupType(tb.id(expr)),
    storage: (pallet, item) => {
      const i = infos.get(`${pallet}.${item}`)
      if (i === undefined) throw new Error(`unknown storage item ${pallet}.${item}`)
      return i
    },
    pallets,
    constants
  }
}
