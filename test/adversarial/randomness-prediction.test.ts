import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ApiPromise, WsProvider } from '@polkadot/api'
import { hexToU8a, u8aToHex } from '@polkadot/util'
import { cryptoWaitReady } from '@polkadot/util-crypto'
import { startChain, type RunningChain } from '../../devnet/chain/index.js'
import { RandomnessAuthor } from '../../devnet/chain/randomness-author.js'
import { Overlay, Storage } from '../../devnet/chain/runtime/state.js'
import { vrfVerify } from '../../devnet/chain/runtime/vrf.js'
import { checkBlockRandomness, RANDOMNESS_ENGINE_ID } from '../../protocols/randomness.js'

// The attack: a solver that fakes step s wants no drawn verifier to sample s.
// Verifier draws and samples are seeded by the randomness of the block after
// its commit. If that value were a function of public data (a block hash: the
// next block is often empty, and anyone can run the runtime over the public
// state), the solver would simulate the next block, and commit only in a
// block whose successor's draw misses s. The chain's randomness is its
// author's VRF: simulating the next block needs the author's secret key.

let rc: RunningChain
let dir: string

beforeAll(async () => {
  await cryptoWaitReady()
  dir = await mkdtemp(join(tmpdir(), 'ps-randomness-'))
  // blocks only when the test produces them
  rc = await startChain({ dataDir: dir, port: 0, blockTime: 3_600_000 })
  for (let i = 0; i < 3; i++) rc.chain.produce()
})

afterAll(async () => {
  await rc?.close()
  await rm(dir, { recursive: true, force: true })
})

/** What an attacker computes for the next (empty) block: run the public runtime over a copy of the public state, signing with `key`. */
function simulateNext (key: RandomnessAuthor): string | undefined {
  const copy = new Map(rc.chain.state)
  // the attacker's copy names its own key as the author, or its block would not even build
  const store = new Storage(rc.chain.runtime.types, new Overlay({ get: k => copy.get(k) }))
  store.put('Randomness', 'Author', undefined, key.publicKey)
  for (const [k, v] of store.state.changes) if (v !== null) copy.set(k, v)
  const reader = { get: (k: string) => copy.get(k) }
  const number = rc.chain.headNumber + 1
  const b = rc.chain.runtime.initializeBlock(reader, {
    number, parentHash: rc.chain.head.hash, randomness: key.sign(rc.chain.runtime.previousRandomness(reader), number)
  })
  b.finalize()
  return new Storage(rc.chain.runtime.types, b.state).get<string>('Randomness', 'ByBlock', number)
}

const actual = (n: number): string => new Storage(rc.chain.runtime.types, new Overlay({ get: k => rc.chain.state.get(k) })).read<string>('Randomness', 'ByBlock', n)

describe('verification randomness cannot be predicted by a peer', () => {
  it('a solver simulating the next block from the whole public state does not get its randomness, so it cannot time its commit to dodge the sample', () => {
    const attacker = RandomnessAuthor.generate()
    let predicted = 0
    for (let i = 0; i < 12; i++) {
      const guess = simulateNext(attacker)
      rc.chain.produce()
      if (guess === actual(rc.chain.headNumber)) predicted++
    }
    expect(predicted).toBe(0)
  })

  it('with the author\'s secret key the same simulation is exact: the key, kept off every RPC, is all that stands between a peer and the draw', async () => {
    const seed = await rc.chain.store.get('m!randomness-key')
    expect(seed).toMatch(/^0x[0-9a-f]{64}$/)
    const guess = simulateNext(RandomnessAuthor.fromSeed(seed as string))
    rc.chain.produce()
    expect(guess).toBe(actual(rc.chain.headNumber))
    // the seed is in no storage value a client can read
    for (const v of rc.chain.state.values()) expect(u8aToHex(v).includes((seed as string).slice(2))).toBe(false)
  })

  it('a block whose VRF is not the author\'s cannot be built', () => {
    const reader = { get: (k: string) => rc.chain.state.get(k) }
    const number = rc.chain.headNumber + 1
    const other = RandomnessAuthor.generate()
    expect(
      () => rc.chain.runtime.initializeBlock(reader, {
        number, parentHash: rc.chain.head.hash, randomness: other.sign(rc.chain.runtime.previousRandomness(reader), number)
      })
    )
      .toThrow(/not the author's/)
    expect(() => rc.chain.runtime.initializeBlock(reader, { number, parentHash: rc.chain.head.hash })).toThrow(/no randomness VRF/)
  })

  it('any client checks every block\'s randomness over RPC: the header\'s VRF against the genesis author key and the previous randomness', async () => {
    const api = await ApiPromise.create({ provider: new WsProvider(rc.url, 1000), throwOnConnect: true, noInitWarn: true })
    try {
      const author = hexToU8a((await api.query.randomness.author() as any).unwrap().toHex())
      const head = (await api.rpc.chain.getHeader()).number.toNumber()
      expect(head).toBeGreaterThan(3)
      for (let n = 2; n <= head; n++) {
        const header = await api.rpc.chain.getHeader(await api.rpc.chain.getBlockHash(n))
        const pre = header.digest.logs.find(l => l.isPreRuntime && u8aToHex(l.asPreRuntime[0].toU8a()) === u8aToHex(RANDOMNESS_ENGINE_ID))
        expect(pre, `block ${n} carries the randomness digest`).toBeDefined()
        const vrf = pre!.asPreRuntime[1].toU8a(true)
        const prev = hexToU8a((await api.query.randomness.byBlock(n - 1) as any).unwrap().toHex())
        const r = checkBlockRandomness(author, prev, n, vrf, vrfVerify)
        expect(r && u8aToHex(r), `block ${n}`).toBe((await api.query.randomness.byBlock(n) as any).unwrap().toHex())
        // the same VRF over another block number is refused
        expect(checkBlockRandomness(author, prev, n + 1, vrf, vrfVerify)).toBeUndefined()
      }
    } finally { await api.disconnect() }
  })
})
