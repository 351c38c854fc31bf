import { createHash, randomBytes } from 'node:crypto'
import { generateKeyPair, publicKeyToProtobuf } from '@libp2p/crypto/keys'
import { lpStream } from '@libp2p/utils'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHost, type Host } from '../../node/p2p/host.js'
import { DHT_PROTOCOL } from '../../node/p2p/limits.js'

// The attack: every peer is a DHT server, and kad-dht keeps every provider
// record it is sent (ADD_PROVIDER: it checks only that the sender names
// itself) for 48 hours, in libp2p's in-memory datastore, without a bound. One
// peer naming itself the provider of random CIDs, as fast as one DHT stream
// carries the messages, grows an honest peer's memory for as long as it
// likes, and each provider lookup there scans them all. The same with value
// records: a `/pk/` record passes kad-dht's validator with any fresh key pair.
// Now provider records are bounded per provider (10,000) and in all (200,000),
// value records in all (10,000): past them a new record is dropped
// (node/p2p/dht-store.ts).

// the bounds (10,000 per provider, 200,000 in all, 10,000 values) made small: the same code, a shorter flood
const LIMITS = { providersPerPeer: 1000, providers: 5000, values: 1000 }
const N = 1500

/** protobuf: a varint */
function varint (n: number): number[] {
  const out: number[] = []
  while (n > 0x7f) { out.push((n & 0x7f) | 0x80); n >>>= 7 }
  out.push(n)
  return out
}
const field = (tag: number, bytes: Uint8Array): number[] => [tag, ...varint(bytes.length), ...bytes]

/** kad-dht's Message (dht.proto): type (1), key (2), record (3: key 1, value 2), providerPeers (9: id 1, addrs 2) */
function message (type: number, key: Uint8Array, o: { provider?: { id: Uint8Array, addr: Uint8Array }, value?: Uint8Array } = {}): Uint8Array {
  const peer = o.provider !== undefined ? field(0x4a, new Uint8Array([...field(0x0a, o.provider.id), ...field(0x12, o.provider.addr)])) : []
  const record = o.value !== undefined ? field(0x1a, new Uint8Array([...field(0x0a, key), ...field(0x12, o.value)])) : []
  return new Uint8Array([0x08, type, ...field(0x12, key), ...record, ...peer])
}
/** a random CID's key as kad-dht sends it: the sha256 multihash */
const randomKey = (): Uint8Array => new Uint8Array([0x12, 0x20, ...createHash('sha256').update(randomBytes(16)).digest()])

async function records (h: Host, prefix: string): Promise<number> {
  const ds = (h as unknown as { components: { datastore: { queryKeys: (q: { prefix: string }) => AsyncIterable<unknown> } } }).components.datastore
  let n = 0
  for await (const _k of ds.queryKeys({ prefix })) n++
  return n
}

let victim: Host
let attacker: Host

beforeAll(async () => {
  [victim, attacker] = await Promise.all([0, 1].map(async () => await createHost({
    privateKey: await generateKeyPair('Ed25519'), listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap: [], privateNetwork: true, dhtStoreLimits: LIMITS
  })))
  await attacker.dial(victim.getMultiaddrs()[0])
}, 30_000)

afterAll(async () => {
  await Promise.all([victim, attacker].map(async h => await h?.stop()))
})

describe('a flood of provider records', () => {
  it('one peer naming itself the provider of 1,500 random CIDs: at most its bound kept', async () => {
    const provider = { id: attacker.peerId.toMultihash().bytes, addr: attacker.getMultiaddrs()[0].bytes }
    const stream = await attacker.dialProtocol(victim.peerId, DHT_PROTOCOL)
    const lp = lpStream(stream, { maxDataLength: 4 * 1024 * 1024 })
    for (let b = 0; b < N; b += 500) await lp.writeV(Array.from({ length: Math.min(500, N - b) }, () => message(2, randomKey(), { provider })))
    // kad-dht handles a stream's messages in order: the answer to a lookup after them means all were handled
    await lp.write(message(3, randomKey()))
    await lp.read({ signal: AbortSignal.timeout(30_000) })
    stream.abort(new Error('done'))
    expect(await records(victim, '/dht/provider')).toBe(LIMITS.providersPerPeer)
  }, 60_000)

  it('the public keys of 1,500 fresh key pairs put as value records: at most the bound kept', async () => {
    const M = N
    const puts = await Promise.all(Array.from({ length: M }, async () => {
      const pub = (await generateKeyPair('Ed25519')).publicKey
      return message(0, new Uint8Array([...new TextEncoder().encode('/pk/'), ...pub.toMultihash().bytes]), { value: publicKeyToProtobuf(pub) })
    }))
    const stream = await attacker.dialProtocol(victim.peerId, DHT_PROTOCOL)
    const lp = lpStream(stream, { maxDataLength: 4 * 1024 * 1024 })
    // each put is answered (its echo): read them as they come, the last one means all were handled
    const answers = (async () => { for (let i = 0; i < M; i++) await lp.read({ signal: AbortSignal.timeout(30_000) }) })()
    for (let b = 0; b < M; b += 500) await lp.writeV(puts.slice(b, b + 500))
    await answers
    stream.abort(new Error('done'))
    expect(await records(victim, '/dht/record')).toBe(LIMITS.values)
  }, 60_000)
})
