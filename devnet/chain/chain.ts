import { EventEmitter } from 'node:events'
import { compactToU8a, hexToU8a, u8aConcat, u8aToHex } from '@polkadot/util'
import { blake2AsU8a, cryptoWaitReady } from '@polkadot/util-crypto'
import type { Logger } from '../../node/log.js'
import { Runtime, TxInvalid, badSignature, type DecodedTx, type GenesisConfig, type ValidTx, type ValidationEnv } from './runtime/executive.js'
import type { ReferenceSemantics } from './runtime/adjudication.js'
import { ChainStore, pad, type StoredBlock, type StoredHeader } from './store.js'
import type { SignatureJob } from './runtime/signature.js'
import { VerifyPool, defaultVerifyWorkers } from './verify-pool.js'
import { RandomnessAuthor } from './randomness-author.js'
import { RANDOMNESS_ENGINE_ID } from '../../protocols/randomness.js'

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
  /**
   * delay of the empty block that finalizes an instant-sealed block (default 300 ms): @polkadot/api
   * switchMaps transaction statuses, so a `finalized` that arrives while it still fetches the
   * `inBlock` block and events cancels the inBlock result; on a loaded machine 100 ms was too short
   */
  finalizeDelay?: number
  maxBlockExtrinsics?: number
  maxPool?: number
  /** signature-verification worker threads (0 = verify on the main thread); default defaultVerifyWorkers() */
  verifyWorkers?: number
  /** replaces the worker pool (tests: verdicts that complete out of order) */
  verifier?: AsyncVerifier
  log?: Logger
}

/** What the chain needs from a signature verifier (VerifyPool implements it). */
export interface AsyncVerifier {
  readonly size: number
  verify: (job: SignatureJob) => Promise<boolean>
  close: () => Promise<void>
}

export type TxStatus = 'ready' | 'future' | { inBlock: string } | { finalized: string } | 'dropped' | 'invalid'

interface PoolEntry { tx: ValidTx, seq: number }

/** A submission whose signature is being verified; admitted strictly in arrival order. */
interface Admission {
  decoded: DecodedTx
  verdict: boolean | undefined
  resolve: (tx: ValidTx) => void
  reject: (e: unknown) => void
}

type StoreOp = { type: 'put', key: string, value: string } | { type: 'del', key: string }

