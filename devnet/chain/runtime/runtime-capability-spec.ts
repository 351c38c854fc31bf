import type { CallSpec, ErrorSpec, EventSpec, StorageSpec } from './spec-types.js'

// Runtime capabilities, part of the Arbitration pallet interface
// (runtime-capability.ts implements it; spec.ts appends these lists at the
// end of its own). Call index 86.

export const CAPABILITY_STORAGE: StorageSpec[] = [
  { name: 'NodeRuntimes', key: 'AccountId', hasher: 'Blake2_128Concat', type: 'Vec<Vec<u8>>', modifier: 'Default', docs: 'Per node: the runtimes it declared it runs at full speed among those that need a declaration (protocols/program/runtime.ts DECLARED_RUNTIMES: psk1, whose kernels are fast only with the native addon); empty: none. Removed when the node unregisters.' },
  { name: 'TaskRuntime', key: 'u64', hasher: 'Twox64Concat', type: 'Vec<u8>', modifier: 'Optional', docs: 'Per task whose program pins a runtime that needs a declaration: that runtime id (written by submit_task). Its solver is selected, its verifiers reserved and drawn only among nodes whose NodeRuntimes lists it. Absent: any node may be.' }
]

export const CAPABILITY_CALLS: CallSpec[] = [
  { name: 'set_runtimes', index: 86, args: [['runtimes', 'Vec<Vec<u8>>']], docs: 'A registered node declares the runtimes (UTF-8 ids) it runs at full speed among those that need a declaration, replacing its earlier declaration (empty: none). Only later selections, reservations and draws read it: a node already reserved or drawn for a task keeps that slot. Every runtime that needs none (tfjs-wasm@4.22.0-simd) is implied. UnknownRuntime: an id that is not a runtime needing a declaration, or given twice.' }
]

export const CAPABILITY_EVENTS: EventSpec[] = [
  { name: 'RuntimesDeclared', fields: [['who', 'AccountId'], ['runtimes', 'Vec<Vec<u8>>']], docs: 'The node\'s declared runtimes (NodeRuntimes) are now `runtimes`.' }
]

export const CAPABILITY_ERRORS: ErrorSpec[] = [
  { name: 'UnknownRuntime', docs: 'set_runtimes: a runtime id that needs no declaration or is unknown (protocols/program/runtime.ts DECLARED_RUNTIMES), or the same id twice.' }
]
