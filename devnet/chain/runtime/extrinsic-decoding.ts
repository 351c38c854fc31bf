import type { GenericExtrinsic } from '@polkadot/types'
import type { Codec } from '@polkadot/types/types'
import { hexToU8a, u8aConcat, u8aToHex } from '@polkadot/util'
import { blake2AsU8a } from '@polkadot/util-crypto'
import { toPlain } from './codec.js'
import type { RuntimeTypes } from './metadata.js'
import { readCompact, u32Bytes } from './fast-codec.js'
import type { SignatureKind } from './signature.js'
import type { CallTable } from './call-table.js'
import { account } from './dispatch.js'
import { MAX_EXTRINSIC_BYTES, TxInvalid, ancient, type CallCodec, type DecodedTx, type PlainCall, type ValidationEnv } from './transaction.js'

// Signed extrinsic bytes to a DecodedTx: format, signer, era and the payload
// whose signature must be verified.

export class ExtrinsicDecoder {
  constructor (
    private readonly types: RuntimeTypes,
    private readonly version: { specVersion: number, transactionVersion: number },
    private readonly calls: CallTable
  ) {}

  /**
   * The stateless half of validate: size, format, signer, era, and the payload
   * whose signature must be verified. Transfers (the hot path) are parsed by
   * hand; anything else, or anything unusual, goes through polkadot.js's codec,
   * which also produces the exact error messages.
   */
  decode (bytes: Uint8Array, env: ValidationEnv): DecodedTx {
    if (bytes.length > MAX_EXTRINSIC_BYTES) throw new TxInvalid(1010, 'Invalid Transaction', `Transaction is too large: ${bytes.length} > ${MAX_EXTRINSIC_BYTES} bytes`)
    return this.decodeFast(bytes, env) ?? this.decodeSlow(bytes, env)
  }

  /** polkadot.js codec path (also the reference the fast path is tested against). */
  decodeSlow (bytes: Uint8Array, env: ValidationEnv): DecodedTx {
    let ext: GenericExtrinsic
    try {
      ext = this.types.registry.createType('Extrinsic', bytes)
      if (ext.encodedLength !== bytes.length) throw new Error('trailing bytes')
    } catch (e) {
      throw new TxInvalid(1001, 'Extrinsic has invalid format', (e as Error).message)
    }
    if (!ext.isSigned) throw new TxInvalid(1010, 'Invalid Transaction', 'Unsigned transactions are not accepted')
    const signer = toPlain(ext.signer)
    let sender: string
    try { sender = account(signer, undefined as never) } catch { throw new TxInvalid(1010, 'Invalid Transaction', 'Signer must be MultiAddress::Id') }
    // mortality: birth block must be known and the era must not be over
    const era = ext.era
    let blockHash = env.genesisHash
    let death: number | undefined
    if (era.isMortalEra) {
      const birth = era.asMortalEra.birth(env.number - 1)
      death = era.asMortalEra.death(env.number - 1)
      const h = env.blockHash(birth)
      if (h === undefined || env.number > death) throw ancient()
      blockHash = h
    }
    const payload = this.types.registry.createType('ExtrinsicPayload', {
      method: ext.method.toHex(),
      era,
      nonce: ext.nonce,
      tip: ext.tip,
      specVersion: this.version.specVersion,
      transactionVersion: this.version.transactionVersion,
      genesisHash: env.genesisHash,
      blockHash
    }, { version: ext.version & 0x7f })
    const msg = payload.toU8a({ method: true })
    const multi = (ext as unknown as { inner: { signature: { multiSignature: { type: string, value: Codec } } } }).inner.signature.multiSignature
    return {
      hash: u8aToHex(blake2AsU8a(bytes)),
      sender,
      nonce: ext.nonce.toNumber(),
      bytes,
      call: this.plainCallChecked(ext.method as unknown as CallCodec),
      signature: {
        kind: multi.type as SignatureKind, signature: multi.value.toU8a(true), message: msg.length > 256 ? blake2AsU8a(msg) : msg, publicKey: hexToU8a(sender)
      },
      death
    }
  }

