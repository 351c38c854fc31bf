import { multiaddr } from '@multiformats/multiaddr'
import { isPrivateIp } from '@libp2p/utils'
import { networkInterfaces } from 'node:os'

// Whether a peer keeps loopback and private (RFC 1918, ULA, link-local, CGNAT)
// addresses in the DHT's peer records. On the public internet they must be
// dropped (they point into someone else's LAN); in a LAN or on one machine
// they are the only addresses there are. The operator says which with
// --private-addrs / --no-private-addrs; without either, a peer whose own
// addresses are all private keeps them (it could not be reached otherwise)
// and a peer with a public address drops them.

export interface PrivateAddrsDecision {
  keep: boolean
  /** how the decision was made, for the log and `status` */
  reason: string
  /** a loud warning when this peer's only addresses are ones peers with the same setting drop */
  warning?: string
}

/** The IP hosts a peer listening on `listen` can be reached at (wildcards expanded to this machine's interfaces). */
export function listenHosts (listen: string[], interfaces = networkInterfaces()): string[] {
  const out = new Set<string>()
  const all = Object.values(interfaces).flatMap(list => list ?? [])
  for (const l of listen) {
    const host = multiaddr(l).getComponents().find(c => c.name === 'ip4' || c.name === 'ip6')
    if (host?.value == null) continue
    if (host.value === '0.0.0.0') for (const i of all) { if (i.family === 'IPv4') out.add(i.address) }
    else if (host.value === '::') for (const i of all) { if (i.family === 'IPv6') out.add(i.address) }
    else out.add(host.value)
  }
  return [...out]
}

export function isPrivateHost (host: string): boolean {
  return isPrivateIp(host) ?? false
}

export function decidePrivateAddrs (setting: boolean | undefined, hosts: string[]): PrivateAddrsDecision {
  const allPrivate = hosts.length > 0 && hosts.every(isPrivateHost)
  const keep = setting ?? allPrivate
  const reason = setting === true
    ? '--private-addrs: loopback and private addresses are kept in DHT records'
    : setting === false
      ? '--no-private-addrs: loopback and private addresses are dropped from DHT records'
      : allPrivate
        ? 'every address of this peer is private: private addresses are kept in DHT records (a LAN or one machine; --no-private-addrs for a public swarm)'
        : 'this peer has a public address: private addresses are dropped from DHT records (--private-addrs for a LAN deployment)'
  const warning = !keep && allPrivate
    ? `every address of this peer (${hosts.join(', ')}) is private, and it drops private addresses: peers with the same setting will drop its addresses too and cannot reach it through the DHT. On a LAN, start every peer with --private-addrs.`
    : undefined
  return { keep, reason, warning }
}
