import type { GenericExtrinsic } from '@polkadot/types'
import type { Codec } from '@polkadot/types/types'
import { compactToU8a, hexToU8a, u8aConcat, u8aToHex } from '@polkadot/util'
import { blake2AsU8a } from '@polkadot/util-crypto'
import type { ReferenceSemantics } from './adjudication.js'
import * as arb from './arbitration.js'
import * as disputes from './disputes.js'
import { AVAILABILITY_HANDLERS } from './availability.js'
import { CHUNK_HANDLERS } from './chunk-sampling.js'
import { challengeInitialState } from './initial-state.js'
import { commitDiverged } from './divergence.js'
import { onInitialize } from './settlement.js'
import { applyBlockRandomness, previousRandomness, putGenesisRandomness } from './block-randomness.js'
import { releaseTask } from './selection.js'
import { takeRentDeposit } from './capacity-rent.js'
import { getAccount, putAccount, transfer, type AccountInfo } from './balances.js'
import { toPlain, variant, type Plain } from './codec.js'
import { Context, DispatchFail, type BlockEnv, type EventOut } from './context.js'
import { buildRuntimeTypes, type RuntimeConstants, type RuntimeTypes } from './metadata.js'
import { Overlay, Storage, type StateReader } from './state.js'
import { readCompact, u128Bytes, u32Bytes } from './fast-codec.js'
import { verifySignature, type SignatureJob, type SignatureKind, type Verifier } from './signature.js'

// The executive: genesis state, transaction validity (signature, nonce, era)
// and block execution (on_initialize, apply each extrinsic in its own storage
// layer, deposit events). Pure: state comes in as a reader, changes go out as
// an overlay; the host persists them.

export interface GenesisConfig {
  /** [account id hex, free balance] */
  balances: Array<[string, bigint]>
  arbitration: arb.Params
  constants: RuntimeConstants
  /** sr25519 public key (hex) of the block author whose VRF is every block's randomness; the chain sets its own */
  randomnessAuthor?: string
}

import { RUNTIME_VERSION } from './runtime-version.js'
export { RUNTIME_VERSION }

const ancient = (): TxInvalid => new TxInvalid(1010, 'Invalid Transaction', 'Transaction has an ancient birth block')
export const badSignature = (): TxInvalid => new TxInvalid(1010, 'Invalid Transaction', 'Transaction has a bad signature')

/** A transaction rejected before inclusion; code is the Substrate JSON-RPC error code. */
export class TxInvalid extends Error {
  constructor (readonly code: number, message: string, readonly data?: string) {
    super(message)
    this.name = 'TxInvalid'
  }
}

/** A call with its arguments already converted to plain values (decoded once, at validation). */
export interface PlainCall { pallet: string, name: string, args: Record<string, Plain> }

export interface ValidTx {
  hash: string
  sender: string
  nonce: number
  bytes: Uint8Array
  call: PlainCall
}

/**
 * A well-formed signed extrinsic whose signature is not checked yet: the host
 * verifies `signature` (inline or in a worker) and then calls `check`.
 */
export interface DecodedTx extends ValidTx {
  signature: SignatureJob
  /** mortal era: the transaction is invalid in blocks after this number */
  death?: number
}

export interface ValidationEnv {
  /** number of the block the transaction would go into */
  number: number
  genesisHash: string
  /** hash of a past block by number (for mortal eras) */
  blockHash: (n: number) => string | undefined
}

export type ApplyOutcome = { included: true, success: boolean } | { included: false, reason: 'future' | 'stale' | 'invalid' }

export const MAX_EXTRINSIC_BYTES = 4 * 1024 * 1024
/** How far ahead of the account nonce the pool accepts transactions. */
export const MAX_FUTURE_NONCES = 1024

export type CallCodec = Codec & { callIndex: Uint8Array, args: Codec[] }
type Handler = (ctx: Context, who: string, args: Record<string, Plain>) => void

function account (dest: Plain, _ctx: Context): string {
  const [kind, value] = variant(dest)
  if (kind !== 'Id' || typeof value !== 'string') throw new DispatchFail('CannotLookup', 'only MultiAddress::Id is supported')
  return value
}

