import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { readFile } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { roleMachines, nodeSupervisor } from '../../actors/index.js'
import { Aggregator, type AggregatorOptions, type DashboardEvent } from './aggregator.js'
import { machineChart, type Chart } from './statechart.js'

// The dashboard's HTTP server: the static page (no build step, no CDN; the
// charts are drawn by Chart.js, served from node_modules) and JSON/SSE
// endpoints fed by the aggregator. Bound to 127.0.0.1 only, and
// requests naming another Host are refused (DNS rebinding).

export interface DashboardOptions extends AggregatorOptions {
  /** 0 (default) picks a free port */
  port?: number
  host?: string
}

export interface Dashboard {
  url: string
  port: number
  aggregator: Aggregator
  close: () => Promise<void>
}

const here = dirname(fileURLToPath(import.meta.url))
// the page is plain files in the source tree: next to this module under tsx, or ../../../devnet/dashboard/public from dist/
const PUBLIC_DIRS = [join(here, 'public'), resolve(here, '../../../devnet/dashboard/public')]
const STATIC: Record<string, { file: string, type: string }> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/pictures.js': { file: 'pictures.js', type: 'text/javascript; charset=utf-8' },
  '/style.css': { file: 'style.css', type: 'text/css; charset=utf-8' }
}
/** The charting library's browser bundle (UMD, no other files), read from the installed package. */
export const CHART_JS_PATH = '/vendor/chart.umd.min.js'
export function chartJsFile (): string {
  // the package's exports map hides its dist/ files: resolve the entry point and look next to it
  const entry = createRequire(import.meta.url).resolve('chart.js')
  return join(dirname(entry), 'chart.umd.min.js')
}
const MAX_SSE_CLIENTS = 32

export function machineCharts (): Record<string, Chart> {
  const out: Record<string, Chart> = { supervisor: machineChart(nodeSupervisor) }
  for (const [role, logic] of Object.entries(roleMachines)) out[role] = machineChart(logic)
  return out
}

/** JSON with bigint as decimal strings (chain balances are u128). */
export function toJson (v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) => typeof x === 'bigint' ? x.toString() : x)
}

export async function startDashboard (opts: DashboardOptions): Promise<Dashboard> {
  const publicDir = PUBLIC_DIRS.find(d => existsSync(join(d, 'index.html')))
  if (publicDir == null) throw new Error(`dashboard page not found (looked in ${PUBLIC_DIRS.join(', ')})`)
  const files = new Map<string, Buffer>()
  for (const [path, s] of Object.entries(STATIC)) files.set(path, await readFile(join(publicDir, s.file)))
  files.set(CHART_JS_PATH, await readFile(chartJsFile()).catch((err: Error) => { throw new Error(`the dashboard's charting library is missing (npm ci installs chart.js): ${err.message}`) }))
  const charts = toJson(machineCharts())

  const host = opts.host ?? '127.0.0.1'
  const agg = new Aggregator(opts)
  const sseClients = new Set<ServerResponse>()
  let port = 0

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1')
    const hostHeader = (req.headers.host ?? '').toLowerCase()
    if (!new Set([`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]).has(hostHeader)) {
      send(res, 403, 'text/plain', 'forbidden: unexpected Host header')
      return
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') { send(res, 405, 'application/json', toJson({ error: 'only GET' })); return }
    const st = STATIC[url.pathname]
    if (st != null) { send(res, 200, st.type, files.get(url.pathname)!); return }
    if (url.pathname === CHART_JS_PATH) { send(res, 200, 'text/javascript; charset=utf-8', files.get(CHART_JS_PATH)!); return }
    switch (url.pathname) {
      case '/api/state': send(res, 200, 'application/json', toJson(agg.state())); return
      case '/api/machines': send(res, 200, 'application/json', charts); return
      case '/api/traces': {
        const limit = Number(url.searchParams.get('limit') ?? 300)
        if (!Number.isInteger(limit) || limit < 1) { send(res, 400, 'application/json', toJson({ error: 'limit must be a positive integer' })); return }
        send(res, 200, 'application/json', toJson(agg.recentTraces({ peer: url.searchParams.get('peer') ?? undefined, actor: url.searchParams.get('actor') ?? undefined, limit })))
        return
      }
      case '/api/events': {
        if (sseClients.size >= MAX_SSE_CLIENTS) { send(res, 503, 'application/json', toJson({ error: 'too many dashboard clients' })); return }
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' })
        res.write(`event: state\ndata: ${toJson(agg.state())}\n\n`)
        sseClients.add(res)
        req.on('close', () => sseClients.delete(res))
        return
      }
      default: send(res, 404, 'application/json', toJson({ error: `no such page ${url.pathname}` }))
    }
  }

  // one serialization per event, shared by every client
  agg.subscribe((e: DashboardEvent) => {
    if (sseClients.size === 0) return
    const msg = e.type === 'state' ? `event: state\ndata: ${toJson(e.state)}\n\n` : e.type === 'trace' ? `event: trace\ndata: ${toJson(e.entry)}\n\n` : `event: balance\ndata: ${toJson(e.sample)}\n\n`
    for (const c of sseClients) {
      // a stalled browser tab must not make us buffer without bound
      if (c.writableLength > 4 * 1024 * 1024) { c.destroy(); sseClients.delete(c); continue }
      c.write(msg)
    }
  })
  const ping = setInterval(() => { for (const c of sseClients) c.write(': keep-alive\n\n') }, 15_000)
  ping.unref()

  const server = createServer((req, res) => {
    try { handle(req, res) } catch (err) { send(res, 500, 'application/json', toJson({ error: (err as Error).message })) }
  })
  server.keepAliveTimeout = 1000
  await new Promise<void>((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException): void => {
      reject(err.code === 'EADDRINUSE' ? new Error(`dashboard port ${opts.port ?? 0} on ${host} is already in use; pick another with --port (0 picks a free one)`) : err)
    }
    server.once('error', onError)
    server.listen(opts.port ?? 0, host, () => { server.off('error', onError); resolve() })
  })
  port = (server.address() as AddressInfo).port
  agg.start()

  let closing: Promise<void> | undefined
  return {
    url: `http://${host}:${port}/`,
    port,
    aggregator: agg,
    close: async () => {
      closing ??= (async () => {
        clearInterval(ping)
        for (const c of sseClients) c.end()
        sseClients.clear()
        await agg.stop()
        server.closeAllConnections()
        await new Promise<void>(resolve => server.close(() => resolve()))
      })()
      await closing
    }
  }
}

function send (res: ServerResponse, status: number, type: string, body: string | Buffer): void {
  if (res.headersSent) { res.end(); return }
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' })
  res.end(body)
}
