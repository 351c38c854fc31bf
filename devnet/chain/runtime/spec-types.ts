import type { Fields } from './types.js'

// The shapes of the runtime's declarative description (spec.ts), apart so that
// each pallet part (*-spec.ts) can describe itself without importing spec.ts.

export type Hasher = 'Blake2_128Concat' | 'Twox64Concat' | 'Identity'

export interface StorageSpec {
  name: string
  type: string
  /** map key type; absent for a plain value */
  key?: string
  hasher?: Hasher
  /** Default: a missing value reads as the type's zero value; Optional: as None */
  modifier: 'Default' | 'Optional'
  docs: string
}

export interface CallSpec { name: string, index: number, args: Fields, docs: string }
export interface EventSpec { name: string, fields: Fields, docs: string }
export interface ErrorSpec { name: string, docs: string }
export interface ConstantSpec { name: string, type: 'u16' | 'u32' | 'u64' | 'u128' | 'RuntimeVersion', docs: string, /** the value of a pallet constant (Config `Get<_>`); System/Balances take theirs from genesis */ value?: number | bigint }

export interface PalletSpec {
  name: string
  index: number
  storage: StorageSpec[]
  calls: CallSpec[]
  events: EventSpec[]
  errors: ErrorSpec[]
  constants: ConstantSpec[]
}