const HANDLERS: Record<string, Handler> = {
  'System.remark': () => {},
  'Balances.transfer_allow_death': (ctx, who, a) => transfer(ctx, who, account(a.dest, ctx), a.value as bigint, false),
  'Balances.transfer_keep_alive': (ctx, who, a) => transfer(ctx, who, account(a.dest, ctx), a.value as bigint, true),
  'Arbitration.register_node': (ctx, who, a) => arb.registerNode(ctx, who, a as never),
  'Arbitration.add_stake': (ctx, who, a) => arb.addStake(ctx, who, a as never),
  'Arbitration.unregister': (ctx, who) => arb.unregisterNode(ctx, who),
  'Arbitration.set_roles': (ctx, who, a) => arb.setRoles(ctx, who, a as never),
  'Arbitration.submit_task': (ctx, who, a) => { takeRentDeposit(ctx, who, arb.submitTask(ctx, who, a as never)) },
  'Arbitration.release_task': (ctx, who, a) => releaseTask(ctx, who, a as never),
  'Arbitration.commit_proof': (ctx, who, a) => arb.commitProof(ctx, who, a as never),
  'Arbitration.submit_verdict': (ctx, who, a) => arb.submitVerdict(ctx, who, a as never),
  'Arbitration.open_dispute': (ctx, who, a) => { disputes.openDispute(ctx, who, a as never) },
  'Arbitration.force_move': (ctx, who, a) => disputes.forceMove(ctx, who, a as never),
  'Arbitration.answer_move': (ctx, who, a) => disputes.answerMove(ctx, who, a as never),
  'Arbitration.claim_timeout': (ctx, who, a) => disputes.claimTimeout(ctx, who, a as never),
  'Arbitration.adjudicate': (ctx, who, a) => disputes.adjudicate(ctx, who, a as never),
  'Arbitration.reveal_forced_error': (ctx, who, a) => arb.revealForcedError(ctx, who, a as never),
  ...AVAILABILITY_HANDLERS,
  'Arbitration.challenge_initial_state': (ctx, who, a) => challengeInitialState(ctx, who, a as never),
  'Arbitration.commit_diverged': (ctx, who, a) => commitDiverged(ctx, who, a as never),
  ...CHUNK_HANDLERS
}

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

const camel = (s: string): string => s.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase())

