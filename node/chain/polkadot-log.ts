import type { Logger } from '../log.js'

// @polkadot/util's logger writes straight to console.{log,warn,error} as
// "<date> <ORIGIN>: message" (it has no sink to configure): a peer's stderr
// got non-JSON lines among its pino JSON. This routes those calls into the
// peer's logger, as JSON with the origin; the connection chatter (each failed
// socket, each request failing while disconnected) goes to debug, since the
// reconnect loop (reconnect.ts) logs one line per attempt.

const DATE = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/
const ORIGIN = /^\s*([A-Z0-9/_-]+):$/
const CHATTER = /disconnected from|not connected|Abnormal Closure|WebSocket is not connected|Failed WS Request|ECONNREFUSED/i

let installed: Logger | undefined

/** Installs the routing once per process (later calls only switch the target logger). */
export function routePolkadotLogs (log: Logger): void {
  const first = installed == null
  installed = log
  if (!first) return
  for (const method of ['log', 'warn', 'error'] as const) {
    const orig = console[method].bind(console)
    console[method] = (...args: unknown[]) => {
      const origin = polkadotOrigin(args)
      if (origin == null || installed == null) { orig(...args); return }
      const msg = args.slice(2).map(text).join(' ').trim()
      const level = CHATTER.test(msg) ? 'debug' : method === 'log' ? 'info' : 'warn'
      installed[level]({ origin }, msg)
    }
  }
}

function polkadotOrigin (args: unknown[]): string | undefined {
  if (args.length < 2 || typeof args[0] !== 'string' || typeof args[1] !== 'string') return undefined
  if (!DATE.test(args[0])) return undefined
  return ORIGIN.exec(args[1])?.[1]
}

function text (v: unknown): string {
  if (v instanceof Error) return v.message
  if (typeof v === 'string') return v
  try { return JSON.stringify(v) } catch { return String(v) }
}
