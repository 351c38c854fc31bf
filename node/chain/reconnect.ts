import type { WsProvider } from '@polkadot/api'
import type { Logger } from '../log.js'

// Reconnection of a connected chain client, with a backoff and one JSON log
// line per attempt. WsProvider's own auto-connect retries every second
// forever and prints a non-JSON "API-WS: disconnected" line each time (about
// three a second with its pending requests failing too); the provider is
// created with auto-connect off and this loop calls connect() instead.
// ApiPromise re-subscribes on the provider's 'connected' event.

export const RECONNECT_BASE_MS = 500
export const RECONNECT_MAX_MS = 30_000

export interface Reconnector { stop: () => void }

export function keepConnected (provider: WsProvider, url: string, log: Logger | undefined, baseMs = RECONNECT_BASE_MS, maxMs = RECONNECT_MAX_MS): Reconnector {
  let attempt = 0
  let timer: NodeJS.Timeout | undefined
  let stopped = false
  const schedule = (): void => {
    if (stopped || timer != null) return
    attempt++
    const delay = Math.min(baseMs * 2 ** (attempt - 1), maxMs)
    log?.warn({ chain: url, attempt, retryInMs: delay }, attempt === 1 ? 'lost the chain connection; reconnecting' : 'chain still unreachable; reconnecting')
    timer = setTimeout(() => {
      timer = undefined
      if (stopped) return
      provider.connect().catch(() => schedule())
    }, delay)
    timer.unref()
  }
  const onDisconnected = (): void => { schedule() }
  const onConnected = (): void => {
    if (attempt > 0) log?.info({ chain: url, attempts: attempt }, 'reconnected to the chain')
    attempt = 0
  }
  provider.on('disconnected', onDisconnected)
  provider.on('connected', onConnected)
  return {
    stop: () => {
      stopped = true
      clearTimeout(timer)
    }
  }
}
