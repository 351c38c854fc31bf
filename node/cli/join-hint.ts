import { multiaddr } from '@multiformats/multiaddr'
import { isPrivateHost } from '../p2p/private-addrs.js'

// The `proofswarm join …` command a bootstrap peer prints for other hosts:
// its routable address (not loopback when it has another), the network name,
// a listen address other peers can reach, private-address handling and the
// chain URL as seen from another host.

const LOOPBACK = /^(127\.|::1$|localhost$|0\.0\.0\.0$|::$|\[::1?\]$)/

function ipOf (addr: string): string | undefined {
  return multiaddr(addr).getComponents().find(c => c.name === 'ip4' || c.name === 'ip6')?.value
}

/** Every address is loopback: nothing on another host can dial it. */
export function loopbackOnly (addrs: string[]): boolean {
  return addrs.length > 0 && addrs.every(a => LOOPBACK.test(ipOf(a) ?? ''))
}

/** A joining peer that only listens on loopback while its bootstrap peer is elsewhere: peers there cannot fetch from it. */
export function loopbackWarning (listenAddrs: string[], bootstrap: string[]): string | undefined {
  if (!loopbackOnly(listenAddrs) || bootstrap.length === 0 || loopbackOnly(bootstrap)) return undefined
  return 'this peer listens on loopback only but its bootstrap peer is on another host: peers there cannot reach it (verifiers cannot fetch its checkpoints). Listen on /ip4/0.0.0.0/tcp/4001 (the default).'
}

export interface JoinHint {
  command: string
  /** the bootstrap address the command names */
  bootstrap: string
  /** set when only loopback addresses exist: other hosts cannot use the command */
  warning?: string
}

export function joinHint (o: { listenAddrs: string[], network: string, privateAddrs: boolean, chainUrl?: string }): JoinHint | undefined {
  const tcp4 = o.listenAddrs.filter(a => a.startsWith('/ip4/'))
  const candidates = tcp4.length > 0 ? tcp4 : o.listenAddrs
  if (candidates.length === 0) return undefined
  const routable = candidates.find(a => !LOOPBACK.test(ipOf(a) ?? ''))
  const bootstrap = routable ?? candidates[0]
  const ip = ipOf(bootstrap)
  const args = ['proofswarm join', `--bootstrap ${bootstrap}`, `--network ${o.network}`, '--listen /ip4/0.0.0.0/tcp/4001']
  if (o.privateAddrs && ip != null && isPrivateHost(ip)) args.push('--private-addrs')
  if (o.chainUrl != null) {
    const u = new URL(o.chainUrl)
    // the chain on this host, named by a loopback or wildcard address: another host reaches it at this host's address
    if (routable != null && ip != null && LOOPBACK.test(u.hostname)) u.hostname = ip.includes(':') ? `[${ip}]` : ip
    args.push(`--chain ${u.toString().replace(/\/$/, '')}`, '--account <secret URI or key file>')
  }
  args.push('--roles <solver,verifier,…>')
  return {
    command: args.join(' '),
    bootstrap,
    ...(routable == null ? { warning: 'this bootstrap peer listens on loopback only: peers on other hosts cannot reach it (listen on /ip4/0.0.0.0/tcp/4001)' } : {})
  }
}
