import { DECLARED_RUNTIMES, WASM_PSK_RUNTIME } from '../../protocols/program/runtime.js'
import { openAddon } from './psk-addon.js'

// Whether this machine would run psk1 tasks with the JavaScript kernels, cheaply:
// only the addon's file and load, without tfjs or the kernels' self-test (the
// engine runs that), so a peer can say it at start and per task.

/** Why `runtime` would run on the psk1 JavaScript kernels here (no addon, or PROOFSWARM_PSK_NATIVE=0), or undefined. */
export function pskAddonMissing (runtime: string): string | undefined {
  if (runtime !== WASM_PSK_RUNTIME) return undefined
  if (process.env.PROOFSWARM_PSK_NATIVE === '0') return 'PROOFSWARM_PSK_NATIVE=0'
  const addon = openAddon()
  return 'error' in addon ? `addon not built because ${addon.error}` : undefined
}

/**
 * The runtimes needing a declaration (DECLARED_RUNTIMES) this machine runs at full speed, the ones
 * its node declares on chain: a runtime is left out when its addon does not load here (or
 * PROOFSWARM_PSK_NATIVE=0), so the chain never draws this peer for a task it would replay slowly.
 */
export function declarableRuntimes (): string[] {
  return DECLARED_RUNTIMES.filter(r => pskAddonMissing(r) === undefined)
}
