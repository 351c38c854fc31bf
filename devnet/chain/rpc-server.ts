import type { AddressInfo } from 'node:net'
import { hexToU8a, isHex, u8aToHex } from '@polkadot/util'
import { blake2AsU8a, decodeAddress } from '@polkadot/util-crypto'
import { WebSocketServer, type WebSocket } from 'ws'
import type { Logger } from '../../node/log.js'
import type { DevChain, TxStatus } from './chain.js'
import { RpcError } from './rpc-errors.js'
import { runtimeCall } from './runtime-api.js'
import { TxInvalid } from './runtime/executive.js'
import type { StoredBlock } from './store.js'

// Substrate JSON-RPC 2.0 over WebSocket: the subset @polkadot/api uses, plus
// engine_createBlock (manual seal, as in Substrate's manual-seal) for tests.

export const MAX_MESSAGE_BYTES = 8 * 1024 * 1024
const MAX_SUBSCRIPTIONS = 1024
const MAX_BATCH = 256
const MAX_KEYS = 1000

const invalidParams = (msg: string): RpcError => new RpcError(-32602, `Invalid params: ${msg}`)

type Params = unknown[]
interface Conn { ws: WebSocket, subs: Map<string, () => void> }
type Method = (p: Params, c: Conn) => unknown

function hexParam (v: unknown, what: string, bytes?: number): string {
  if (typeof v !== 'string' || !isHex(v) || v.length % 2 !== 0) throw invalidParams(`${what} must be 0x-prefixed hex`)
  if (bytes !== undefined && v.length !== 2 + 2 * bytes) throw invalidParams(`${what} must be ${bytes} bytes`)
  return v.toLowerCase()
}
function optHash (v: unknown): string | undefined {
  return v === undefined || v === null ? undefined : hexParam(v, 'block hash', 32)
}

export interface RpcServerOptions {
  host?: string
  port?: number
  log?: Logger
  name?: string
  /** serve calls that change the chain outside transactions (engine_createBlock): tests and instant-seal chains only, since every deadline is counted in blocks */
  unsafeRpc?: boolean
}

export class RpcServer {
  private wss: WebSocketServer | undefined
  private nextSub = 1
  private readonly methods: Record<string, Method>

  constructor (readonly chain: DevChain, readonly opts: RpcServerOptions = {}) {
    this.methods = this.buildMethods()
  }

  get url (): string {
    const a = this.wss?.address() as AddressInfo
    return `ws://${this.opts.host ?? '127.0.0.1'}:${a.port}`
  }

  async listen (): Promise<string> {
    const wss = new WebSocketServer({ host: this.opts.host ?? '127.0.0.1', port: this.opts.port ?? 9944, maxPayload: MAX_MESSAGE_BYTES })
    this.wss = wss
    await new Promise<void>((resolve, reject) => {
      wss.once('listening', resolve)
      wss.once('error', reject)
    })
    wss.on('error', e => this.opts.log?.error({ err: e }, 'rpc server error'))
    wss.on('connection', ws => this.onConnection(ws))
    return this.url
  }

  private onConnection (ws: WebSocket): void {
    const conn: Conn = { ws, subs: new Map() }
    ws.on('message', (data, isBinary) => { void this.onMessage(conn, isBinary ? Buffer.from(data as Buffer).toString('utf8') : data.toString()) })
    ws.on('close', () => { for (const un of conn.subs.values()) un(); conn.subs.clear() })
    ws.on('error', e => { this.opts.log?.debug({ err: e.message }, 'ws connection error') })
  }

  private send (conn: Conn, msg: unknown): void {
    if (conn.ws.readyState === conn.ws.OPEN) conn.ws.send(JSON.stringify(msg))
  }

