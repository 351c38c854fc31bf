import { EventEmitter } from 'node:events'
import { hexToU8a, u8aToHex } from '@polkadot/util'
import { blake2AsU8a, cryptoWaitReady } from '@polkadot/util-crypto'
import type { Logger } from '../../node/log.js'
import { Runtime, type GenesisConfig, type ValidTx, type ValidationEnv } from './runtime/executive.js'
import type { ReferenceSemantics } from './runtime/adjudication.js'
import type { StateReader } from './runtime/state.js'
import { faultsOf } from './runtime/hook-guard.js'
import { ChainStore, type StoredBlock, type StoredHeader } from './store.js'
import { VerifyPool, defaultVerifyWorkers } from './verify-pool.js'
import { RandomnessAuthor } from './randomness-author.js'
import { TxPool, type AsyncVerifier } from './tx-pool.js'
import { SealSchedule } from './seal-schedule.js'
import { ZERO_HASH, blockHeader, executeBlock, genesisHeader, headerHash, nextStateRoot } from './block-authoring.js'
import { blockOps, genesisOps, importState } from './block-import.js'
import { accountNonce, accountStorageKey } from './account-nonce.js'

export type { AsyncVerifier } from './tx-pool.js'

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

export type TxStatus = 'ready' | 'future' | { inBlock: string } | { finalized: string } | 'dropped' | 'invalid'

