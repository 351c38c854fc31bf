import { u8aToHex } from '@polkadot/util'
import { cryptoWaitReady } from '@polkadot/util-crypto'
import { devGenesis, type DevSpecOptions } from '../../../devnet/chain/dev-spec.js'
import { devPair } from '../../../devnet/chain/dev-keys.js'
import type { ReferenceSemantics } from '../../../devnet/chain/runtime/adjudication.js'
import type { Plain } from '../../../devnet/chain/runtime/codec.js'
import { variant } from '../../../devnet/chain/runtime/codec.js'
import { Runtime, type CallCodec } from '../../../devnet/chain/runtime/executive.js'
import type { EventOut } from '../../../devnet/chain/runtime/context.js'
import { Overlay, Storage } from '../../../devnet/chain/runtime/state.js'
import { registerArgs } from '../../helpers/peer-key.js'
import { RandomnessAuthor } from '../../../devnet/chain/randomness-author.js'

// Drives the pure runtime directly (no RPC, no LevelDB): blocks of calls,
// module errors by name, events by name.

// Every harness chain with the same author repeats the same randomness from
// genesis: a block's VRF is signed once per process (any valid proof will do).
const signedVrfs = new Map<string, string>()
function signedRandomness (author: RandomnessAuthor, previous: string, n: number): string {
  const key = `${author.publicKey}.${previous}.${n}`
  let vrf = signedVrfs.get(key)
  if (vrf === undefined) { vrf = author.sign(previous, n); signedVrfs.set(key, vrf) }
  return vrf
}

export interface CallResult { error?: string, events: string[] }

export class Harness {
  readonly state = new Map<string, Uint8Array>()
  number = 0
  parentHash = '0x' + '11'.repeat(32)
  /** the parent of block 1: what the runtime stores as System.BlockHash(0) */
  genesisHash = this.parentHash
  readonly accounts: Record<string, string> = {}
  /** capacity rent paid so far (CapacityRentPaid), by account */
  readonly rents = new Map<string, bigint>()
  /** the last block's events as the runtime emitted them (fields by name) */
  lastEvents: EventOut[] = []
  /** the block author whose VRF is each block's randomness: a fixed key, so runs repeat */
  constructor (readonly rt: Runtime, readonly author: RandomnessAuthor) {
    for (const [k, v] of rt.genesisState().changes) if (v !== null) this.state.set(k, v)
  }

  /** genesis: the hash block 1 names as its parent (System.BlockHash(0)); another value is another chain with the same keys */
  static async create (
    opts: { reference?: ReferenceSemantics, genesis?: string } & Pick<DevSpecOptions, 'forcedErrorPpm' | 'disputeClock' | 'capacityRentPpb' | 'maxRootEvery' | 'maxTaskMemory'> = {}
  ): Promise<Harness> {
    await cryptoWaitReady()
    const author = RandomnessAuthor.fromSeed('0x' + '5a'.repeat(32))
    const { reference: _r, genesis: _g, ...specOptions } = opts
    const spec = await devGenesis(specOptions)
    const genesis = { ...spec, randomnessAuthor: author.publicKey }
    const h = new Harness(new Runtime(genesis, opts.reference), author)
    if (opts.genesis !== undefined) { h.parentHash = opts.genesis; h.genesisHash = opts.genesis }
    for (const n of ['Alice', 'Bob', 'Charlie', 'Dave', 'Eve', 'Ferdie', 'Peer1', 'Peer2']) h.accounts[n] = u8aToHex(devPair(`//${n}`).publicKey)
    return h
  }

  /** register_node arguments binding the test peer `peerName` (default: the account's name) to `who`, signed by the peer's key */
  registerArgs (who: string, roles: number, stake: bigint, peerName = who): Record<string, unknown> {
    return registerArgs(this.genesisHash, this.accounts[who] ?? who, peerName, roles, stake)
  }

  call (section: string, method: string, args: Record<string, unknown>): CallCodec {
    const reg = this.rt.types.registry
    const p = this.rt.types.pallets.find(x => x.name === section)
    const c = p?.calls.find(x => x.name === method)
    if (p === undefined || c === undefined) throw new Error(`no call ${section}.${method}`)
    // GenericCall's args struct uses the metadata (snake_case) field names
    const snake = Object.fromEntries(Object.entries(args).map(([k, v]) => [k.replace(/[A-Z]/g, x => '_' + x.toLowerCase()), v]))
    return reg.createType('Call', { callIndex: [p.index, c.index], args: snake }) as unknown as CallCodec
  }