  private async onMessage (conn: Conn, text: string): Promise<void> {
    let req: unknown
    try { req = JSON.parse(text) } catch {
      this.send(conn, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } })
      return
    }
    if (Array.isArray(req)) {
      if (req.length === 0 || req.length > MAX_BATCH) {
        this.send(conn, { jsonrpc: '2.0', id: null, error: { code: -32600, message: `Invalid request: batch of 1..${MAX_BATCH} calls` } })
        return
      }
      const out = []
      for (const r of req) out.push(await this.handle(conn, r))
      this.send(conn, out)
    } else this.send(conn, await this.handle(conn, req))
  }

  private async handle (conn: Conn, req: unknown): Promise<unknown> {
    const r = req as { id?: unknown, method?: unknown, params?: unknown }
    const id = typeof r?.id === 'number' || typeof r?.id === 'string' ? r.id : null
    if (r === null || typeof r !== 'object' || typeof r.method !== 'string') {
      return { jsonrpc: '2.0', id, error: { code: -32600, message: 'Invalid request' } }
    }
    // own properties only: "constructor" or "__proto__" are not methods
    const m = Object.hasOwn(this.methods, r.method) ? this.methods[r.method] : undefined
    if (m === undefined) return { jsonrpc: '2.0', id, error: { code: -32601, message: `Method not found: ${r.method.slice(0, 100)}` } }
    const params = r.params === undefined || r.params === null ? [] : r.params
    if (!Array.isArray(params)) return { jsonrpc: '2.0', id, error: { code: -32602, message: 'Invalid params: must be an array' } }
    try {
      const result = await m(params, conn)
      return { jsonrpc: '2.0', id, result: result === undefined ? null : result }
    } catch (e) {
      if (e instanceof RpcError) return { jsonrpc: '2.0', id, error: { code: e.code, message: e.message, data: e.data } }
      if (e instanceof TxInvalid) return { jsonrpc: '2.0', id, error: { code: e.code, message: e.message, data: e.data } }
      this.opts.log?.warn({ err: (e as Error).message, method: r.method }, 'rpc method failed')
      return { jsonrpc: '2.0', id, error: { code: -32603, message: `Internal error: ${(e as Error).message}` } }
    }
  }

  // ---- helpers ----
  private block (hash: string | undefined): StoredBlock {
    const h = hash ?? this.chain.head.hash
    const b = this.chain.blocks.get(h)
    if (b === undefined) throw new RpcError(4003, `Client error: UnknownBlock: header not found for ${h}`)
    return b
  }

  private async storageAt (key: string, at: string | undefined): Promise<string | null> {
    const b = this.block(at)
    if (b.hash === this.chain.head.hash) {
      const v = this.chain.state.get(key)
      return v === undefined ? null : u8aToHex(v)
    }
    return await this.chain.store.valueAt(key, parseInt(b.header.number, 16)) ?? null
  }

  private async keysAt (prefix: string, at: string | undefined): Promise<string[]> {
    const b = this.block(at)
    if (b.hash === this.chain.head.hash) return this.chain.keys().filter(k => k.startsWith(prefix))
    return await this.chain.store.keysAt(prefix, parseInt(b.header.number, 16))
  }

  private subscribe (conn: Conn, notify: string, start: (emit: (result: unknown) => void) => () => void): string {
    if (conn.subs.size >= MAX_SUBSCRIPTIONS) throw new RpcError(-32000, 'Too many subscriptions on this connection')
    const id = `ps${this.nextSub++}`
    const note = (result: unknown): void => this.send(conn, { jsonrpc: '2.0', method: notify, params: { subscription: id, result } })
    // listen at once (so nothing is missed) but hold notifications until the reply with the id is out
    let live = false
    const queue: unknown[] = []
    const emit = (result: unknown): void => { if (live) note(result); else queue.push(result) }
    conn.subs.set(id, start(emit))
    setImmediate(() => { live = true; for (const r of queue) note(r); queue.length = 0 })
    return id
  }

  private unsubscribe (conn: Conn, p: Params): boolean {
    const id = p[0]
    if (typeof id !== 'string') throw invalidParams('subscription id')
    const un = conn.subs.get(id)
    if (un === undefined) return false
    un()
    conn.subs.delete(id)
    return true
  }

  private headSub (conn: Conn, notify: string, event: 'block' | 'finalized', current: () => StoredBlock): string {
    return this.subscribe(conn, notify, emit => {
      emit(current().header)
      const f = (b: StoredBlock): void => emit(b.header)
      this.chain.on(event, f)
      return () => this.chain.off(event, f)
    })
  }

  private submitBytes (p: Params): Uint8Array {
    const hex = hexParam(p[0], 'extrinsic')
    return hexToU8a(hex)
  }

  private buildMethods (): Record<string, Method> {
    const c = this.chain
    const rt = c.runtime
    const version = (): unknown => rt.version
    const methods: Record<string, Method> = {
      rpc_methods: () => ({ version: 1, methods: Object.keys(methods).sort() }),
      system_chain: () => this.opts.name ?? 'proofswarm dev',
      system_name: () => 'proofswarm-devchain',
      system_version: () => '0.1.0',
      system_chainType: () => 'Development',
      system_properties: () => ({ ss58Format: rt.genesis.constants.ss58Prefix, tokenDecimals: 12, tokenSymbol: 'UNIT' }),
      system_health: () => ({ peers: 0, isSyncing: false, shouldHavePeers: false }),
      system_peers: () => [],
      system_localPeerId: () => '',
      system_nodeRoles: () => ['Authority'],
      system_syncState: () => ({ startingBlock: 0, currentBlock: c.headNumber, highestBlock: c.headNumber }),
      system_accountNextIndex: p => {
        if (typeof p[0] !== 'string') throw invalidParams('account id')
        let acc: string
        try { acc = u8aToHex(decodeAddress(p[0])) } catch { throw invalidParams('account id is not an SS58 address or 32-byte hex') }
        return c.nextNonce(acc)
      },
      chain_getBlockHash: p => {
        const one = (n: unknown): string | null => {
          if (n === undefined || n === null) return c.head.hash
          const v = typeof n === 'string' && isHex(n) ? parseInt(n, 16) : n
          if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw invalidParams('block number')
          return c.hashes[v] ?? null
        }
        return Array.isArray(p[0]) ? p[0].slice(0, MAX_KEYS).map(one) : one(p[0])
      },
      chain_getHeader: p => {
        const h = optHash(p[0])
        const b = h === undefined ? c.head : c.blocks.get(h)
        return b === undefined ? null : b.header
      },
      chain_getBlock: p => {
        const h = optHash(p[0])
        const b = h === undefined ? c.head : c.blocks.get(h)
        return b === undefined ? null : { block: { header: b.header, extrinsics: b.extrinsics }, justifications: null }
      },
      chain_getFinalizedHead: () => c.finalizedHash,
      chain_subscribeNewHeads: (_p, conn) => this.headSub(conn, 'chain_newHead', 'block', () => c.head),
      chain_subscribeAllHeads: (_p, conn) => this.headSub(conn, 'chain_allHead', 'block', () => c.head),
      chain_subscribeFinalizedHeads: (_p, conn) => this.headSub(conn, 'chain_finalizedHead', 'finalized', () => c.blocks.get(c.finalizedHash) as StoredBlock),
      chain_unsubscribeNewHeads: (p, conn) => this.unsubscribe(conn, p),
      chain_unsubscribeAllHeads: (p, conn) => this.unsubscribe(conn, p),
      chain_unsubscribeFinalizedHeads: (p, conn) => this.unsubscribe(conn, p),
      state_getMetadata: p => { this.block(optHash(p[0])); return rt.types.metadataHex },
      state_getRuntimeVersion: p => { this.block(optHash(p[0])); return version() },
      state_call: p => {
        if (typeof p[0] !== 'string') throw invalidParams('method must be a string')
        this.block(optHash(p[2]))
        return runtimeCall(p[0], p[1] === undefined || p[1] === null ? '0x' : hexParam(p[1], 'data'), rt.types.metadataHex)
      },
      state_getStorage: async p => await this.storageAt(hexParam(p[0], 'storage key'), optHash(p[1])),
      state_getStorageHash: async p => {
        const v = await this.storageAt(hexParam(p[0], 'storage key'), optHash(p[1]))
        return v === null ? null : u8aToHex(blake2AsU8a(hexToU8a(v)))
      },
      state_getStorageSize: async p => {
        const v = await this.storageAt(hexParam(p[0], 'storage key'), optHash(p[1]))
        return v === null ? null : (v.length - 2) / 2
      },
      state_queryStorageAt: async p => {
        if (!Array.isArray(p[0]) || p[0].length > MAX_KEYS) throw invalidParams(`keys must be an array of at most ${MAX_KEYS}`)
        const keys = p[0].map((k, i) => hexParam(k, `key ${i}`))
        const at = this.block(optHash(p[1]))
        const changes: Array<[string, string | null]> = []
        for (const k of keys) changes.push([k, await this.storageAt(k, at.hash)])
        return [{ block: at.hash, changes }]
      },
      state_getKeysPaged: async p => {
        const prefix = p[0] === null || p[0] === undefined ? '0x' : hexParam(p[0], 'prefix')
        const count = p[1]
        if (typeof count !== 'number' || !Number.isInteger(count) || count < 0 || count > MAX_KEYS) throw invalidParams(`count must be an integer in [0, ${MAX_KEYS}]`)
        const start = p[2] === null || p[2] === undefined ? undefined : hexParam(p[2], 'start key')
        const keys = await this.keysAt(prefix, optHash(p[3]))
        return keys.filter(k => start === undefined || k > start).slice(0, count)
      },
      state_getKeys: async p => (await this.keysAt(hexParam(p[0], 'prefix'), optHash(p[1]))).slice(0, MAX_KEYS * 10),
      state_subscribeStorage: (p, conn) => {
        const raw = p[0]
        if (raw !== undefined && raw !== null && (!Array.isArray(raw) || raw.length > MAX_KEYS)) throw invalidParams('keys must be an array')
        const keys = raw === undefined || raw === null ? undefined : (raw as unknown[]).map((k, i) => hexParam(k, `key ${i}`))
        return this.subscribe(conn, 'state_storage', emit => {
          const value = (k: string): string | null => { const v = c.state.get(k); return v === undefined ? null : u8aToHex(v) }
          if (keys !== undefined) emit({ block: c.head.hash, changes: keys.map(k => [k, value(k)]) })
          const f = (b: StoredBlock, changed: string[]): void => {
            const hit = keys === undefined ? changed : keys.filter(k => changed.includes(k))
            if (hit.length > 0) emit({ block: b.hash, changes: hit.map(k => [k, value(k)]) })
          }
          c.on('block', f)
          return () => c.off('block', f)
        })
      },
      state_unsubscribeStorage: (p, conn) => this.unsubscribe(conn, p),
      state_subscribeRuntimeVersion: (_p, conn) => this.subscribe(conn, 'state_runtimeVersion', emit => { emit(version()); return () => {} }),
      state_unsubscribeRuntimeVersion: (p, conn) => this.unsubscribe(conn, p),
      author_submitExtrinsic: async p => (await c.submit(this.submitBytes(p))).hash,
      author_submitAndWatchExtrinsic: async (p, conn) => {
        // submit resolves once the transaction is in the pool; nothing runs between
        // that and the listener below, so no inBlock notification can be missed
        const tx = await c.submit(this.submitBytes(p))
        return this.subscribe(conn, 'author_extrinsicUpdate', emit => {
          emit('ready')
          const ev = `tx:${tx.hash}`
          const f = (s: TxStatus): void => {
            emit(s)
            if (typeof s === 'object' && 'finalized' in s) c.off(ev, f)
          }
          c.on(ev, f)
          return () => c.off(ev, f)
        })
      },
      author_unwatchExtrinsic: (p, conn) => this.unsubscribe(conn, p),
      author_pendingExtrinsics: () => c.pending(),
      ...(this.opts.unsafeRpc === true ? { engine_createBlock: (p: unknown[]) => this.createBlock(p) } : {})
    }
    // legacy names polkadot.js and other tools use
    const alias: Record<string, string> = {
      chain_subscribeNewHead: 'chain_subscribeNewHeads',
      chain_unsubscribeNewHead: 'chain_unsubscribeNewHeads',
      subscribe_newHead: 'chain_subscribeNewHeads',
      chain_getFinalisedHead: 'chain_getFinalizedHead',
      chain_subscribeFinalisedHeads: 'chain_subscribeFinalizedHeads',
      chain_unsubscribeFinalisedHeads: 'chain_unsubscribeFinalizedHeads',
      chain_getRuntimeVersion: 'state_getRuntimeVersion',
      chain_subscribeRuntimeVersion: 'state_subscribeRuntimeVersion',
      chain_unsubscribeRuntimeVersion: 'state_unsubscribeRuntimeVersion',
      state_getStorageAt: 'state_getStorage',
      state_getKeysPagedAt: 'state_getKeysPaged',
      account_nextIndex: 'system_accountNextIndex'
    }
    for (const [a, t] of Object.entries(alias)) methods[a] = methods[t]
    return methods
  }

  /** Manual seal (Substrate's engine_createBlock): anyone who can call it fast-forwards every deadline, hence unsafeRpc. */
  private createBlock (p: unknown[]): unknown {
    const createEmpty = p[0] !== false
    const b = this.chain.produce({ allowEmpty: createEmpty })
    if (b === undefined) throw new RpcError(-32000, 'No transactions to include (createEmpty = false)')
    return {
      hash: b.hash, aux: { header_only: false, clear_justification_requests: false, needs_justification: false, bad_justification: false, is_new_best: true }
    }
  }

  async close (): Promise<void> {
    const wss = this.wss
    if (wss === undefined) return
    for (const ws of wss.clients) ws.terminate()
    await new Promise<void>(resolve => wss.close(() => resolve()))
  }
}