  /**
   * Signed v4 extrinsic = compact length ++ 0x84 ++ MultiAddress::Id ++
   * MultiSignature ++ extra (era, compact nonce, compact tip) ++ call; the
   * signed payload is call ++ extra ++ (specVersion, txVersion, genesis hash,
   * era birth hash). Returns undefined for anything it does not handle.
   */
  decodeFast (bytes: Uint8Array, env: ValidationEnv): DecodedTx | undefined {
    const len = readCompact(bytes, 0)
    if (len === undefined || len.value !== BigInt(bytes.length - len.length)) return undefined
    let o = len.length
    if (bytes[o] !== 0x84 || bytes[o + 1] !== 0x00 || o + 35 > bytes.length) return undefined
    const publicKey = bytes.slice(o + 2, o + 34)
    o += 34
    const kind: SignatureKind | undefined = bytes[o] === 0 ? 'Ed25519' : bytes[o] === 1 ? 'Sr25519' : bytes[o] === 2 ? 'Ecdsa' : undefined
    const sigLen = kind === 'Ecdsa' ? 65 : 64
    if (kind === undefined || o + 1 + sigLen > bytes.length) return undefined
    const signature = bytes.slice(o + 1, o + 1 + sigLen)
    o += 1 + sigLen
    const extraStart = o
    let blockHash = env.genesisHash
    let death: number | undefined
    if (bytes[o] === 0) o += 1
    else {
      if (o + 2 > bytes.length) return undefined
      const encoded = bytes[o] + (bytes[o + 1] << 8)
      const period = 2 << (encoded % 16)
      const phase = (encoded >> 4) * Math.max(period >> 12, 1)
      if (period < 4 || phase >= period) return undefined
      const current = env.number - 1
      const birth = Math.trunc((Math.max(current, phase) - phase) / period) * period + phase
      death = birth + period
      const h = env.blockHash(birth)
      if (h === undefined || env.number > death) throw ancient()
      blockHash = h
      o += 2
    }
    const nonce = readCompact(bytes, o)
    if (nonce === undefined || nonce.value > 0xffffffffn) return undefined
    o += nonce.length
    const tip = readCompact(bytes, o)
    if (tip === undefined || tip.length > 17) return undefined
    o += tip.length
    const callStart = o
    const call = this.decodeCallFast(bytes, callStart)
    if (call === undefined) return undefined
    const msg = u8aConcat(
      bytes.subarray(callStart), bytes.subarray(extraStart, callStart), u32Bytes(this.version.specVersion),
      u32Bytes(this.version.transactionVersion), hexToU8a(env.genesisHash), hexToU8a(blockHash)
    )
    const sender = u8aToHex(publicKey)
    return {
      hash: u8aToHex(blake2AsU8a(bytes)),
      sender,
      nonce: Number(nonce.value),
      bytes,
      call,
      signature: { kind, signature, message: msg.length > 256 ? blake2AsU8a(msg) : msg, publicKey },
      death
    }
  }

  /** Balances transfers by hand; other calls through the registry. Must consume the rest of the bytes. */
  private decodeCallFast (bytes: Uint8Array, at: number): PlainCall | undefined {
    const balances = this.calls.indexOf('Balances')
    const ci = bytes[at + 1]
    if (bytes[at] === balances && (ci === 0 || ci === 3) && bytes[at + 2] === 0x00 && at + 35 <= bytes.length) {
      const value = readCompact(bytes, at + 35)
      if (value === undefined || value.length > 17 || at + 35 + value.length !== bytes.length) return undefined
      return { pallet: 'Balances', name: ci === 0 ? 'transfer_allow_death' : 'transfer_keep_alive', args: { dest: { Id: u8aToHex(bytes.subarray(at + 3, at + 35)) }, value: value.value } }
    }
    try {
      const call = this.types.registry.createType('Call', bytes.subarray(at)) as unknown as CallCodec
      if (call.encodedLength !== bytes.length - at) return undefined
      return this.calls.plainCall(call)
    } catch {
      return undefined
    }
  }

  private plainCallChecked (call: CallCodec): PlainCall {
    try { return this.calls.plainCall(call) } catch (e) { throw new TxInvalid(1001, 'Extrinsic has invalid format', `call: ${(e as Error).message}`) }
  }
}
