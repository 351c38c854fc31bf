import { beforeAll, describe, expect, it } from 'vitest'
import { UNIT } from '../../../devnet/chain/dev-spec.js'
import { BlockBuilder } from '../../../devnet/chain/runtime/block-builder.js'
import type { Context } from '../../../devnet/chain/runtime/context.js'
import { Overlay } from '../../../devnet/chain/runtime/state.js'
import type { CallCodec, PlainCall, ValidTx } from '../../../devnet/chain/runtime/transaction.js'
import type { Runtime } from '../../../devnet/chain/runtime/executive.js'
import { executeBlock } from '../../../devnet/chain/block-authoring.js'
import { Harness } from './harness.js'

// An extrinsic runs in its own storage layer (block-builder.ts applyCall):
// a DispatchError fails it, and so must anything else it throws, a runtime
// bug included, or one call could fail the whole block. Only a mock reaches
// such a bug.

const H = (b: number): string => '0x' + b.toString(16).padStart(2, '0').repeat(32)
let h: Harness

beforeAll(async () => { h = await Harness.create() })

describe('an extrinsic that throws something other than a DispatchError', () => {
  it('fails that extrinsic (Other) with its writes and events dropped; the block and the next extrinsic go on', () => {
    const reader = { get: (k: string) => h.state.get(k) }
    const rt = h.rt
    // a bug in one call's handler, after it wrote and emitted: the only way to reach it is a mock
    const buggy = (ctx: Context, who: string, call: CallCodec | PlainCall): void => {
      const plain = 'callIndex' in call ? rt.plainCall(call) : call
      if (plain.name !== 'remark') { rt.dispatch(ctx, who, call); return }
      ctx.store.put('Arbitration', 'NextTaskId', undefined, 99n)
      ctx.emit('System', 'Remarked', { sender: who, hash: H(1) })
      throw new TypeError('a bug')
    }
    const b = new BlockBuilder({ types: rt.types, reference: rt.reference, dispatch: buggy, encodeEventRecord: e => rt.encodeEventRecord(e) },
      new Overlay(reader), { number: h.number + 1, parentHash: h.parentHash })
    const ok = h.call('Balances', 'transfer_keep_alive', { dest: { Id: h.accounts.Ferdie }, value: UNIT })
    expect(b.applyCall(h.accounts.Alice, h.call('System', 'remark', { remark: '0x00' }))).toBe('Other')
    expect(b.applyCall(h.accounts.Alice, ok)).toBeUndefined()
    const events = b.finalize().map(e => h.eventName(e.event))
    expect(events).toEqual(['System.ExtrinsicFailed', 'Balances.Transfer', 'System.ExtrinsicSuccess'])
    expect(b.ctx.store.get('Arbitration', 'NextTaskId')).toBe(0n)
  })
})

describe('a transaction whose application throws before its dispatch (a bug in the nonce bookkeeping)', () => {
  it('is dropped from the pool; the block is produced with the others', () => {
    const tx = (hash: string, who: string, nonce: number): ValidTx =>
      ({ hash, sender: h.accounts[who], nonce, bytes: new Uint8Array(), call: { pallet: 'System', name: 'remark', args: { remark: '0x00' } } })
    const rt = h.rt
    // only a mock reaches such a bug: the builder's apply throws for one transaction
    const buggy = {
      initializeBlock: (...a: Parameters<Runtime['initializeBlock']>) => {
        const b = rt.initializeBlock(...a)
        const apply = b.apply.bind(b)
        b.apply = t => { if (t.hash === '0xbad') throw new TypeError('a bug'); return apply(t) }
        return b
      }
    } as unknown as Runtime
    const reader = { get: (k: string) => h.state.get(k) }
    const env = { number: h.number + 1, parentHash: h.parentHash, randomness: h.author.sign(rt.previousRandomness(reader), h.number + 1) }
    const dropped: string[] = []
    const r = executeBlock(buggy, reader, env, [{ tx: tx('0xbad', 'Bob', 0) }, { tx: tx('0x900d', 'Alice', 0) }], 10, dropped)
    expect(dropped).toEqual(['0xbad'])
    expect(r.included.map(t => t.hash)).toEqual(['0x900d'])
    expect(r.events.map(e => h.eventName(e.event))).toContain('System.ExtrinsicSuccess')
  })
})
