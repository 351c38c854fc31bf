import { ApiPromise, WsProvider } from '@polkadot/api'
import { Keyring } from '@polkadot/keyring'
import type { KeyringPair } from '@polkadot/keyring/types'
import { cryptoWaitReady } from '@polkadot/util-crypto'
import { keepConnected, type Reconnector } from './reconnect.js'
import type { ChainClientOptions, ChainEvent } from './client-types.js'
import { ChainTransactions } from './transactions.js'

const CONNECT_TIMEOUT_MS = 15_000

async function withTimeout<T> (p: Promise<T>, ms: number, what: string): Promise<T> {
  let t: NodeJS.Timeout | undefined
  try {
    return await Promise.race([p, new Promise<never>((_resolve, reject) => { t = setTimeout(() => reject(new Error(what)), ms) })])
  } finally { clearTimeout(t) }
}

// the pallet's storage types, as this client returns them (defined once, with the runtime)
export type * from '../../protocols/pallet-types.js'
export { ROLE_SUBMITTER, ROLE_SOLVER, ROLE_VERIFIER, ROLE_WHISTLEBLOWER } from '../../protocols/roles.js'

// The node's typed chain client. It speaks only to the Arbitration pallet
// interface through an unmodified ApiPromise, so it works the same against
// the dev chain and a Substrate chain running the same pallet. Its reads are
// in queries.ts, its writes in transactions.ts; here: connecting and
// subscriptions.

export { ChainError, type ChainClientOptions, type ChainEvent, type TxOutcome } from './client-types.js'

export class ChainClient extends ChainTransactions {
  private constructor (api: ApiPromise, pair: KeyringPair, opts: ChainClientOptions) {
    super(api, pair, opts)
  }

  static async connect (opts: ChainClientOptions): Promise<ChainClient> {
    await cryptoWaitReady()
    const pair = typeof opts.signer === 'string' ? new Keyring({ type: 'sr25519' }).addFromUri(opts.signer) : opts.signer
    // auto-connect off: a failed first connection throws (the caller retries
    // with a backoff) and a lost one is re-dialled by keepConnected, which logs each attempt
    const provider = new WsProvider(opts.url, false)
    const connecting = provider.connect()
    const api = await withTimeout(ApiPromise.create({ provider, noInitWarn: true, throwOnConnect: true }), CONNECT_TIMEOUT_MS, `no answer from the chain at ${opts.url} within ${CONNECT_TIMEOUT_MS / 1000} s`)
      .catch(async (err: unknown) => { await provider.disconnect().catch(() => {}); throw err })
    await connecting.catch(() => {})
    const client = new ChainClient(api, pair, opts)
    client.reconnector = keepConnected(provider, opts.url, opts.log)
    return client
  }

  private reconnector?: Reconnector

  async disconnect (): Promise<void> {
    this.reconnector?.stop()
    await this.api.disconnect()
  }

  // ---- subscriptions ----
  /** Calls back with every event of every new (or finalized) block; returns an unsubscribe function. */
  async onEvents (cb: (e: ChainEvent) => void, opts: { finalized?: boolean } = {}): Promise<() => void> {
    let chain = Promise.resolve()
    const handle = (header: { hash: { toHex: () => string } }): void => {
      const h = header.hash.toHex()
      chain = chain.then(async () => { for (const e of await this.eventsAt(h)) cb(e) }).catch(() => {})
    }
    const un = opts.finalized === true
      ? await this.api.rpc.chain.subscribeFinalizedHeads(handle)
      : await this.api.rpc.chain.subscribeNewHeads(handle)
    return un
  }
}
