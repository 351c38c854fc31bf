import { peerIdFromString } from '@libp2p/peer-id'
import { multiaddr, type Multiaddr } from '@multiformats/multiaddr'
import type { Logger } from '../log.js'
import type { Host } from './host.js'

/** Parses and checks bootstrap addresses up front, naming the bad one. */
export function parseBootstrapAddrs (addrs: string[]): Multiaddr[] {
  return addrs.map(a => {
    let ma: Multiaddr
    try {
      ma = multiaddr(a)
    } catch (err) {
      throw new Error(`invalid bootstrap multiaddr "${a}": ${(err as Error).message}`)
    }
    const p2p = ma.getComponents().find(c => c.name === 'p2p')
    if (p2p == null) {
      throw new Error(`bootstrap multiaddr "${a}" has no /p2p/<peer-id> part; copy the full address printed by "proofswarm bootstrap"`)
    }
    // a malformed peer id can never be dialled: say so now rather than after every retry
    try {
      peerIdFromString(p2p.value ?? '')
    } catch {
      throw new Error(`bootstrap multiaddr "${a}": "${p2p.value ?? ''}" is not a peer id (a peer id looks like 12D3KooW…); copy the full address printed by "proofswarm bootstrap"`)
    }
    return ma
  })
}

export interface DialBootstrapOptions {
  attempts: number
  baseDelayMs: number
  /** one dial attempt is given up after this long (default 5 s) */
  timeoutMs?: number
  signal?: AbortSignal
}

/**
 * Dials every bootstrap peer, retrying with exponential backoff. Resolves when
 * at least one is connected; rejects with an error naming each address and
 * what to check when all attempts fail.
 */
export async function dialBootstrap (host: Host, addrs: Multiaddr[], log: Logger, opts: DialBootstrapOptions): Promise<number> {
  if (addrs.length === 0) return 0
  const lastError = new Map<string, string>()
  for (let attempt = 1; attempt <= opts.attempts; attempt++) {
    const results = await Promise.allSettled(addrs.map(async a => await host.dial(a, { signal: AbortSignal.timeout(opts.timeoutMs ?? 5000) })))
    let ok = 0
    results.forEach((r, i) => {
      const a = addrs[i].toString()
      if (r.status === 'fulfilled') ok++
      else lastError.set(a, (r.reason as Error)?.message ?? String(r.reason))
    })
    if (ok > 0) return ok
    const delay = Math.min(opts.baseDelayMs * 2 ** (attempt - 1), 10_000)
    for (const [a, e] of lastError) {
      log.warn(`cannot reach bootstrap peer ${a} (attempt ${attempt}/${opts.attempts}): ${e}` +
        (attempt < opts.attempts ? `; retrying in ${delay} ms` : ''))
    }
    if (attempt < opts.attempts) {
      await new Promise(resolve => setTimeout(resolve, delay))
      if (opts.signal?.aborted === true) break
    }
  }
  const detail = [...lastError].map(([a, e]) => `  ${a}: ${e}`).join('\n')
  throw new Error(`could not reach any bootstrap peer after ${opts.attempts} attempts:\n${detail}\n` +
    'Check that the bootstrap peer is running, that the address (IP, port and /p2p/ peer id) is the one it printed, and that no firewall blocks the port.')
}
