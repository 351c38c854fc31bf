import { u8aToHex } from '@polkadot/util'
import type { Plain } from './codec.js'
import type { RuntimeTypes } from './metadata.js'
import type { Overlay, Storage } from './state.js'
import type { ReferenceSemantics } from './adjudication.js'

// What a dispatchable sees: typed storage, the block being built, and an event
// sink. Errors are thrown as DispatchFail carrying a sp_runtime::DispatchError.

export interface EventOut {
  phase: Plain
  event: Plain
}

export interface BlockEnv {
  number: number
  parentHash: string
  /** the author's VRF over the previous randomness and the number: pre-output ‖ proof, hex (96 bytes) */
  randomness?: string
}

export class DispatchFail extends Error {
  constructor (readonly error: Plain, message: string) {
    super(message)
    this.name = 'DispatchFail'
  }
}

export class Context {
  phase: Plain = 'Initialization'
  /** the block's own layer: every call's and task step's layer is a child of it */
  readonly blockState: Overlay
  constructor (
    readonly types: RuntimeTypes,
    public store: Storage,
    readonly block: BlockEnv,
    readonly events: EventOut[],
    readonly reference: ReferenceSemantics | undefined
  ) {
    this.blockState = store.state
  }

  get now (): number { return this.block.number }

  emit (pallet: string, name: string, fields: Record<string, unknown>): void {
    this.events.push({ phase: this.phase, event: { [pallet]: { [name]: fields } } as unknown as Plain })
  }

  /** Throws the module error `name` of `pallet` (decoded by polkadot.js findMetaError). */
  fail (pallet: string, name: string): never {
    const p = this.types.pallets.find(x => x.name === pallet)
    const index = p?.errors.findIndex(e => e.name === name) ?? -1
    if (p === undefined || index < 0) throw new Error(`unknown module error ${pallet}.${name}`)
    throw new DispatchFail({ Module: { index: p.index, error: u8aToHex(Uint8Array.of(index, 0, 0, 0)) } }, `${pallet}.${name}`)
  }

  ensure (cond: boolean, pallet: string, name: string): asserts cond {
    if (!cond) this.fail(pallet, name)
  }
}
