import type { GenericExtrinsic } from '@polkadot/types'
import type { Codec } from '@polkadot/types/types'
import { compactToU8a, hexToU8a, u8aConcat, u8aToHex } from '@polkadot/util'
import { isReady as wasmReady, sr25519Verify as wasmSr25519Verify } from '@polkadot/wasm-crypto'
import { blake2AsU8a, ed25519Verify, secp256k1Verify, sr25519Verify } from '@polkadot/util-crypto'
import type { ReferenceSemantics } from './adjudication.js'
import * as arb from './arbitration.js'
import { AVAILABILITY_HANDLERS } from './availability.js'
import { getAccount, putAccount, transfer, type AccountInfo } from './balances.js'
import { toPlain, variant, type Plain } from './codec.js'
import { Context, DispatchFail, type BlockEnv, type EventOut } from './context.js'
import { buildRuntimeTypes, type RuntimeConstants, type RuntimeTypes } from './metadata.js'
import { Overlay, Storage, type StateReader } from './state.js'

// The executive: genesis state, transaction validity (signature, nonce, era)
// and block execution (on_initialize, apply each extrinsic in its own storage
// layer, deposit events). Pure: state comes in as a reader, changes go out as
// an overlay; the host persists them.

export interface GenesisConfig {
  /** [account id hex, free balance] */
  balances: Array<[string, bigint]>
  arbitration: arb.Params
  constants: RuntimeConstants
}

export const RUNTIME_VERSION = {
  specName: 'proofswarm-dev',
  implName: 'proofswarm-ts',
  authoringVersion: 1,
  specVersion: 1,
  implVersion: 1,
  apis: [] as Array<[string, number]>,
  transactionVersion: 1,
  stateVersion: 1
}

/** A transaction rejected before inclusion; code is the Substrate JSON-RPC error code. */
export class TxInvalid extends Error {
  constructor (readonly code: number, message: string, readonly data?: string) {
    super(message)
    this.name = 'TxInvalid'
  }
}

export interface ValidTx {
  hash: string
  sender: string
  nonce: number
  bytes: Uint8Array
  ext: GenericExtrinsic
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

function account (dest: Plain, ctx: Context): string {
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
  'Arbitration.submit_task': (ctx, who, a) => { arb.submitTask(ctx, who, a as never) },
  'Arbitration.release_task': (ctx, who, a) => arb.releaseTask(ctx, who, a as never),
  'Arbitration.commit_proof': (ctx, who, a) => arb.commitProof(ctx, who, a as never),
  'Arbitration.submit_verdict': (ctx, who, a) => arb.submitVerdict(ctx, who, a as never),
  'Arbitration.open_dispute': (ctx, who, a) => { arb.openDispute(ctx, who, a as never) },
  'Arbitration.record_move': (ctx, who, a) => arb.recordMove(ctx, who, a as never),
  'Arbitration.claim_timeout': (ctx, who, a) => arb.claimTimeout(ctx, who, a as never),
  'Arbitration.adjudicate': (ctx, who, a) => arb.adjudicate(ctx, who, a as never),
  ...AVAILABILITY_HANDLERS
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
    const error = this.applyCall(tx.sender, tx.ext.method as unknown as CallCodec)
    return { included: true, success: error === undefined }
  }

  /**
   * Dispatches one call as `sender` in its own storage layer and deposits
   * ExtrinsicSuccess/ExtrinsicFailed; returns the DispatchError if it failed.
   * (apply() checks and bumps the nonce first; tests call this directly.)
   */
  applyCall (sender: string, call: CallCodec): Plain | undefined {
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
      if (!(e instanceof DispatchFail)) throw e
      error = e.error
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
  }

  private eventCodecs: Map<string, { prefix: Uint8Array, fields: Array<[string, string]> }> | undefined

  /**
   * EventRecord = Phase ++ pallet index ++ event index ++ fields ++ topics. Encoded
   * by hand: polkadot.js's registry maps RuntimeEvent to its GenericEvent, which
   * cannot be built from a nested object.
   */
  encodeEventRecord (e: EventOut): Uint8Array {
    if (this.eventCodecs === undefined) {
      this.eventCodecs = new Map()
      for (const p of this.types.pallets) {
        p.events.forEach((ev, i) => {
          this.eventCodecs?.set(`${p.name}.${ev.name}`, { prefix: Uint8Array.of(p.index, i), fields: ev.fields.map(([n, t]) => [camel(n as string), this.types.lookupName(t)]) })
        })
      }
    }
    const reg = this.types.registry
    const [pallet, inner] = variant(e.event)
    const [name, fields] = variant(inner)
    const codec = this.eventCodecs.get(`${pallet}.${name}`)
    if (codec === undefined) throw new Error(`unknown event ${pallet}.${name}`)
    const f = fields as Record<string, unknown>
    return u8aConcat(
      reg.createType(this.types.lookupName('Phase'), e.phase).toU8a(),
      codec.prefix,
      ...codec.fields.map(([n, t]) => reg.createType(t, f[n]).toU8a()),
      Uint8Array.of(0)
    )
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
    return state
  }

