import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { timingSafeEqual } from 'node:crypto'
import type { AddressInfo } from 'node:net'

// A small JSON-over-HTTP control API bound to 127.0.0.1, guarded by a bearer
// token. Routes are registered by the parts of the node that own them.

export const MAX_BODY_BYTES = 1024 * 1024

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
    const server = createServer((req, res) => { void this.dispatch(req, res) })
    this.server = server
    server.keepAliveTimeout = 1000
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
