import { EventEmitter } from 'node:events'
import { compactToU8a, hexToU8a, u8aConcat, u8aToHex } from '@polkadot/util'
import { blake2AsU8a } from '@polkadot/util-crypto'
import type { Logger } from '../../node/log.js'
import { Runtime, TxInvalid, type GenesisConfig, type ValidTx } from './runtime/executive.js'
import type { ReferenceSemantics } from './runtime/adjudication.js'
import { ChainStore, pad, type StoredBlock, type StoredHeader } from './store.js'

// The dev chain host: a single authority that owns the pool, builds blocks
// with the pure runtime on a timer (or right after each submission in
// instant-seal mode), finalizes one block behind the head, persists every
// change to LevelDB and tells subscribers.

export interface ChainOptions {
  dataDir: string
  genesis: GenesisConfig
  reference?: ReferenceSemantics
  /** block interval in ms; ignored with instantSeal */
  blockTime?: number
  instantSeal?: boolean
  /** delay of the empty block that finalizes an instant-sealed block */
  finalizeDelay?: number
  maxBlockExtrinsics?: number
  maxPool?: number
  log?: Logger
}

export type TxStatus = 'ready' | 'future' | { inBlock: string } | { finalized: string } | 'dropped' | 'invalid'

interface PoolEntry { tx: ValidTx, seq: number }

const ZERO = '0x' + '00'.repeat(32)

export class DevChain extends EventEmitter {
  readonly runtime: Runtime
  readonly store: ChainStore
  /** current (best) state */
  readonly state = new Map<string, Uint8Array>()
  private sortedKeys: string[] | undefined
  readonly hashes: string[] = []
  readonly blocks = new Map<string, StoredBlock>()
  genesisHash = ZERO
  finalizedNumber = 0
  private readonly pool = new Map<string, PoolEntry>()
  private readonly poolBySenderNonce = new Map<string, string>()
  private seq = 0
  private timer: NodeJS.Timeout | undefined
  private sealScheduled = false
  private finalizeTimer: NodeJS.Timeout | undefined
  private closed = false
  private stateRoot = ZERO

  constructor (readonly opts: ChainOptions) {
    super()
    this.setMaxListeners(0)
    this.runtime = new Runtime(opts.genesis, opts.reference)
    this.store = new ChainStore(opts.dataDir)
  }

  get head (): StoredBlock { return this.blocks.get(this.hashes[this.hashes.length - 1]) as StoredBlock }
  get headNumber (): number { return this.hashes.length - 1 }
  get finalizedHash (): string { return this.hashes[this.finalizedNumber] }

  async start (): Promise<void> {
    await this.store.open()
    const head = await this.store.get('m!head')
    if (head === undefined) this.initGenesis()
    else await this.load(Number(head))
    if (this.opts.instantSeal !== true) {
      this.timer = setInterval(() => { this.produce() }, this.opts.blockTime ?? 1000)
    } else if (this.pool.size > 0) this.scheduleSeal()
  }

  private initGenesis (): void {
    const changes = this.runtime.genesisState().changes
    const ops: Array<{ type: 'put', key: string, value: string }> = []
    for (const [k, v] of changes) {
      if (v === null) continue
      this.state.set(k, v)
      const hex = u8aToHex(v)
      ops.push({ type: 'put', key: `c!${k}`, value: hex }, { type: 'put', key: `h!${k}!${pad(0)}`, value: hex })
    }
    this.stateRoot = u8aToHex(blake2AsU8a(u8aConcat(...[...changes.keys()].sort().map(k => u8aConcat(hexToU8a(k), changes.get(k) ?? new Uint8Array())))))
    const header: StoredHeader = { parentHash: ZERO, number: '0x0', stateRoot: this.stateRoot, extrinsicsRoot: u8aToHex(blake2AsU8a(Uint8Array.of(0))), digest: { logs: [] } }
    const hash = this.headerHash(header)
    const block: StoredBlock = { hash, header, extrinsics: [] }
    this.blocks.set(hash, block)
    this.hashes.push(hash)
    this.genesisHash = hash
    ops.push({ type: 'put', key: `b!${hash}`, value: JSON.stringify(block) }, { type: 'put', key: `n!${pad(0)}`, value: hash },
      { type: 'put', key: 'm!head', value: '0' }, { type: 'put', key: 'm!finalized', value: '0' }, { type: 'put', key: 'm!genesis', value: hash })
    this.store.enqueue(ops)
    this.opts.log?.info({ genesis: hash }, 'new dev chain')
  }