  /** Runs one block with the given calls; returns one result per call plus on_initialize events. */
  block (calls: Array<[who: string, section: string, method: string, args: Record<string, unknown>]> = []): { results: CallResult[], initEvents: string[] } {
    this.number += 1
    const reader = { get: (k: string) => this.state.get(k) }
    const randomness = signedRandomness(this.author, this.rt.previousRandomness(reader), this.number)
    const b = this.rt.initializeBlock(reader, { number: this.number, parentHash: this.parentHash, randomness })
    const initEvents = b.ctx.events.map(e => this.eventName(e.event))
    const results: CallResult[] = []
    for (const [who, section, method, args] of calls) {
      const mark = b.ctx.events.length
      const err = b.applyCall(this.accounts[who] ?? who, this.call(section, method, args))
      results.push({ error: err === undefined ? undefined : this.errorName(err), events: b.ctx.events.slice(mark).map(e => this.eventName(e.event)) })
    }
    this.lastEvents = b.finalize()
    for (const e of b.ctx.events) {
      const paid = (e.event as { Arbitration?: { CapacityRentPaid?: { who: string, amount: bigint } } }).Arbitration?.CapacityRentPaid
      if (paid !== undefined) this.rents.set(paid.who, (this.rents.get(paid.who) ?? 0n) + paid.amount)
    }
    for (const [k, v] of b.state.changes) { if (v === null) this.state.delete(k); else this.state.set(k, v) }
    // a new pseudo-random parent hash per block
    this.parentHash = '0x' + (this.number % 256).toString(16).padStart(2, '0').repeat(32)
    return { results, initEvents }
  }

  /** One call in its own block; returns its result. */
  run (who: string, section: string, method: string, args: Record<string, unknown> = {}): CallResult {
    return this.block([[who, section, method, args]]).results[0]
  }

  advance (n: number): string[] {
    const ev: string[] = []
    for (let i = 0; i < n; i++) ev.push(...this.block().initEvents)
    return ev
  }

  /** The randomness of block n (default: the newest), what the runtime's draws in later blocks read. */
  randomness (n = this.number): string {
    const r = this.read<string>('Randomness', 'ByBlock', n)
    if (r === undefined) throw new Error(`block ${n} has no randomness`)
    return r
  }

  get store (): Storage { return new Storage(this.rt.types, new Overlay({ get: k => this.state.get(k) })) }

  read<T> (pallet: string, item: string, key?: Plain): T | undefined { return this.store.get<T>(pallet, item, key) }

  /** Writes one storage item as a call would (tests that set up a state no call produces yet). */
  write (pallet: string, item: string, key: Plain | undefined, value: unknown): void {
    const o = new Overlay({ get: k => this.state.get(k) })
    new Storage(this.rt.types, o).put(pallet, item, key, value as never)
    for (const [k, v] of o.changes) { if (v === null) this.state.delete(k); else this.state.set(k, v) }
  }

  /** The capacity rent `who` (a name or an account) has paid so far: docs/economics.md, "Capacity griefing". */
  rentPaid (who: string): bigint { return this.rents.get(this.accounts[who] ?? who) ?? 0n }

  free (who: string): bigint { return this.store.read<{ data: { free: bigint } }>('System', 'Account', this.accounts[who] ?? who).data.free }
  reserved (who: string): bigint { return this.store.read<{ data: { reserved: bigint } }>('System', 'Account', this.accounts[who] ?? who).data.reserved }

  eventName (e: Plain): string {
    const [pallet, inner] = variant(e)
    return `${pallet}.${variant(inner)[0]}`
  }

  errorName (err: Plain): string {
    const [kind, v] = variant(err)
    if (kind !== 'Module') return kind
    const m = v as { index: number, error: string }
    const p = this.rt.types.pallets.find(x => x.index === m.index)
    return `${p?.name}.${p?.errors[parseInt(m.error.slice(2, 4), 16)]?.name}`
  }
}