const ZERO = '0x' + '00'.repeat(32)
const poolFull = (): TxInvalid => new TxInvalid(1016, 'Immediately Dropped', 'The transaction pool is full')
const tooLowPriority = (): TxInvalid => new TxInvalid(1014, 'Priority is too low: (0 vs 0)', 'The transaction has too low priority to replace another transaction already in the pool.')

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
  /** the newest finalized block on disk: the one clients are told about */
  private announcedFinalized = 0
  private readonly pool = new Map<string, PoolEntry>()
  private readonly poolBySenderNonce = new Map<string, string>()
  private seq = 0
  private timer: NodeJS.Timeout | undefined
  private sealScheduled = false
  private finalizeTimer: NodeJS.Timeout | undefined
  private closed = false
  private stateRoot = ZERO
  private readonly verifier: AsyncVerifier
  private readonly admissions: Admission[] = []
  private poolOps: StoreOp[] = []
  /** extrinsic hashes of blocks not finalized yet (for the finalized notifications) */
  private readonly blockTxHashes = new Map<string, string[]>()
  /** the key whose VRF is each block's randomness (kept in the store, never served) */
  private author: RandomnessAuthor | undefined

  constructor (readonly opts: ChainOptions) {
    super()
    this.setMaxListeners(0)
    // the runtime gets its own genesis: the randomness author is set per chain at genesis
    this.runtime = new Runtime({ ...opts.genesis }, opts.reference)
    this.store = new ChainStore(opts.dataDir)
    this.verifier = opts.verifier ?? new VerifyPool(opts.verifyWorkers ?? defaultVerifyWorkers(), opts.log)
  }

  /** Number of signature-verification worker threads in use. */
  get verifyWorkers (): number { return this.verifier.size }

  get head (): StoredBlock { return this.blocks.get(this.hashes[this.hashes.length - 1]) as StoredBlock }
  get headNumber (): number { return this.hashes.length - 1 }
  get finalizedHash (): string { return this.hashes[this.announcedFinalized] }

  async start (): Promise<void> {
    await cryptoWaitReady()
    await this.store.open()
    const head = await this.store.get('m!head')
    if (head === undefined) this.initGenesis()
    else await this.load(Number(head))
    if (this.opts.instantSeal !== true) {
      this.timer = setInterval(() => { this.produce() }, this.opts.blockTime ?? 1000)
    } else if (this.pool.size > 0) this.scheduleSeal()
  }

  private initGenesis (): void {
    this.author = RandomnessAuthor.generate()
    this.runtime.genesis.randomnessAuthor = this.author.publicKey
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
      { type: 'put', key: 'm!head', value: '0' }, { type: 'put', key: 'm!finalized', value: '0' }, { type: 'put', key: 'm!genesis', value: hash },
      { type: 'put', key: 'm!randomness-key', value: u8aToHex(this.author.seed) })
    this.store.enqueue(ops)
    this.opts.log?.info({ genesis: hash }, 'new dev chain')
  }

  private async load (head: number): Promise<void> {
    for (const [k, v] of await this.store.loadPrefix('c!')) this.state.set(k, hexToU8a(v))
    for (const [, hash] of await this.store.loadPrefix('n!')) this.hashes.push(hash)
    if (this.hashes.length !== head + 1) throw new Error(`chain store is inconsistent: head ${head}, ${this.hashes.length} block hashes`)
    for (const [hash, json] of await this.store.loadPrefix('b!')) this.blocks.set(hash, JSON.parse(json) as StoredBlock)
    this.genesisHash = this.hashes[0]
    const seed = await this.store.get('m!randomness-key')
    if (seed === undefined) throw new Error(`the chain in ${this.opts.dataDir} has no randomness key (it was created before block randomness): start a new chain in an empty --data-dir`)
    this.author = RandomnessAuthor.fromSeed(seed)
    this.runtime.genesis.randomnessAuthor = this.author.publicKey
    this.finalizedNumber = Number(await this.store.get('m!finalized') ?? '0')
    this.announcedFinalized = this.finalizedNumber
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

  /**
   * Validates and inserts into the pool. Decoding and the stateless checks run
   * at once; the signature is verified by the verify pool; then the stateful
   * checks and the pool insertion run together, synchronously, in arrival
   * order (a reorder queue: a verdict that comes back early waits for those
   * before it). So when the promise resolves the transaction is in the pool,
   * and nonce queries answered after that see it, exactly as with inline
   * verification.
   */
  async submit (bytes: Uint8Array): Promise<ValidTx> {
    if (this.closed) throw new TxInvalid(1010, 'Invalid Transaction', 'chain is shutting down')
    if (this.pool.size + this.admissions.length >= (this.opts.maxPool ?? 50_000)) throw poolFull()
    const decoded = this.runtime.decode(bytes, this.validationEnv())
    if (this.pool.has(decoded.hash)) throw tooLowPriority()
    const tx = await new Promise<ValidTx>((resolve, reject) => {
      const a: Admission = { decoded, verdict: undefined, resolve, reject }
      this.admissions.push(a)
      this.verifier.verify(decoded.signature).then(ok => { a.verdict = ok; this.drainAdmissions() }, () => { a.verdict = false; this.drainAdmissions() })
    })
    this.poolOps.push({ type: 'put', key: `p!${tx.hash}`, value: u8aToHex(bytes) })
    if (this.poolOps.length === 1) setImmediate(() => this.flushPoolOps())
    if (this.opts.instantSeal === true) this.scheduleSeal()
    return tx
  }

  /** Pool writes of one tick go to LevelDB as one batch. */
  private flushPoolOps (): void {
    const ops = this.poolOps
    this.poolOps = []
    if (ops.length > 0) this.store.enqueue(ops)
  }

  private drainAdmissions (): void {
    while (this.admissions.length > 0 && this.admissions[0].verdict !== undefined) {
      const a = this.admissions.shift() as Admission
      if (this.closed) { a.reject(new TxInvalid(1010, 'Invalid Transaction', 'chain is shutting down')); continue }
      try {
        if (a.verdict !== true) throw badSignature()
        a.resolve(this.insert(this.runtime.check(this.stateReader(), a.decoded, this.validationEnv())))
      } catch (e) {
        a.reject(e)
      }
    }
  }

  private validationEnv (): ValidationEnv {
    return { number: this.headNumber + 1, genesisHash: this.genesisHash, blockHash: (n: number) => this.hashes[n] }
  }

  /** Synchronous admission with inline verification (pool reload after a restart). */
  private admit (bytes: Uint8Array): ValidTx {
    if (this.pool.size >= (this.opts.maxPool ?? 50_000)) throw poolFull()
    return this.insert(this.runtime.validate(this.stateReader(), bytes, this.validationEnv()))
  }

  private insert (tx: ValidTx): ValidTx {
    const sn = `${tx.sender}:${tx.nonce}`
    if (this.pool.has(tx.hash) || this.poolBySenderNonce.has(sn)) throw tooLowPriority()
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
    if (this.author === undefined) throw new Error('the chain is not started')
    const randomness = this.author.sign(this.runtime.previousRandomness(this.stateReader()), number)
    const builder = this.runtime.initializeBlock(this.stateReader(), { number, parentHash: parent.hash, randomness })
    const included: ValidTx[] = []
    const max = this.opts.maxBlockExtrinsics ?? 8000
    const dropped: string[] = []
    for (const e of this.readyOrder(dropped)) {
      if (included.length >= max) break
      const r = builder.apply(e.tx)
      if (r.included) included.push(e.tx)
      else if (r.reason !== 'future') dropped.push(e.tx.hash)
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
      // the randomness VRF rides in the header like BABE's pre-digest, so the block hash commits to it
      digest: { logs: [this.runtime.types.registry.createType('DigestItem', { PreRuntime: [RANDOMNESS_ENGINE_ID, randomness] }).toHex()] }
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
    this.blockTxHashes.set(hash, included.map(t => t.hash))
    for (const t of included) this.drop(t.hash)
    for (const h of dropped) this.drop(h)
    const prevFinal = this.finalizedNumber
    this.finalizedNumber = Math.max(0, number - 1)
    ops.push({ type: 'put', key: `b!${hash}`, value: JSON.stringify(block) }, { type: 'put', key: `n!${pad(number)}`, value: hash },
      { type: 'put', key: 'm!head', value: String(number) }, { type: 'put', key: 'm!finalized', value: String(this.finalizedNumber) })
    for (const t of [...included.map(x => x.hash), ...dropped]) ops.push({ type: 'del', key: `p!${t}` })
    const written = this.store.enqueue(ops)
    this.opts.log?.debug({ number, hash, extrinsics: included.length, events: events.length }, 'block')
    // the new best head is shown at once (readers see its state); what
    // acknowledges a transaction or a finality waits for the block's batch on
    // disk, so that a kill -9 cannot lose anything a client was told about.
    // Batches are written in order, so acknowledgements keep their order too.
    this.emit('block', block, changedKeys)
    for (const h of dropped) this.emit(`tx:${h}`, 'invalid')
    const finalizedNow: Array<{ block: StoredBlock, txs: string[] }> = []
    for (let n = prevFinal + 1; n <= this.finalizedNumber; n++) {
      const fb = this.blocks.get(this.hashes[n]) as StoredBlock
      const txs = this.blockTxHashes.get(fb.hash) ?? fb.extrinsics.map(x => u8aToHex(blake2AsU8a(hexToU8a(x))))
      this.blockTxHashes.delete(fb.hash)
      finalizedNow.push({ block: fb, txs })
    }
    void written.then(ok => {
      if (!ok) { this.opts.log?.error({ number, hash }, 'block not written to disk: its transactions and finality are not announced'); return }
      for (const t of included) this.emit(`tx:${t.hash}`, { inBlock: hash })
      for (const f of finalizedNow) {
        this.announcedFinalized = Math.max(this.announcedFinalized, Number(f.block.header.number))
        this.emit('finalized', f.block)
        for (const h of f.txs) this.emit(`tx:${h}`, { finalized: f.block.hash })
      }
    })
    if (this.opts.instantSeal === true) {
      // finalize this block by sealing an empty one a little later (never in the same tick as inBlock)
      if (this.finalizeTimer !== undefined) clearTimeout(this.finalizeTimer)
      if (included.length > 0) {
        this.finalizeTimer = setTimeout(() => { this.finalizeTimer = undefined; if (this.pool.size === 0) this.produce() }, this.opts.finalizeDelay ?? 300)
      }
      if (this.pool.size > 0 && included.length > 0) this.scheduleSeal()
    }
    return block
  }

  /**
   * The pool's includable transactions in inclusion order: per sender, the run
   * of consecutive nonces from the account nonce (later ones wait for the gap
   * to fill: the future queue); across senders by arrival, a transaction never
   * before its predecessors. Stale ones go to `dropped`.
   */
  private readyOrder (dropped: string[]): PoolEntry[] {
    const bySender = new Map<string, PoolEntry[]>()
    for (const e of this.pool.values()) {
      const l = bySender.get(e.tx.sender)
      if (l === undefined) bySender.set(e.tx.sender, [e])
      else l.push(e)
    }
    const ready: Array<{ e: PoolEntry, key: number }> = []
    for (const [sender, list] of bySender) {
      list.sort((a, b) => a.tx.nonce - b.tx.nonce)
      let expect = this.accountNonce(sender)
      let key = -1
      for (const e of list) {
        if (e.tx.nonce < expect) { dropped.push(e.tx.hash); continue }
        if (e.tx.nonce > expect) break
        key = Math.max(key, e.seq)
        ready.push({ e, key })
        expect++
      }
    }
    // equal keys only within one sender (key = a seq of that sender): nonce order
    return ready.sort((a, b) => a.key - b.key || a.e.tx.nonce - b.e.tx.nonce).map(x => x.e)
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
    this.drainAdmissions()
    this.flushPoolOps()
    await this.verifier.close()
    await this.store.close()
  }
}
