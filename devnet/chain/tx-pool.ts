import { hexToU8a, u8aToHex } from '@polkadot/util'
import { TxInvalid, badSignature, type DecodedTx, type Runtime, type ValidTx, type ValidationEnv } from './runtime/executive.js'
import type { StateReader } from './runtime/state.js'
import { classify, deadlineCall, type TxClass } from './runtime/tx-class.js'
import type { SignatureJob } from './runtime/signature.js'
import type { ChainStore, StoreOp } from './store.js'

// The transaction pool of the dev chain: admission (stateless checks, the
// signature in the verify pool, then the stateful checks in arrival order),
// one transaction per sender and nonce, persistence under p!<hash>, and the
// order in which a block takes them: operational transactions (calls that meet
// a protocol deadline and would succeed, runtime/tx-class.ts) first, and a full
// pool makes room for one by dropping the newest normal transaction, so a
// flood of free calls can neither keep a party's answer out nor delay it.

/** What the chain needs from a signature verifier (VerifyPool implements it). */
export interface AsyncVerifier {
  readonly size: number
  verify: (job: SignatureJob) => Promise<boolean>
  close: () => Promise<void>
}

/** What the pool reads of the chain it belongs to. */
export interface PoolHost {
  readonly runtime: Runtime
  readonly store: ChainStore
  stateReader: () => StateReader
  validationEnv: () => ValidationEnv
  accountNonce: (account: string) => number
}

export interface PoolEntry {
  tx: ValidTx
  seq: number
  cls: TxClass
  /** a deadline call found normal (it would fail now): classified again once it is its sender's next */
  recheck: boolean
}

/** How many of its sender's pooled transactions a deadline call's dry run runs first; behind more it waits its turn. */
const MAX_CHAIN = 4

/** A submission whose signature is being verified; admitted strictly in arrival order. */
interface Admission {
  decoded: DecodedTx
  verdict: boolean | undefined
  resolve: (tx: ValidTx) => void
  reject: (e: unknown) => void
}

const poolFull = (): TxInvalid => new TxInvalid(1016, 'Immediately Dropped', 'The transaction pool is full')
const tooLowPriority = (): TxInvalid => new TxInvalid(1014, 'Priority is too low: (0 vs 0)', 'The transaction has too low priority to replace another transaction already in the pool.')
const shuttingDown = (): TxInvalid => new TxInvalid(1010, 'Invalid Transaction', 'chain is shutting down')

export class TxPool {
  private readonly entries = new Map<string, PoolEntry>()
  private readonly bySenderNonce = new Map<string, string>()
  private seq = 0
  private readonly admissions: Admission[] = []
  private ops: StoreOp[] = []
  private closed = false

  /**
   * `onAdded` runs after each submission is in the pool (instant seal schedules a block there);
   * `onEvicted` gets the transactions a full pool dropped to take an operational one (their watchers are told).
   */
  constructor (
    private readonly host: PoolHost, private readonly verifier: AsyncVerifier, private readonly maxPool: number, private readonly onAdded: () => void,
    private readonly onEvicted: (hashes: string[]) => void = () => {}
  ) {}

