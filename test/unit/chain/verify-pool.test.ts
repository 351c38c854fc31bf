import { Keyring } from '@polkadot/keyring'
import { cryptoWaitReady } from '@polkadot/util-crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SignatureJob } from '../../../devnet/chain/runtime/signature.js'

// The worker-thread pool runs the compiled worker script, so this test loads
// the pool from dist/ (npm test builds first).
const { VerifyPool } = await import('../../../dist/devnet/chain/verify-pool.js' as string) as typeof import('../../../devnet/chain/verify-pool.js')

const pools: Array<InstanceType<typeof VerifyPool>> = []
beforeAll(async () => { await cryptoWaitReady() })
afterAll(async () => { for (const p of pools) await p.close() })

function jobs (n: number): Array<{ job: SignatureJob, valid: boolean }> {
  const kr = new Keyring({ type: 'sr25519' })
  const alice = kr.addFromUri('//Alice')
  const ed = new Keyring({ type: 'ed25519' }).addFromUri('//Bob')
  return Array.from({ length: n }, (_, i) => {
    const message = new TextEncoder().encode(`payload ${i}`)
    const pair = i % 5 === 0 ? ed : alice
    const signature = pair.sign(message)
    const valid = i % 3 !== 0
    if (!valid) signature[7] ^= 0x40
    return { job: { kind: i % 5 === 0 ? 'Ed25519' : 'Sr25519', signature, message, publicKey: pair.publicKey }, valid }
  })
}

describe('signature verify pool (worker threads)', () => {
  it('verifies batches in workers with the same verdicts as inline', async () => {
    const pool = new VerifyPool(2)
    pools.push(pool)
    expect(pool.size).toBe(2)
    const js = jobs(150)
    const got = await Promise.all(js.map(j => pool.verify(j.job)))
    expect(got).toEqual(js.map(j => j.valid))
    // garbage never throws: a wrong-length key is just invalid
    await expect(pool.verify({ kind: 'Sr25519', signature: new Uint8Array(3), message: new Uint8Array(0), publicKey: new Uint8Array(5) })).resolves.toBe(false)
  })

  it('falls back to inline verification when closed or without workers', async () => {
    const pool = new VerifyPool(0)
    expect(pool.size).toBe(0)
    const js = jobs(6)
    expect(await Promise.all(js.map(j => pool.verify(j.job)))).toEqual(js.map(j => j.valid))
    const p2 = new VerifyPool(1)
    await p2.close()
    expect(await Promise.all(js.map(j => p2.verify(j.job)))).toEqual(js.map(j => j.valid))
  })
})