export class BlockBuilder {
  readonly ctx: Context
  private index = 0
  constructor (readonly runtime: Runtime, readonly state: Overlay, env: BlockEnv) {
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

export class Runtime {
  readonly types: RuntimeTypes
  readonly version = RUNTIME_VERSION

  constructor (readonly genesis: GenesisConfig, readonly reference?: ReferenceSemantics) {
    this.types = buildRuntimeTypes(genesis.constants)
    for (const p of this.types.pallets) {
      this.palletIndex.set(p.name, p.index)
      for (const c of p.calls) this.callNames.set(p.index * 256 + c.index, { pallet: p.name, name: c.name, args: c.args.map(([n]) => camel(n as string)) })
    }
  }

  private eventCodecs: Map<string, { prefix: Uint8Array, fields: Array<[string, FieldEncoder]> }> | undefined

  /**
   * EventRecord = Phase ++ pallet index ++ event index ++ fields ++ topics. Encoded
   * by hand: polkadot.js's registry maps RuntimeEvent to its GenericEvent, which
   * cannot be built from a nested object. Hot field types (accounts, balances)
   * have hand-written encoders; the rest go through createType, memoised by value.
   */
  encodeEventRecord (e: EventOut): Uint8Array {
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

  genesisState (): Overlay {
    const state = new Overlay({ get: () => undefined })
    const store = new Storage(this.types, state)
    let issuance = 0n
    for (const [who, free] of this.genesis.balances) {
      const a: AccountInfo = { nonce: 0, consumers: 0, providers: 1, sufficients: 0, data: { free, reserved: 0n, frozen: 0n, flags: 0n } }
      store.put('System', 'Account', who, a)
      issuance += free
    }
    store.put('Balances', 'TotalIssuance', undefined, issuance)
    store.put('Arbitration', 'Params', undefined, this.genesis.arbitration)
    store.put('System', 'Number', undefined, 0)
    if (this.genesis.randomnessAuthor !== undefined) putGenesisRandomness(store, this.genesis.randomnessAuthor)
    return state
  }

  /** Pool admission checks: decoding, era, signature, nonce (not yet stale), account exists. */
  validate (state: StateReader, bytes: Uint8Array, env: ValidationEnv, verify: Verifier = verifySignature): ValidTx {
    const d = this.decode(bytes, env)
    if (!verify(d.signature)) throw badSignature()
    return this.check(state, d, env)
  }

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

  /** The stateful half of validate, run after the signature is known to be good. */
  check (state: StateReader, d: DecodedTx, env: ValidationEnv): ValidTx {
    if (d.death !== undefined && env.number > d.death) throw ancient()
    const acc = new Storage(this.types, new Overlay(state)).read<AccountInfo>('System', 'Account', d.sender)
    const nonce = d.nonce
    if (acc.providers === 0) throw new TxInvalid(1010, 'Invalid Transaction', 'Inability to pay some fees (e.g. account balance too low)')
    if (nonce < acc.nonce) throw new TxInvalid(1014, 'Priority is too low', `Transaction is outdated: nonce ${nonce} < account nonce ${acc.nonce}`)
    if (nonce > acc.nonce + MAX_FUTURE_NONCES) throw new TxInvalid(1010, 'Invalid Transaction', `Nonce ${nonce} is too far in the future`)
    return { hash: d.hash, sender: d.sender, nonce, bytes: d.bytes, call: d.call }
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
    const balances = this.palletIndex.get('Balances')
    const ci = bytes[at + 1]
    if (bytes[at] === balances && (ci === 0 || ci === 3) && bytes[at + 2] === 0x00 && at + 35 <= bytes.length) {
      const value = readCompact(bytes, at + 35)
      if (value === undefined || value.length > 17 || at + 35 + value.length !== bytes.length) return undefined
      return { pallet: 'Balances', name: ci === 0 ? 'transfer_allow_death' : 'transfer_keep_alive', args: { dest: { Id: u8aToHex(bytes.subarray(at + 3, at + 35)) }, value: value.value } }
    }
    try {
      const call = this.types.registry.createType('Call', bytes.subarray(at)) as unknown as CallCodec
      if (call.encodedLength !== bytes.length - at) return undefined
      return this.plainCall(call)
    } catch {
      return undefined
    }
  }

  private readonly palletIndex = new Map<string, number>()
  private readonly callNames = new Map<number, { pallet: string, name: string, args: string[] }>()

  private plainCallChecked (call: CallCodec): PlainCall {
    try { return this.plainCall(call) } catch (e) { throw new TxInvalid(1001, 'Extrinsic has invalid format', `call: ${(e as Error).message}`) }
  }

  /** The call as pallet/name and plain camelCase arguments. */
  plainCall (call: CallCodec): PlainCall {
    const [pi, ci] = call.callIndex
    const spec = this.callNames.get(pi * 256 + ci)
    if (spec === undefined) return { pallet: '?', name: `${pi}.${ci}`, args: {} }
    const args: Record<string, Plain> = {}
    spec.args.forEach((name, i) => { args[name] = toPlain(call.args[i]) })
    return { pallet: spec.pallet, name: spec.name, args }
  }

  dispatch (ctx: Context, who: string, call: CallCodec | PlainCall): void {
    const c = 'callIndex' in call ? this.plainCall(call) : call
    if (c.pallet === '?') throw new DispatchFail('CannotLookup', 'unknown call')
    const handler = HANDLERS[`${c.pallet}.${c.name}`]
    if (handler === undefined) throw new DispatchFail('CannotLookup', 'call not implemented')
    handler(ctx, who, c.args)
  }

  /** The randomness the VRF of the next block must be over (the block author signs it). */
  previousRandomness (base: StateReader): string {
    return previousRandomness(new Storage(this.types, base instanceof Overlay ? base : new Overlay(base)))
  }

  /** Starts a block: System bookkeeping, the block's randomness (its author's VRF, checked), then every pallet's on_initialize. */
  initializeBlock (base: StateReader, env: BlockEnv): BlockBuilder {
    const state = base instanceof Overlay ? base : new Overlay(base)
    const b = new BlockBuilder(this, state, env)
    const s = b.ctx.store
    s.put('System', 'Number', undefined, env.number)
    s.put('System', 'ParentHash', undefined, env.parentHash)
    s.put('System', 'BlockHash', env.number - 1, env.parentHash)
    applyBlockRandomness(b.ctx, env.number, env.randomness)
    b.ctx.phase = 'Initialization'
    onInitialize(b.ctx)
    return b
  }
}
