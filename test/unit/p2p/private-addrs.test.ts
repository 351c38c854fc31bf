import { describe, expect, it } from 'vitest'
import { decidePrivateAddrs, listenHosts } from '../../../node/p2p/private-addrs.js'

const ifaces = {
  lo: [{ address: '127.0.0.1', family: 'IPv4' }, { address: '::1', family: 'IPv6' }],
  eth0: [{ address: '10.77.0.2', family: 'IPv4' }, { address: 'fe80::1', family: 'IPv6' }]
} as unknown as ReturnType<typeof import('node:os').networkInterfaces>

describe('private addresses in DHT records', () => {
  it('expands wildcard listen addresses to this machine\'s interfaces', () => {
    expect(listenHosts(['/ip4/0.0.0.0/tcp/0'], ifaces).sort()).toEqual(['10.77.0.2', '127.0.0.1'])
    expect(listenHosts(['/ip6/::/tcp/0', '/ip4/127.0.0.1/tcp/1'], ifaces).sort()).toEqual(['127.0.0.1', '::1', 'fe80::1'])
  })

  it('without a setting: kept when every address is private, dropped when the peer has a public one; the network name plays no part', () => {
    expect(decidePrivateAddrs(undefined, ['10.77.0.2', '127.0.0.1']).keep).toBe(true)
    expect(decidePrivateAddrs(undefined, ['10.77.0.2', '8.8.8.8']).keep).toBe(false)
    expect(decidePrivateAddrs(undefined, ['10.77.0.2', '8.8.8.8']).warning).toBeUndefined()
  })

  it('an explicit setting wins; dropping private addresses when every own address is private warns loudly', () => {
    expect(decidePrivateAddrs(true, ['8.8.8.8']).keep).toBe(true)
    const d = decidePrivateAddrs(false, ['10.77.0.2', '127.0.0.1'])
    expect(d.keep).toBe(false)
    expect(d.warning).toMatch(/every address of this peer \(10\.77\.0\.2, 127\.0\.0\.1\) is private.*--private-addrs/)
    expect(decidePrivateAddrs(true, ['10.77.0.2']).warning).toBeUndefined()
  })
})
