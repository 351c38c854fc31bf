import type { AddressInfo } from 'node:net'
import { WebSocketServer, type WebSocket } from 'ws'
import type { Logger } from '../../node/log.js'
import type { DevChain } from './chain.js'
import { RpcError } from './rpc-errors.js'
import { buildMethods, type Method } from './rpc-methods.js'
import { Subscriptions, type Conn } from './rpc-subscriptions.js'
import { TxInvalid } from './runtime/executive.js'

// Substrate JSON-RPC 2.0 over WebSocket: the subset @polkadot/api uses, plus
// engine_createBlock (manual seal, as in Substrate's manual-seal) for tests.
// This file is the transport (WebSocket, JSON-RPC framing, errors); the
// methods are in rpc-methods.ts.

export const MAX_MESSAGE_BYTES = 8 * 1024 * 1024
const MAX_BATCH = 256

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
  private readonly subs = new Subscriptions((conn, msg) => { this.send(conn, msg) })
  private readonly methods: Record<string, Method>

  constructor (readonly chain: DevChain, readonly opts: RpcServerOptions = {}) {
    this.methods = buildMethods(chain, opts, this.subs)
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

  async close (): Promise<void> {
    const wss = this.wss
    if (wss === undefined) return
    for (const ws of wss.clients) ws.terminate()
    await new Promise<void>(resolve => wss.close(() => resolve()))
  }
}
