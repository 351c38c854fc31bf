import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Keyring } from '@polkadot/keyring'
import { u8aToHex } from '@polkadot/util'
import { cryptoWaitReady } from '@polkadot/util-crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DevChain, type AsyncVerifier } from '../../../devnet/chain/chain.js'
import { devGenesis } from '../../../devnet/chain/dev-spec.js'
import { ChainStore } from '../../../devnet/chain/store.js'
import { verifySignature, type SignatureJob } from '../../../devnet/chain/runtime/signature.js'

// The pool with asynchronous signature verification: verdicts that come back
// in any order are admitted in arrival order, nonces stay exact, bad input is
// refused with the same codes as before, blocks take every ready nonce run.

/** Real verification, but each verdict is released only when the test says so. */
class HeldVerifier implements AsyncVerifier {
  readonly size = 1
  held: Array<() => void> = []
  verify (job: SignatureJob): Promise<boolean> {
    const ok = verifySignature(job)
    return new Promise(resolve => this.held.push(() => resolve(ok)))
  }

  /** Releases the held verdicts last-first (the worst order for a naive pool). */
  releaseReversed (): void {
    const h = this.held.reverse()
    this.held = []
    for (const f of h) f()
  }

  async close (): Promise<void> { this.releaseReversed() }
}

const dirs: string[] = []
const chains: DevChain[] = []
const kr = new Keyring({ type: 'sr25519' })
const SENDERS = ['Alice', 'Bob', 'Charlie']

async function newChain (verifier?: AsyncVerifier): Promise<DevChain> {
  const dir = await mkdtemp(join(tmpdir(), 'ps-pool-'))
  dirs.push(dir)
  const c = new DevChain({ dataDir: dir, genesis: await devGenesis({}), instantSeal: false, blockTime: 3_600_000, verifier, verifyWorkers: 0 })
  await c.start()
  chains.push(c)
  return c
}

function transfer (c: DevChain, who: string, nonce: number, value = 10n ** 10n): Uint8Array {
  const reg = c.runtime.types.registry
  const balances = c.runtime.types.pallets.find(p => p.name === 'Balances')?.index as number
  const ext = reg.createType('Extrinsic', reg.createType('Call', { callIndex: [balances, 3], args: { dest: { Id: kr.addFromUri('//PoolSink').address }, value } }))
  ext.sign(kr.addFromUri(`//${who}`), { nonce, era: 0 as never, blockHash: c.genesisHash, genesisHash: c.genesisHash, runtimeVersion: { specVersion: 1, transactionVersion: 1 } as never })
  return ext.toU8a()
}

const pub = (who: string): string => u8aToHex(kr.addFromUri(`//${who}`).publicKey)

beforeAll(async () => { await cryptoWaitReady() })
afterAll(async () => {
  for (const c of chains) await c.close()
  for (const d of dirs) await rm(d, { recursive: true, force: true })
})

describe('dev chain pool with asynchronous verification', () => {
  it('admits in arrival order whatever order verdicts come back in, and includes shuffled nonces in order', async () => {
    const v = new HeldVerifier()
    const c = await newChain(v)
    // every sender's nonces 0..9, arriving shuffled (deterministically)
    const txs = SENDERS.flatMap(s => Array.from({ length: 10 }, (_, n) => ({ s, n })))
    txs.sort((a, b) => ((a.n * 7 + a.s.length * 3) % 11) - ((b.n * 7 + b.s.length * 3) % 11))
    const order: string[] = []
    const results = txs.map(({ s, n }) => c.submit(transfer(c, s, n)).then(tx => { order.push(`${s}:${tx.nonce}`); return tx }))
    // a duplicate of one in flight and a tampered one
    const dup = c.submit(transfer(c, 'Alice', 4))
    const bad = transfer(c, 'Bob', 20)
    bad[bad.length - 1] ^= 1
    const badP = c.submit(bad)
    expect(c.pending()).toHaveLength(0) // nothing admitted before its verdict
    expect(c.nextNonce(pub('Alice'))).toBe(0)
    v.releaseReversed()
    await Promise.all(results)
    expect(order).toEqual(txs.map(({ s, n }) => `${s}:${n}`))
    await expect(dup).rejects.toMatchObject({ code: 1014 })
    await expect(badP).rejects.toMatchObject({ code: 1010, data: 'Transaction has a bad signature' })
    for (const s of SENDERS) expect(c.nextNonce(pub(s))).toBe(10)
    const block = c.produce()
    expect(block?.extrinsics).toHaveLength(30)
    expect(c.pending()).toHaveLength(0)
    for (const s of SENDERS) expect(c.nextNonce(pub(s))).toBe(10)
  })

  it('keeps a gap in the future queue until it is filled, then includes the whole run', async () => {
    const c = await newChain()
    await c.submit(transfer(c, 'Alice', 0))
    await c.submit(transfer(c, 'Alice', 2))
    await c.submit(transfer(c, 'Alice', 3))
    expect(c.produce()?.extrinsics).toHaveLength(1)
    expect(c.pending()).toHaveLength(2)
    expect(c.nextNonce(pub('Alice'))).toBe(1)
    await c.submit(transfer(c, 'Alice', 1))
    expect(c.produce()?.extrinsics).toHaveLength(3)
    expect(c.nextNonce(pub('Alice'))).toBe(4)
    // stale now: 1014; garbage: 1001; neither stops the chain
    await expect(c.submit(transfer(c, 'Alice', 2, 5n))).rejects.toMatchObject({ code: 1014 })
    await expect(c.submit(Uint8Array.of(1, 2, 3))).rejects.toMatchObject({ code: 1001 })
    expect(c.produce()?.extrinsics).toHaveLength(0)
  })

  it('refuses mangled transactions with a transaction error and keeps producing blocks', async () => {
    const c = await newChain()
    const good = transfer(c, 'Charlie', 0)
    let seed = 12345
    const rnd = (n: number): number => { seed = (Math.imul(seed, 1103515245) + 12345) >>> 0; return seed % n }
    const mangled: Uint8Array[] = []
    for (let i = 0; i < 150; i++) {
      const b = good.slice()
      const kind = i % 3
      if (kind === 0) b[rnd(b.length)] ^= 1 << rnd(8)
      if (kind === 1) mangled.push(b.subarray(0, rnd(b.length)))
      else if (kind === 2) mangled.push(Uint8Array.from([...b, ...Array.from({ length: 1 + rnd(40) }, () => rnd(256))]))
      else mangled.push(b)
    }
    const settled = await Promise.allSettled(mangled.map(async b => await c.submit(b)))
    for (const s of settled) {
      if (s.status === 'rejected') expect([1001, 1010, 1014]).toContain((s.reason as { code?: number }).code)
    }
    await c.submit(good).catch(() => {})
    expect(c.produce()?.extrinsics.length).toBeLessThanOrEqual(1)
    expect(c.nextNonce(pub('Charlie'))).toBe(1)
  })

  it('a transaction included in the tick it was admitted leaves no saved copy behind', async () => {
    const c = await newChain()
    for (let n = 0; n < 3; n++) await c.submit(transfer(c, 'Bob', n))
    // same tick as the admissions: their pool writes are still pending
    expect(c.produce()?.extrinsics).toHaveLength(3)
    await c.close()
    const store = new ChainStore(dirs[dirs.length - 1])
    await store.open()
    expect(await store.loadPrefix('p!')).toEqual([])
    await store.close()
  })
})
