import { readControlFiles } from './files.js'

/** Talks to a running peer's control API, found from its data dir. */
export class ControlClient {
  constructor (readonly baseUrl: string, readonly token: string) {}

  static async fromDataDir (dataDir: string): Promise<ControlClient> {
    const { info, token } = await readControlFiles(dataDir)
    return new ControlClient(`http://127.0.0.1:${info.port}`, token)
  }

  async request<T = unknown> (method: 'GET' | 'POST', path: string, body?: unknown, timeoutMs = 30_000): Promise<T> {
    let res: Response
    try {
      res = await fetch(this.baseUrl + path, {
        method,
        headers: { authorization: `Bearer ${this.token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs)
      })
    } catch (err) {
      throw new Error(`cannot reach the peer's control API at ${this.baseUrl} (${(err as Error).message}); is the peer still running?`)
    }
    const text = await res.text()
    if (!res.ok) {
      let msg = text
      try { msg = (JSON.parse(text) as { error: string }).error } catch {}
      throw new Error(`control API ${method} ${path} failed (${res.status}): ${msg}`)
    }
    const type = res.headers.get('content-type') ?? ''
    return (type.includes('json') ? JSON.parse(text) : text) as T
  }

  async get<T = unknown> (path: string): Promise<T> { return await this.request<T>('GET', path) }
  async post<T = unknown> (path: string, body: unknown = {}, timeoutMs?: number): Promise<T> { return await this.request<T>('POST', path, body, timeoutMs) }
}
