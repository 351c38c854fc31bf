import type { ReferenceSemantics } from './adjudication.js'
import type * as arb from './arbitration.js'
import { onInitialize } from './settlement.js'
import { applyBlockRandomness, previousRandomness, putGenesisRandomness } from './block-randomness.js'
import type { AccountInfo } from './balances.js'
import type { BlockEnv, Context, EventOut } from './context.js'
import { buildRuntimeTypes, type RuntimeConstants, type RuntimeTypes } from './metadata.js'
import { Overlay, Storage, type StateReader } from './state.js'
import { verifySignature, type Verifier } from './signature.js'
import { RUNTIME_VERSION } from './runtime-version.js'
import { BlockBuilder } from './block-builder.js'
import { CallTable } from './call-table.js'
import { dispatchCall } from './dispatch.js'
import { EventRecordEncoder } from './event-records.js'
import { ExtrinsicDecoder } from './extrinsic-decoding.js'
import { MAX_FUTURE_NONCES, TxInvalid, ancient, badSignature, type CallCodec, type DecodedTx, type PlainCall, type ValidTx, type ValidationEnv } from './transaction.js'

// The executive: genesis state, transaction validity (signature, nonce, era)
// and block execution (on_initialize, apply each extrinsic in its own storage
// layer, deposit events). Pure: state comes in as a reader, changes go out as
// an overlay; the host persists them. Decoding, dispatch, event encoding and
// the block builder each live in their own module; this one ties them together.

export { RUNTIME_VERSION }
export { BlockBuilder } from './block-builder.js'
export {
  MAX_EXTRINSIC_BYTES, MAX_FUTURE_NONCES, TxInvalid, badSignature,
  type ApplyOutcome, type CallCodec, type DecodedTx, type PlainCall, type ValidTx, type ValidationEnv
} from './transaction.js'

export interface GenesisConfig {
  /** [account id hex, free balance] */
  balances: Array<[string, bigint]>
  arbitration: arb.Params
  constants: RuntimeConstants
  /** sr25519 public key (hex) of the block author whose VRF is every block's randomness; the chain sets its own */
  randomnessAuthor?: string
}

// Building the metadata's type registry takes ~0.1 s and depends only on the
// constants: runtimes of the same constants (a test builds dozens) share it.
const typesByConstants = new Map<string, RuntimeTypes>()
function runtimeTypes (c: RuntimeConstants): RuntimeTypes {
  // every field, so a constant added later cannot be left out of the key
  const key = Object.entries(c).map(([k, v]) => `${k}=${String(v)}`).join('/')
  let t = typesByConstants.get(key)
  if (t === undefined) { t = buildRuntimeTypes(c); typesByConstants.set(key, t) }
  return t
}

export class Runtime {
  readonly types: RuntimeTypes
  readonly version = RUNTIME_VERSION
  private readonly calls: CallTable
  private readonly events: EventRecordEncoder
  private readonly decoder: ExtrinsicDecoder

  constructor (readonly genesis: GenesisConfig, readonly reference?: ReferenceSemantics) {
    this.types = runtimeTypes(genesis.constants)
    this.calls = new CallTable(this.types)
    this.events = new EventRecordEncoder(this.types)
    this.decoder = new ExtrinsicDecoder(this.types, this.version, this.calls)
  }

  /** EventRecord = Phase ++ pallet index ++ event index ++ fields ++ topics (see EventRecordEncoder). */
  encodeEventRecord (e: EventOut): Uint8Array { return this.events.encode(e) }

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

  /** The stateless half of validate (see ExtrinsicDecoder.decode). */
  decode (bytes: Uint8Array, env: ValidationEnv): DecodedTx { return this.decoder.decode(bytes, env) }

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
  decodeSlow (bytes: Uint8Array, env: ValidationEnv): DecodedTx { return this.decoder.decodeSlow(bytes, env) }

  /** Hand-parsed signed v4 extrinsics; undefined for anything it does not handle. */
  decodeFast (bytes: Uint8Array, env: ValidationEnv): DecodedTx | undefined { return this.decoder.decodeFast(bytes, env) }

  /** The call as pallet/name and plain camelCase arguments. */
  plainCall (call: CallCodec): PlainCall { return this.calls.plainCall(call) }

  dispatch (ctx: Context, who: string, call: CallCodec | PlainCall): void {
    dispatchCall(ctx, who, 'callIndex' in call ? this.plainCall(call) : call)
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
