import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { timingSafeEqual } from 'node:crypto'
import type { AddressInfo, Socket } from 'node:net'

// A small JSON-over-HTTP control API bound to 127.0.0.1, guarded by a bearer
// token. Routes are registered by the parts of the node that own them.

export const MAX_BODY_BYTES = 1024 * 1024
/**
 * Sockets open at once (idle ones included): past it new ones are closed at
 * once. The CLI opens one per command; without a cap 2,000 idle sockets were
 * accepted and kept.
 */
export const MAX_SOCKETS = 64
/** a socket must have sent its request headers within this time (an idle socket is closed) */
export const HEADERS_TIMEOUT_MS = 5_000

export class HttpError extends Error {
  constructor (readonly status: number, message: string) { super(message) }
}

export interface RequestContext {
  url: URL
  body: unknown
  req: IncomingMessage
  res: ServerResponse
}

/** A handler returns a JSON-able value, or undefined after writing the response itself (streams). */
export type Handler = (ctx: RequestContext) => Promise<unknown> | unknown

interface Route { method: string, path: string, handler: Handler, text?: boolean }

export class ControlServer {
  private readonly routes: Route[] = []
  private server?: Server
  private readonly token: Buffer

  constructor (token: string) {
    this.token = Buffer.from(token)
  }

  get (path: string, handler: Handler): this { this.routes.push({ method: 'GET', path, handler }); return this }
  post (path: string, handler: Handler): this { this.routes.push({ method: 'POST', path, handler }); return this }
  /** A GET route answering text/plain (e.g. Prometheus metrics). */
  text (path: string, handler: Handler): this { this.routes.push({ method: 'GET', path, handler, text: true }); return this }

  async listen (port: number, host = '127.0.0.1'): Promise<number> {
    const server = createServer({
      headersTimeout: HEADERS_TIMEOUT_MS,
      requestTimeout: 30_000, // receiving the request (a ≤ 1 MiB body); long responses (streams) are not cut
      connectionsCheckingInterval: 1000
    }, (req, res) => { void this.dispatch(req, res) })
    this.server = server
    server.keepAliveTimeout = 1000
    server.maxConnections = MAX_SOCKETS
    // headersTimeout runs from a request's first byte: a socket that never
    // sends one is closed here (long responses, e.g. trace streams, are not timed)
    server.on('connection', (sock: Socket) => {
      const t = setTimeout(() => sock.destroy(), HEADERS_TIMEOUT_MS)
      t.unref()
      sock.once('data', () => clearTimeout(t))
      sock.once('close', () => clearTimeout(t))
    })
    await new Promise<void>((resolve, reject) => {
      const onError = (err: NodeJS.ErrnoException): void => {
        reject(err.code === 'EADDRINUSE'
          ? new Error(`control API port ${port} on ${host} is already in use; pick another with --control-port or omit it for a free port`)
          : err)
      }
      server.once('error', onError)
      server.listen(port, host, () => { server.off('error', onError); resolve() })
    })
    return (server.address() as AddressInfo).port
  }

  async close (): Promise<void> {
    const s = this.server
    if (s == null) return
    s.closeAllConnections()
    await new Promise<void>(resolve => s.close(() => resolve()))
  }

  private authorized (req: IncomingMessage): boolean {
    const h = req.headers.authorization ?? ''
    const m = /^Bearer (.+)$/.exec(h)
    if (m == null) return false
    const given = Buffer.from(m[1])
    return given.length === this.token.length && timingSafeEqual(given, this.token)
  }

  private async dispatch (req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      if (!this.authorized(req)) throw new HttpError(401, 'missing or wrong token: send "Authorization: Bearer <token>" (the token is in the data dir, file control.token)')
      const url = new URL(req.url ?? '/', 'http://127.0.0.1')
      const route = this.routes.find(r => r.path === url.pathname && r.method === req.method)
      if (route == null) {
        const other = this.routes.some(r => r.path === url.pathname)
        throw new HttpError(other ? 405 : 404, other ? `method ${req.method ?? ''} not allowed on ${url.pathname}` : `no such endpoint ${url.pathname}`)
      }
      const body = req.method === 'POST' ? await readJsonBody(req) : undefined
      if (req.method === 'POST' && (body === null || typeof body !== 'object' || Array.isArray(body))) {
        throw new HttpError(400, `request body must be a JSON object (got ${body === null ? 'null' : Array.isArray(body) ? 'an array' : typeof body}); send {} for no arguments`)
      }
      const out = await route.handler({ url, body, req, res })
      if (res.writableEnded || res.headersSent) return
      if (route.text === true) {
        res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(String(out))
      } else {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(out ?? null))
      }
    } catch (err) {
      const status = err instanceof HttpError ? err.status : 500
      if (!res.headersSent) res.writeHead(status, { 'content-type': 'application/json' })
      if (!res.writableEnded) res.end(JSON.stringify({ error: (err as Error).message }))
    }
  }
}

/**
 * An integer query parameter in [min, max], `dflt` when absent; anything else
 * is a 400 naming the parameter and its range.
 */
export function intParam (url: URL, name: string, min: number, max: number, dflt: number): number {
  const v = url.searchParams.get(name)
  if (v == null || v === '') return dflt
  const n = Number(v)
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new HttpError(400, `"${name}" must be an integer from ${min} to ${max}, got "${v}"`)
  return n
}

async function readJsonBody (req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req) {
    size += (chunk as Buffer).length
    if (size > MAX_BODY_BYTES) throw new HttpError(413, `request body over ${MAX_BODY_BYTES} bytes`)
    chunks.push(chunk as Buffer)
  }
  if (size === 0) return {}
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'))
  } catch {
    throw new HttpError(400, 'request body is not valid JSON')
  }
}
