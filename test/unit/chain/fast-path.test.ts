import { Keyring } from '@polkadot/keyring'
import { u8aToHex } from '@polkadot/util'
import { cryptoWaitReady } from '@polkadot/util-crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { devGenesis } from '../../../devnet/chain/dev-spec.js'
import { toPlain } from '../../../devnet/chain/runtime/codec.js'
import { Runtime, type DecodedTx, type ValidationEnv } from '../../../devnet/chain/runtime/executive.js'
import { decodeAccountInfo, encodeAccountInfo, readCompact } from '../../../devnet/chain/runtime/fast-codec.js'
import { verifySignature } from '../../../devnet/chain/runtime/signature.js'
import type { AccountInfo } from '../../../devnet/chain/runtime/balances.js'

// The hand-written codecs of the transfer hot path must agree byte for byte
// with polkadot.js's: they are checked here against the registry's codecs.

let rt: Runtime
const kr = new Keyring({ type: 'sr25519' })
const hashes = Array.from({ length: 300 }, (_, i) => '0x' + (i % 256).toString(16).padStart(2, '0').repeat(32))
const env = (number: number): ValidationEnv => ({ number, genesisHash: hashes[0], blockHash: n => n < number ? hashes[n] : undefined })

beforeAll(async () => {
  await cryptoWaitReady()
  rt = new Runtime(await devGenesis({}))
})

function signed (call: { callIndex: [number, number], args: Record<string, unknown> }, opts: { nonce: number, era?: unknown, blockHash?: string, tip?: bigint, who?: string, type?: 'sr25519' | 'ed25519' }): Uint8Array {
  const reg = rt.types.registry
  const ext = reg.createType('Extrinsic', reg.createType('Call', call))
  const pair = new Keyring({ type: opts.type ?? 'sr25519' }).addFromUri(`//${opts.who ?? 'Alice'}`)
  ext.sign(pair, {
    nonce: opts.nonce, era: opts.era as never, tip: opts.tip, blockHash: opts.blockHash ?? hashes[0],
    genesisHash: hashes[0], runtimeVersion: { specVersion: 1, transactionVersion: 1 } as never
  })
  return ext.toU8a()
}

const pallet = (name: string): number => rt.types.pallets.find(p => p.name === name)?.index as number
const bob = (): string => kr.addFromUri('//Bob').address

function same (fast: DecodedTx | undefined, slow: DecodedTx): void {
  expect(fast).toBeDefined()
  const f = fast as DecodedTx
  expect(f.hash).toBe(slow.hash)
  expect(f.sender).toBe(slow.sender)
  expect(f.nonce).toBe(slow.nonce)
  expect(f.death).toBe(slow.death)
  expect(f.call).toEqual(slow.call)
  expect(f.signature.kind).toBe(slow.signature.kind)
  expect(u8aToHex(f.signature.message)).toBe(u8aToHex(slow.signature.message))
  expect(u8aToHex(f.signature.signature)).toBe(u8aToHex(slow.signature.signature))
  expect(u8aToHex(f.signature.publicKey)).toBe(u8aToHex(slow.signature.publicKey))
  expect(verifySignature(f.signature)).toBe(true)
}

