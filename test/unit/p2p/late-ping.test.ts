import { generateKeyPair } from '@libp2p/crypto/keys'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHost, type Host } from '../../../node/p2p/host.js'

const PING = '/ipfs/ping/1.0.0'
const sleep = async (ms: number): Promise<void> => await new Promise(resolve => setTimeout(resolve, ms))

// A loaded peer answers pings late. The connection monitor used to abort the
// connection on the first ping that timed out, and on a CPU-starved machine
// the redials that followed cost more CPU than the pings ever saved.
describe('connection monitor: a late ping', () => {
  let slow: Host
  let watcher: Host
  let pingsUnanswered = 0

  beforeAll(async () => {
    ;[slow, watcher] = await Promise.all([0, 1].map(async () => await createHost({
      privateKey: await generateKeyPair('Ed25519'),
      listen: ['/ip4/127.0.0.1/tcp/0'],
      bootstrap: [],
      privateNetwork: true,
      pingIntervalMs: 200,
      pingTimeoutMs: 150
    })))
    // the slow peer reads each ping and never answers it in time
    await slow.unhandle(PING)
    await slow.handle(PING, () => { pingsUnanswered++ })
    await watcher.dial(slow.getMultiaddrs()[0])
  }, 30_000)

  afterAll(async () => {
    await Promise.all([slow?.stop(), watcher?.stop()])
  })

  it('does not close the connection', async () => {
    for (let i = 0; i < 60 && pingsUnanswered < 4; i++) await sleep(100)
    expect(pingsUnanswered).toBeGreaterThanOrEqual(4) // the monitor did ping, and its pings timed out
    await sleep(300) // the last timeout fires
    expect(watcher.getConnections(slow.peerId).filter(c => c.status === 'open')).toHaveLength(1)
    // and the connection still works
    const rtt = await slow.services.ping.ping(watcher.peerId, { signal: AbortSignal.timeout(5000) })
    expect(rtt).toBeGreaterThanOrEqual(0)
  }, 20_000)
})