  private async load (head: number): Promise<void> {
    for (const [k, v] of await this.store.loadPrefix('c!')) this.state.set(k, hexToU8a(v))
    for (const [, hash] of await this.store.loadPrefix('n!')) this.hashes.push(hash)
    if (this.hashes.length !== head + 1) throw new Error(`chain store is inconsistent: head ${head}, ${this.hashes.length} block hashes`)
    for (const [hash, json] of await this.store.loadPrefix('b!')) this.blocks.set(hash, JSON.parse(json) as StoredBlock)
    this.genesisHash = this.hashes[0]
    this.finalizedNumber = Number(await this.store.get('m!finalized') ?? '0')
    this.stateRoot = this.head.header.stateRoot
    // the pool survives restarts; transactions that became invalid are dropped
    for (const [hash, hex] of await this.store.loadPrefix('p!')) {
      try { this.admit(hexToU8a(hex)) } catch { this.store.enqueue([{ type: 'del', key: `p!${hash}` }]) }
    }
    this.opts.log?.info({ head, genesis: this.genesisHash, pool: this.pool.size }, 'dev chain loaded')
  }

  headerHash (h: StoredHeader): string {
    return this.runtime.types.registry.createType('Header', h).hash.toHex()
  }

  numberOf (hash: string): number | undefined {
    const b = this.blocks.get(hash)
    return b === undefined ? undefined : parseInt(b.header.number, 16)
  }

  // ---- pool ----

  /** Validates and inserts synchronously, so nonce queries right after see it. */
  submit (bytes: Uint8Array): ValidTx {
    if (this.closed) throw new TxInvalid(1010, 'Invalid Transaction', 'chain is shutting down')
    const tx = this.admit(bytes)
    this.store.enqueue([{ type: 'put', key: `p!${tx.hash}`, value: u8aToHex(bytes) }])
    if (this.opts.instantSeal === true) this.scheduleSeal()
    return tx
  }

  private admit (bytes: Uint8Array): ValidTx {
    if (this.pool.size >= (this.opts.maxPool ?? 50_000)) throw new TxInvalid(1016, 'Immediately Dropped', 'The transaction pool is full')
    const tx = this.runtime.validate(this.stateReader(), bytes, {
      number: this.headNumber + 1,
      genesisHash: this.genesisHash,
      blockHash: (n: number) => this.hashes[n]
    })
    const sn = `${tx.sender}:${tx.nonce}`
    if (this.pool.has(tx.hash) || this.poolBySenderNonce.has(sn)) {
      throw new TxInvalid(1014, 'Priority is too low: (0 vs 0)', 'The transaction has too low priority to replace another transaction already in the pool.')
    }
    this.pool.set(tx.hash, { tx, seq: this.seq++ })
    this.poolBySenderNonce.set(sn, tx.hash)
    return tx
  }

  private drop (hash: string): void {
    const e = this.pool.get(hash)
    if (e === undefined) return
    this.pool.delete(hash)
    this.poolBySenderNonce.delete(`${e.tx.sender}:${e.tx.nonce}`)
  }

  /** Next nonce of an account counting its ready pool transactions. */
  nextNonce (account: string): number {
    let n = this.accountNonce(account)
    while (this.poolBySenderNonce.has(`${account}:${n}`)) n++
    return n
  }

  private accountNonce (account: string): number {
    const k = this.storageKeyAccount(account)
    const raw = this.state.get(k)
    if (raw === undefined) return 0
    return new DataView(raw.buffer, raw.byteOffset).getUint32(0, true)
  }

  storageKeyAccount (account: string): string {
    const info = this.runtime.types.storage('System', 'Account')
    const enc = hexToU8a(account)
    return u8aToHex(u8aConcat(info.prefix, blake2AsU8a(enc, 128), enc))
  }

  pending (): string[] { return [...this.pool.values()].sort((a, b) => a.seq - b.seq).map(e => u8aToHex(e.tx.bytes)) }

  stateReader (): { get: (k: string) => Uint8Array | undefined } {
    return { get: (k: string) => this.state.get(k) }
  }

  // ---- blocks ----

  private scheduleSeal (): void {
    if (this.sealScheduled || this.closed) return
    this.sealScheduled = true
    setImmediate(() => {
      this.sealScheduled = false
      if (this.pool.size > 0) this.produce()
    })
  }