describe('chain fast path: codecs', () => {
  it('encodes and decodes AccountInfo exactly like the registry', () => {
    const reg = rt.types.registry
    const type = rt.types.storage('System', 'Account').valueType
    const cases: AccountInfo[] = [
      { nonce: 0, consumers: 0, providers: 0, sufficients: 0, data: { free: 0n, reserved: 0n, frozen: 0n, flags: 0n } },
      {
        nonce: 4294967295, consumers: 7, providers: 1, sufficients: 65536,
        data: { free: (1n << 128n) - 1n, reserved: 123456789012345678901234567890n, frozen: 1n, flags: 1n << 127n }
      }
    ]
    for (const a of cases) {
      const slow = reg.createType(type, a).toU8a()
      expect(u8aToHex(encodeAccountInfo(a))).toBe(u8aToHex(slow))
      expect(decodeAccountInfo(slow)).toEqual(toPlain(reg.createType(type, slow)))
    }
    expect(decodeAccountInfo(new Uint8Array(79))).toBeUndefined()
    expect(() => encodeAccountInfo({ ...cases[0], nonce: -1 })).toThrow(RangeError)
    expect(() => encodeAccountInfo({ ...cases[0], data: { ...cases[0].data, free: 1n << 128n } })).toThrow(RangeError)
  })

  it('reads SCALE compact integers and refuses truncated or non-canonical ones', () => {
    const reg = rt.types.registry
    for (const v of [0n, 63n, 64n, 16383n, 16384n, (1n << 30n) - 1n, 1n << 30n, (1n << 64n) + 5n, (1n << 128n) - 1n]) {
      const enc = reg.createType('Compact<u128>', v).toU8a()
      expect(readCompact(enc, 0)).toEqual({ value: v, length: enc.length })
      if (enc.length > 1) expect(readCompact(enc.subarray(0, enc.length - 1), 0)).toBeUndefined()
    }
    expect(readCompact(Uint8Array.of(0x01, 0x00), 0)).toBeUndefined() // 0 in two-byte mode
    expect(readCompact(new Uint8Array(0), 0)).toBeUndefined()
  })
})

describe('chain fast path: extrinsic decoding', () => {
  it('parses transfers (immortal, mortal, with tip, both variants) exactly as the polkadot.js path does', () => {
    const b = pallet('Balances')
    const txs = [
      signed({ callIndex: [b, 3], args: { dest: { Id: bob() }, value: 10n ** 12n } }, { nonce: 0, era: 0 }),
      signed({ callIndex: [b, 0], args: { dest: { Id: bob() }, value: 1n } }, { nonce: 70000, era: 0, tip: 5n }),
      signed({ callIndex: [b, 3], args: { dest: { Id: bob() }, value: (1n << 100n) } }, { nonce: 3, era: rt.types.registry.createType('ExtrinsicEra', { current: 200, period: 64 }), blockHash: hashes[200] }),
      signed({ callIndex: [b, 3], args: { dest: { Id: bob() }, value: 99n } }, { nonce: 1, era: 0, type: 'ed25519' })
    ]
    for (const bytes of txs) same(rt.decodeFast(bytes, env(201)), rt.decodeSlow(bytes, env(201)))
  })

  it('decodes other calls through the registry, once, into plain arguments', () => {
    const bytes = signed({ callIndex: [pallet('System'), 0], args: { remark: '0x0102' } }, { nonce: 2, era: 0 })
    const fast = rt.decodeFast(bytes, env(5))
    same(fast, rt.decodeSlow(bytes, env(5)))
    expect(fast?.call).toEqual({ pallet: 'System', name: 'remark', args: { remark: '0x0102' } })
  })

  it('keeps the exact errors: bad format 1001, ancient era 1010, bad signature 1010', () => {
    const bytes = signed({ callIndex: [pallet('Balances'), 3], args: { dest: { Id: bob() }, value: 5n } }, { nonce: 0, era: rt.types.registry.createType('ExtrinsicEra', { current: 10, period: 4 }), blockHash: hashes[8] })
    // the birth block (8) must be known: a chain that knows only its genesis rejects it
    expect(() => rt.decode(bytes, { ...env(11), blockHash: n => n === 0 ? hashes[0] : undefined })).toThrow(expect.objectContaining({ code: 1010, data: 'Transaction has an ancient birth block' }))
    const trailing = Uint8Array.from([...bytes, 0])
    expect(() => rt.decode(trailing, env(11))).toThrow(expect.objectContaining({ code: 1001 }))
    expect(() => rt.decode(bytes.subarray(0, 50), env(11))).toThrow(expect.objectContaining({ code: 1001 }))
    const tampered = bytes.slice()
    tampered[tampered.length - 1] ^= 1
    const state = { get: () => undefined }
    expect(() => rt.validate(state, tampered, env(11))).toThrow(expect.objectContaining({ code: 1010, data: 'Transaction has a bad signature' }))
  })
})