export class DevChain extends EventEmitter {
  readonly runtime: Runtime
  readonly store: ChainStore
  /** current (best) state */
  readonly state = new Map<string, Uint8Array>()
  private sortedKeys: string[] | undefined
  readonly hashes: string[] = []
  readonly blocks = new Map<string, StoredBlock>()
  genesisHash = ZERO_HASH
  finalizedNumber = 0
  /** the newest finalized block on disk: the one clients are told about */
  private announcedFinalized = 0
  private readonly pool: TxPool
  private readonly seal: SealSchedule
  private closed = false
  private stateRoot = ZERO_HASH
  private readonly verifier: AsyncVerifier
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
    this.seal = new SealSchedule(opts, () => { this.produce() }, () => this.pool.size)
    const host = {
      runtime: this.runtime,
      store: this.store,
      stateReader: () => this.stateReader(),
      validationEnv: () => this.validationEnv(),
      accountNonce: (a: string) => this.accountNonce(a)
    }
    this.pool = new TxPool(host, this.verifier, opts.maxPool ?? 50_000, () => { this.seal.afterSubmit() }, hashes => { for (const h of hashes) this.emit(`tx:${h}`, 'dropped') })
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
    this.seal.start()
  }

  private initGenesis (): void {
    this.author = RandomnessAuthor.generate()
    this.runtime.genesis.randomnessAuthor = this.author.publicKey
    const changes = this.runtime.genesisState().changes
    const header = genesisHeader(changes)
    this.stateRoot = header.stateRoot
    const hash = this.headerHash(header)
    const block: StoredBlock = { hash, header, extrinsics: [] }
    this.blocks.set(hash, block)
    this.hashes.push(hash)
    this.genesisHash = hash
    this.store.enqueue(genesisOps(this.state, changes, block, this.author.seed))
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
    await this.pool.reload()
    this.opts.log?.info({ head, genesis: this.genesisHash, pool: this.pool.size }, 'dev chain loaded')
  }

  headerHash (h: StoredHeader): string { return headerHash(this.runtime.types, h) }

  numberOf (hash: string): number | undefined {
    const b = this.blocks.get(hash)
    return b === undefined ? undefined : parseInt(b.header.number, 16)
  }

  // ---- pool ----

  /** Validates and inserts into the pool (see TxPool.submit): resolves once the transaction is in it. */
  async submit (bytes: Uint8Array): Promise<ValidTx> { return await this.pool.submit(bytes) }

  private validationEnv (): ValidationEnv {
    return { number: this.headNumber + 1, genesisHash: this.genesisHash, blockHash: (n: number) => this.hashes[n] }
  }

  /** Next nonce of an account counting its ready pool transactions. */
  nextNonce (account: string): number { return this.pool.nextNonce(account) }

  private accountNonce (account: string): number { return accountNonce(this.state.get(this.storageKeyAccount(account))) }

  storageKeyAccount (account: string): string { return accountStorageKey(this.runtime.types, account) }

  pending (): string[] { return this.pool.pending() }

  stateReader (): StateReader {
    return { get: (k: string) => this.state.get(k) }
  }

  // ---- blocks ----

  /** Builds, imports and announces one block. */
  produce (opts: { allowEmpty?: boolean } = {}): StoredBlock | undefined {
    if (this.closed) return undefined
    const parent = this.head
    const number = this.headNumber + 1
    if (this.author === undefined) throw new Error('the chain is not started')
    const randomness = this.author.sign(this.runtime.previousRandomness(this.stateReader()), number)
    const dropped: string[] = []
    const max = this.opts.maxBlockExtrinsics ?? 8000
    const env = { number, parentHash: parent.hash, randomness }
    const { included, events, changes } = executeBlock(this.runtime, this.stateReader(), env, this.pool.readyOrder(dropped), max, dropped)
    if (included.length === 0 && opts.allowEmpty === false) return undefined
    this.stateRoot = nextStateRoot(this.stateRoot, changes)
    const header = blockHeader(this.runtime.types, parent.hash, number, this.stateRoot, included, randomness)
    const hash = this.headerHash(header)
    const block: StoredBlock = { hash, header, extrinsics: included.map(t => u8aToHex(t.bytes)) }
    // import: memory first (synchronous for readers), then one LevelDB batch
    const { ops, changedKeys, keySetChanged } = importState(this.state, changes, number)
    if (keySetChanged) this.sortedKeys = undefined
    this.blocks.set(hash, block)
    this.hashes.push(hash)
    this.blockTxHashes.set(hash, included.map(t => t.hash))
    for (const t of included) this.pool.drop(t.hash)
    for (const h of dropped) this.pool.drop(h)
    const prevFinal = this.finalizedNumber
    this.finalizedNumber = Math.max(0, number - 1)
    ops.push(...blockOps(block, number, this.finalizedNumber, [...included.map(x => x.hash), ...dropped]))
    // the pool's pending puts first: a transaction admitted this tick and included now must not be saved after its delete
    this.pool.flush()
    const written = this.store.enqueue(ops)
    this.opts.log?.debug({ number, hash, extrinsics: included.length, events: events.length }, 'block')
    for (const f of faultsOf(events)) this.opts.log?.error({ number, taskId: f.taskId, reason: f.reason, refunded: f.refunded }, 'on_initialize faulted on a task: quarantined (phase Faulted), the block goes on')
    // the new best head is shown at once (readers see its state); what
    // acknowledges a transaction or a finality waits for the block's batch on
    // disk, so that a kill -9 cannot lose anything a client was told about.
    // Batches are written in order, so acknowledgements keep their order too.
    this.emit('block', block, changedKeys)
    for (const h of dropped) this.emit(`tx:${h}`, 'invalid')
    const finalizedNow = this.takeFinalized(prevFinal + 1, this.finalizedNumber)
    void written.then(ok => {
      if (!ok) { this.opts.log?.error({ number, hash }, 'block not written to disk: its transactions and finality are not announced'); return }
      for (const t of included) this.emit(`tx:${t.hash}`, { inBlock: hash })
      for (const f of finalizedNow) {
        this.announcedFinalized = Math.max(this.announcedFinalized, Number(f.block.header.number))
        this.emit('finalized', f.block)
        for (const h of f.txs) this.emit(`tx:${h}`, { finalized: f.block.hash })
      }
    })
    this.seal.afterBlock(included.length)
    return block
  }

  /** Blocks from..to (just finalized) with their transaction hashes, to announce once on disk. */
  private takeFinalized (from: number, to: number): Array<{ block: StoredBlock, txs: string[] }> {
    const out: Array<{ block: StoredBlock, txs: string[] }> = []
    for (let n = from; n <= to; n++) {
      const fb = this.blocks.get(this.hashes[n]) as StoredBlock
      const txs = this.blockTxHashes.get(fb.hash) ?? fb.extrinsics.map(x => u8aToHex(blake2AsU8a(hexToU8a(x))))
      this.blockTxHashes.delete(fb.hash)
      out.push({ block: fb, txs })
    }
    return out
  }

  keys (): string[] {
    if (this.sortedKeys === undefined) this.sortedKeys = [...this.state.keys()].sort()
    return this.sortedKeys
  }

  async close (): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.seal.close()
    this.pool.close()
    await this.verifier.close()
    await this.store.close()
  }
}