  /** Builds, imports and announces one block. */
  produce (opts: { allowEmpty?: boolean } = {}): StoredBlock | undefined {
    if (this.closed) return undefined
    const parent = this.head
    const number = this.headNumber + 1
    const builder = this.runtime.initializeBlock(this.stateReader(), { number, parentHash: parent.hash })
    const included: ValidTx[] = []
    const max = this.opts.maxBlockExtrinsics ?? 8000
    const entries = [...this.pool.values()].sort((a, b) => a.seq - b.seq)
    const dropped: string[] = []
    // a sender's transactions may arrive out of nonce order: retry futures until no progress
    let progress = true
    let remaining = entries
    while (progress && included.length < max) {
      progress = false
      const next: PoolEntry[] = []
      for (const e of remaining) {
        if (included.length >= max) { next.push(e); continue }
        const r = builder.apply(e.tx)
        if (r.included) {
          included.push(e.tx)
          progress = true
        } else if (r.reason === 'future') next.push(e)
        else dropped.push(e.tx.hash)
      }
      remaining = next
    }
    const events = builder.finalize()
    const changes = builder.state.changes
    if (included.length === 0 && opts.allowEmpty === false) return undefined
    const extrinsics = included.map(t => u8aToHex(t.bytes))
    const diff = [...changes.keys()].sort().map(k => u8aConcat(hexToU8a(k), changes.get(k) ?? Uint8Array.of(0xff)))
    // state root: a hash chain over the state diffs (not a trie root; see docs/pallet-interface.md)
    this.stateRoot = u8aToHex(blake2AsU8a(u8aConcat(hexToU8a(this.stateRoot), blake2AsU8a(u8aConcat(...diff)))))
    const header: StoredHeader = {
      parentHash: parent.hash,
      number: '0x' + number.toString(16),
      stateRoot: this.stateRoot,
      extrinsicsRoot: u8aToHex(blake2AsU8a(u8aConcat(compactToU8a(included.length), ...included.map(t => t.bytes)))),
      digest: { logs: [] }
    }
    const hash = this.headerHash(header)
    const block: StoredBlock = { hash, header, extrinsics }
    // import: memory first (synchronous for readers), then one LevelDB batch
    const ops: Array<{ type: 'put', key: string, value: string } | { type: 'del', key: string }> = []
    const changedKeys: string[] = []
    for (const [k, v] of changes) {
      changedKeys.push(k)
      if (v === null) {
        if (this.state.delete(k)) this.sortedKeys = undefined
        ops.push({ type: 'del', key: `c!${k}` }, { type: 'put', key: `h!${k}!${pad(number)}`, value: '' })
      } else {
        if (!this.state.has(k)) this.sortedKeys = undefined
        this.state.set(k, v)
        const hex = u8aToHex(v)
        ops.push({ type: 'put', key: `c!${k}`, value: hex }, { type: 'put', key: `h!${k}!${pad(number)}`, value: hex })
      }
    }
    this.blocks.set(hash, block)
    this.hashes.push(hash)
    for (const t of included) this.drop(t.hash)
    for (const h of dropped) this.drop(h)
    const prevFinal = this.finalizedNumber
    this.finalizedNumber = Math.max(0, number - 1)
    ops.push({ type: 'put', key: `b!${hash}`, value: JSON.stringify(block) }, { type: 'put', key: `n!${pad(number)}`, value: hash },
      { type: 'put', key: 'm!head', value: String(number) }, { type: 'put', key: 'm!finalized', value: String(this.finalizedNumber) })
    for (const t of [...included.map(x => x.hash), ...dropped]) ops.push({ type: 'del', key: `p!${t}` })
    this.store.enqueue(ops)
    this.opts.log?.debug({ number, hash, extrinsics: included.length, events: events.length }, 'block')
    this.emit('block', block, changedKeys)
    for (const t of included) this.emit(`tx:${t.hash}`, { inBlock: hash })
    for (const h of dropped) this.emit(`tx:${h}`, 'invalid')
    for (let n = prevFinal + 1; n <= this.finalizedNumber; n++) {
      const fb = this.blocks.get(this.hashes[n]) as StoredBlock
      this.emit('finalized', fb)
      for (const x of fb.extrinsics) this.emit(`tx:${u8aToHex(blake2AsU8a(hexToU8a(x)))}`, { finalized: fb.hash })
    }
    if (this.opts.instantSeal === true) {
      // finalize this block by sealing an empty one a little later (never in the same tick as inBlock)
      if (this.finalizeTimer !== undefined) clearTimeout(this.finalizeTimer)
      if (included.length > 0) {
        this.finalizeTimer = setTimeout(() => { this.finalizeTimer = undefined; if (this.pool.size === 0) this.produce() }, this.opts.finalizeDelay ?? 100)
      }
      if (this.pool.size > 0 && included.length > 0) this.scheduleSeal()
    }
    return block
  }

  keys (): string[] {
    if (this.sortedKeys === undefined) this.sortedKeys = [...this.state.keys()].sort()
    return this.sortedKeys
  }

  async close (): Promise<void> {
    if (this.closed) return
    this.closed = true
    if (this.timer !== undefined) clearInterval(this.timer)
    if (this.finalizeTimer !== undefined) clearTimeout(this.finalizeTimer)
    await this.store.close()
  }
}