  /** Pool admission checks: decoding, signature, era, nonce (not yet stale), account exists. */
  validate (state: StateReader, bytes: Uint8Array, env: ValidationEnv): ValidTx {
    if (bytes.length > MAX_EXTRINSIC_BYTES) throw new TxInvalid(1010, 'Invalid Transaction', `Transaction is too large: ${bytes.length} > ${MAX_EXTRINSIC_BYTES} bytes`)
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
    if (era.isMortalEra) {
      const birth = era.asMortalEra.birth(env.number - 1)
      const death = era.asMortalEra.death(env.number - 1)
      const h = env.blockHash(birth)
      if (h === undefined || env.number > death) throw new TxInvalid(1010, 'Invalid Transaction', 'Transaction has an ancient birth block')
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
    const data = msg.length > 256 ? blake2AsU8a(msg) : msg
    const multi = (ext as unknown as { inner: { signature: { multiSignature: { type: string, value: Codec } } } }).inner.signature.multiSignature
    const sig = multi.value.toU8a(true)
    const pub = hexToU8a(sender)
    let ok = false
    try {
      // the wasm verifier is ~50x faster than util-crypto 14's pure-JS one
      if (multi.type === 'Sr25519') ok = wasmReady() ? wasmSr25519Verify(sig, data, pub) : sr25519Verify(data, sig, pub)
      else if (multi.type === 'Ed25519') ok = ed25519Verify(data, sig, pub)
      else if (multi.type === 'Ecdsa') ok = secp256k1Verify(data, sig, pub, 'blake2')
    } catch { ok = false }
    if (!ok) throw new TxInvalid(1010, 'Invalid Transaction', 'Transaction has a bad signature')
    const acc = new Storage(this.types, new Overlay(state)).read<AccountInfo>('System', 'Account', sender)
    const nonce = ext.nonce.toNumber()
    if (acc.providers === 0) throw new TxInvalid(1010, 'Invalid Transaction', 'Inability to pay some fees (e.g. account balance too low)')
    if (nonce < acc.nonce) throw new TxInvalid(1014, 'Priority is too low', `Transaction is outdated: nonce ${nonce} < account nonce ${acc.nonce}`)
    if (nonce > acc.nonce + MAX_FUTURE_NONCES) throw new TxInvalid(1010, 'Invalid Transaction', `Nonce ${nonce} is too far in the future`)
    return { hash: u8aToHex(blake2AsU8a(bytes)), sender, nonce, bytes, ext }
  }

  dispatch (ctx: Context, who: string, call: CallCodec): void {
    const [pi, ci] = call.callIndex
    const pallet = this.types.pallets.find(p => p.index === pi)
    const spec = pallet?.calls.find(c => c.index === ci)
    if (pallet === undefined || spec === undefined) throw new DispatchFail('CannotLookup', 'unknown call')
    const handler = HANDLERS[`${pallet.name}.${spec.name}`]
    if (handler === undefined) throw new DispatchFail('CannotLookup', 'call not implemented')
    const args: Record<string, Plain> = {}
    spec.args.forEach(([name], i) => { args[camel(name as string)] = toPlain(call.args[i]) })
    handler(ctx, who, args)
  }

  /** Starts a block: System bookkeeping then every pallet's on_initialize. */
  initializeBlock (base: StateReader, env: BlockEnv): BlockBuilder {
    const state = base instanceof Overlay ? base : new Overlay(base)
    const b = new BlockBuilder(this, state, env)
    const s = b.ctx.store
    s.put('System', 'Number', undefined, env.number)
    s.put('System', 'ParentHash', undefined, env.parentHash)
    s.put('System', 'BlockHash', env.number - 1, env.parentHash)
    b.ctx.phase = 'Initialization'
    arb.onInitialize(b.ctx)
    return b
  }
}
