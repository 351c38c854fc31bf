import { compactToU8a, u8aConcat } from '@polkadot/util'
import type { ReferenceSemantics } from './adjudication.js'
import { getAccount, putAccount } from './balances.js'
import type { Plain } from './codec.js'
import { Context, DispatchFail, type BlockEnv, type EventOut } from './context.js'
import type { RuntimeTypes } from './metadata.js'
import { Storage, type Overlay } from './state.js'
import type { ApplyOutcome, CallCodec, PlainCall, ValidTx } from './transaction.js'

// One block being executed: each extrinsic in its own storage layer, then
// the events written to System.Events.

/** What a block needs of the runtime (the Runtime implements it). */
export interface BlockRuntime {
  readonly types: RuntimeTypes
  readonly reference?: ReferenceSemantics
  dispatch: (ctx: Context, who: string, call: CallCodec | PlainCall) => void
  encodeEventRecord: (e: EventOut) => Uint8Array
}

export class BlockBuilder {
  readonly ctx: Context
  private index = 0
  constructor (readonly runtime: BlockRuntime, readonly state: Overlay, env: BlockEnv) {
    this.ctx = new Context(runtime.types, new Storage(runtime.types, state), env, [], runtime.reference)
  }

  /** Applies one validated extrinsic; a dispatch error still consumes the nonce. */
  apply (tx: ValidTx): ApplyOutcome {
    const ctx = this.ctx
    const acc = getAccount(ctx, tx.sender)
    if (tx.nonce > acc.nonce) return { included: false, reason: 'future' }
    if (tx.nonce < acc.nonce) return { included: false, reason: 'stale' }
    acc.nonce += 1
    putAccount(ctx, tx.sender, acc)
    const error = this.applyCall(tx.sender, tx.call)
    return { included: true, success: error === undefined }
  }

  /**
   * Dispatches one call as `sender` in its own storage layer and deposits
   * ExtrinsicSuccess/ExtrinsicFailed; returns the DispatchError if it failed.
   * (apply() checks and bumps the nonce first; tests call this directly.)
   */
  applyCall (sender: string, call: CallCodec | PlainCall): Plain | undefined {
    const ctx = this.ctx
    ctx.phase = { ApplyExtrinsic: this.index }
    this.index += 1
    const outer = ctx.store
    const layer = this.state.child()
    const mark = ctx.events.length
    ctx.store = new Storage(this.runtime.types, layer)
    let error: Plain | undefined
    try {
      this.runtime.dispatch(ctx, sender, call)
      layer.commit()
    } catch (e) {
      // a runtime bug must not halt block production: the call fails as Other
      error = e instanceof DispatchFail ? e.error : 'Other'
      ctx.events.length = mark
    } finally {
      ctx.store = outer
    }
    const info = { weight: { refTime: 0n, proofSize: 0n }, class: 'Normal', paysFee: 'Yes' }
    if (error === undefined) ctx.emit('System', 'ExtrinsicSuccess', { dispatchInfo: info })
    else ctx.emit('System', 'ExtrinsicFailed', { dispatchError: error, dispatchInfo: info })
    return error
  }

  /** Writes System.Events and returns the event records. */
  finalize (): EventOut[] {
    const ctx = this.ctx
    const encoded = ctx.events.map(e => this.runtime.encodeEventRecord(e))
    ctx.store.putRaw('System', 'Events', undefined, u8aConcat(compactToU8a(encoded.length), ...encoded))
    ctx.store.put('System', 'EventCount', undefined, encoded.length)
    return ctx.events
  }
}
