import { generateKeyPair } from '@libp2p/crypto/keys'
import { createHost, type Host } from '../../node/p2p/host.js'

/** `n` real libp2p hosts on 127.0.0.1 with fresh Ed25519 keys, no bootstrap, private addresses kept. */
export async function loopbackHosts (n: number): Promise<Host[]> {
  return await Promise.all(Array.from({ length: n }, async () => await createHost({
    privateKey: await generateKeyPair('Ed25519'),
    listen: ['/ip4/127.0.0.1/tcp/0'],
    bootstrap: [],
    privateNetwork: true
  })))
}
