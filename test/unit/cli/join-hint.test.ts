import { describe, expect, it } from 'vitest'
import { joinHint, loopbackWarning } from '../../../node/cli/join-hint.js'

const ID = '12D3KooWQFMUo2CWJDHxiuXVDYGvsUbaiwErhbTXN6Rx3FNzTbLU'

describe('the join command a bootstrap peer prints', () => {
  it('names the routable address (not loopback), the network, a listen address on every interface, --private-addrs and the chain as another host reaches it', () => {
    const h = joinHint({ listenAddrs: [`/ip4/127.0.0.1/tcp/4001/p2p/${ID}`, `/ip4/10.77.0.1/tcp/4001/p2p/${ID}`], network: 'lan', privateAddrs: true, chainUrl: 'ws://127.0.0.1:9944' })!
    expect(h.command).toBe(`proofswarm join --bootstrap /ip4/10.77.0.1/tcp/4001/p2p/${ID} --network lan --listen /ip4/0.0.0.0/tcp/4001 --private-addrs --chain ws://10.77.0.1:9944 --account <secret URI or key file> --roles <solver,verifier,…>`)
    expect(h.warning).toBeUndefined()
  })

  it('a public address: no --private-addrs; a chain elsewhere is named as given', () => {
    const h = joinHint({ listenAddrs: [`/ip4/8.8.4.4/tcp/4001/p2p/${ID}`], network: 'mynet', privateAddrs: false, chainUrl: 'wss://chain.example:9944' })!
    expect(h.command).toBe(`proofswarm join --bootstrap /ip4/8.8.4.4/tcp/4001/p2p/${ID} --network mynet --listen /ip4/0.0.0.0/tcp/4001 --chain wss://chain.example:9944 --account <secret URI or key file> --roles <solver,verifier,…>`)
  })

  it('loopback only: the command says so (other hosts cannot use it)', () => {
    const h = joinHint({ listenAddrs: [`/ip4/127.0.0.1/tcp/4001/p2p/${ID}`], network: 'devnet', privateAddrs: true })!
    expect(h.bootstrap).toContain('/ip4/127.0.0.1/')
    expect(h.warning).toMatch(/loopback only/)
  })

  it('a joining peer on loopback only, with its bootstrap peer on another host, is warned; on one machine it is not', () => {
    expect(loopbackWarning([`/ip4/127.0.0.1/tcp/4001/p2p/${ID}`], [`/ip4/10.77.0.1/tcp/4001/p2p/${ID}`])).toMatch(/loopback only/)
    expect(loopbackWarning([`/ip4/127.0.0.1/tcp/4001/p2p/${ID}`], [`/ip4/127.0.0.1/tcp/4002/p2p/${ID}`])).toBeUndefined()
    expect(loopbackWarning([`/ip4/10.77.0.2/tcp/4001/p2p/${ID}`, `/ip4/127.0.0.1/tcp/4001/p2p/${ID}`], [`/ip4/10.77.0.1/tcp/4001/p2p/${ID}`])).toBeUndefined()
  })
})
