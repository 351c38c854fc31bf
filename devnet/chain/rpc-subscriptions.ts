import type { WebSocket } from 'ws'
import { RpcError } from './rpc-errors.js'
import { invalidParams } from './rpc-params.js'

// JSON-RPC subscriptions of one server: ids, the per-connection limit, and
// notifications held back until the reply with the id is out.

const MAX_SUBSCRIPTIONS = 1024

export type Params = unknown[]
export interface Conn { ws: WebSocket, subs: Map<string, () => void> }

export class Subscriptions {
  private nextSub = 1

  constructor (private readonly send: (conn: Conn, msg: unknown) => void) {}

  subscribe (conn: Conn, notify: string, start: (emit: (result: unknown) => void) => () => void): string {
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

  unsubscribe (conn: Conn, p: Params): boolean {
    const id = p[0]
    if (typeof id !== 'string') throw invalidParams('subscription id')
    const un = conn.subs.get(id)
    if (un === undefined) return false
    un()
    conn.subs.delete(id)
    return true
  }
}