  get size (): number { return this.entries.size }

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
    if (this.closed) throw shuttingDown()
    if (this.admissions.length >= this.maxPool) throw poolFull()
    const decoded = this.host.runtime.decode(bytes, this.host.validationEnv())
    // only a deadline call can make room in a full pool (if it turns out operational)
    if (this.entries.size + this.admissions.length >= this.maxPool && !deadlineCall(decoded)) throw poolFull()
    if (this.entries.has(decoded.hash)) throw tooLowPriority()
    const tx = await new Promise<ValidTx>((resolve, reject) => {
      const a: Admission = { decoded, verdict: undefined, resolve, reject }
      this.admissions.push(a)
      this.verifier.verify(decoded.signature).then(ok => { a.verdict = ok; this.drainAdmissions() }, () => { a.verdict = false; this.drainAdmissions() })
    })
    this.ops.push({ type: 'put', key: `p!${tx.hash}`, value: u8aToHex(bytes) })
    if (this.ops.length === 1) setImmediate(() => { this.flush() })
    this.onAdded()
    return tx
  }

  /**
   * Pool writes of one tick go to LevelDB as one batch. Whoever deletes pool entries
   * (a block, an eviction) flushes first, so a put is never written after its delete.
   */
  flush (): void {
    const ops = this.ops
    this.ops = []
    if (ops.length > 0) this.host.store.enqueue(ops)
  }

  private drainAdmissions (): void {
    while (this.admissions.length > 0 && this.admissions[0].verdict !== undefined) {
      const a = this.admissions.shift() as Admission
      if (this.closed) { a.reject(shuttingDown()); continue }
      try {
        if (a.verdict !== true) throw badSignature()
        a.resolve(this.insert(this.host.runtime.check(this.host.stateReader(), a.decoded, this.host.validationEnv())))
      } catch (e) {
        a.reject(e)
      }
    }
  }

  /** Reloads the pool saved in the store; transactions that became invalid are dropped. */
  async reload (): Promise<void> {
    for (const [hash, hex] of await this.host.store.loadPrefix('p!')) {
      try { this.admit(hexToU8a(hex)) } catch { this.host.store.enqueue([{ type: 'del', key: `p!${hash}` }]) }
    }
  }

  /** Synchronous admission with inline verification (pool reload after a restart). */
  private admit (bytes: Uint8Array): ValidTx {
    if (this.entries.size >= this.maxPool) throw poolFull()
    return this.insert(this.host.runtime.validate(this.host.stateReader(), bytes, this.host.validationEnv()))
  }

  private insert (tx: ValidTx): ValidTx {
    const sn = `${tx.sender}:${tx.nonce}`
    if (this.entries.has(tx.hash) || this.bySenderNonce.has(sn)) throw tooLowPriority()
    const cls = this.classOf(tx)
    if (this.entries.size >= this.maxPool) {
      const victim = cls === 'operational' ? this.newestNormal() : undefined
      if (victim === undefined) throw poolFull()
      // with it go its sender's later transactions, which could never be included without it
      const gone: StoreOp[] = []
      for (let n = victim.tx.nonce, h; (h = this.bySenderNonce.get(`${victim.tx.sender}:${n}`)) !== undefined; n++) {
        this.drop(h)
        gone.push({ type: 'del', key: `p!${h}` })
      }
      this.flush()
      this.host.store.enqueue(gone)
      const hashes = gone.map(o => o.key.slice(2))
      setImmediate(() => { this.onEvicted(hashes) })
    }
    this.entries.set(tx.hash, { tx, seq: this.seq++, cls, recheck: cls === 'normal' && deadlineCall(tx) })
    this.bySenderNonce.set(sn, tx.hash)
    return tx
  }

  /** Dry-runs a deadline call after its sender's pooled predecessors (all of them, at most MAX_CHAIN). */
  private classOf (tx: ValidTx): TxClass {
    if (!deadlineCall(tx)) return 'normal'
    const first = this.host.accountNonce(tx.sender)
    if (tx.nonce < first || tx.nonce - first > MAX_CHAIN) return 'normal'
    const before: ValidTx[] = []
    for (let n = first; n < tx.nonce; n++) {
      const h = this.bySenderNonce.get(`${tx.sender}:${n}`)
      if (h === undefined) return 'normal'
      before.push((this.entries.get(h) as PoolEntry).tx)
    }
    return classify(this.host.runtime, this.host.stateReader(), before, tx, this.host.validationEnv())
  }

  /** The newest normal transaction that no operational one of its sender waits on. */
  private newestNormal (): PoolEntry | undefined {
    let victim: PoolEntry | undefined
    for (const e of this.entries.values()) {
      if (e.cls !== 'normal' || (victim !== undefined && e.seq < victim.seq) || this.beforeOperational(e)) continue
      victim = e
    }
    return victim
  }

  private beforeOperational (e: PoolEntry): boolean {
    for (let n = e.tx.nonce + 1; n <= e.tx.nonce + MAX_CHAIN; n++) {
      const h = this.bySenderNonce.get(`${e.tx.sender}:${n}`)
      if (h === undefined) return false
      if (this.entries.get(h)?.cls === 'operational') return true
    }
    return false
  }

  drop (hash: string): void {
    const e = this.entries.get(hash)
    if (e === undefined) return
    this.entries.delete(hash)
    this.bySenderNonce.delete(`${e.tx.sender}:${e.tx.nonce}`)
  }

  /** Next nonce of an account counting its ready pool transactions. */
  nextNonce (account: string): number {
    let n = this.host.accountNonce(account)
    while (this.bySenderNonce.has(`${account}:${n}`)) n++
    return n
  }

  pending (): string[] { return [...this.entries.values()].sort((a, b) => a.seq - b.seq).map(e => u8aToHex(e.tx.bytes)) }

  /**
   * The pool's includable transactions in inclusion order: per sender, the run
   * of consecutive nonces from the account nonce (later ones wait for the gap
   * to fill: the future queue); across senders operational before normal, then
   * by arrival, a transaction never before its predecessors (a normal one that
   * an operational one of its sender waits on goes with it). Stale ones go to
   * `dropped`.
   */
  readyOrder (dropped: string[]): PoolEntry[] {
    const bySender = new Map<string, PoolEntry[]>()
    for (const e of this.entries.values()) {
      const l = bySender.get(e.tx.sender)
      if (l === undefined) bySender.set(e.tx.sender, [e])
      else l.push(e)
    }
    const ready: Array<{ e: PoolEntry, key: number, rank: number }> = []
    for (const [sender, list] of bySender) {
      list.sort((a, b) => a.tx.nonce - b.tx.nonce)
      let expect = this.host.accountNonce(sender)
      let key = -1
      const run: Array<{ e: PoolEntry, key: number, rank: number }> = []
      for (const e of list) {
        if (e.tx.nonce < expect) { dropped.push(e.tx.hash); continue }
        if (e.tx.nonce > expect) break
        if (e.recheck && run.length === 0) {
          e.recheck = false
          e.cls = this.classOf(e.tx)
        }
        key = Math.max(key, e.seq)
        run.push({ e, key, rank: e.cls === 'operational' ? 1 : 0 })
        expect++
      }
      for (let i = run.length - 2; i >= 0; i--) run[i].rank = Math.max(run[i].rank, run[i + 1].rank)
      ready.push(...run)
    }
    // equal keys only within one sender (key = a seq of that sender): nonce order
    return ready.sort((a, b) => b.rank - a.rank || a.key - b.key || a.e.tx.nonce - b.e.tx.nonce).map(x => x.e)
  }

  /** Rejects the submissions still waiting for their verdict's turn and writes the last batch. */
  close (): void {
    this.closed = true
    this.drainAdmissions()
    this.flush()
  }
}
