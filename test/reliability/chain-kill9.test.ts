import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Keyring } from '@polkadot/keyring'
import type { ApiPromise } from '@polkadot/api'
import type { ISubmittableResult } from '@polkadot/types/types'
import { cryptoWaitReady } from '@polkadot/util-crypto'
import { connect, removeDir, startChainProcess, tempDir, type ChainProcess } from '../integration/chain-process.js'

// The dev chain process (its LevelDB on disk) is killed with SIGKILL five
// times while a client keeps submitting transfers, and restarted each time.
// Nothing the chain told the client may be lost: every block the client saw
// finalized is still there with the same hash, every transfer it saw
// included is in its block, and balances and nonces agree with each other.

const RESTARTS = 5
const AMOUNT = 1000n
const IN_FLIGHT = 8
let dir: string
let chain: ChainProcess | undefined
/** the slow-disk test's chain, stopped by afterAll if that test fails midway */
let slowChain: ChainProcess | undefined
const keyring = new Keyring({ type: 'sr25519' })

beforeAll(async () => {
  await cryptoWaitReady()
  dir = await tempDir('ps-chain-kill9-')
})

afterAll(async () => {
  await chain?.stop()
  await slowChain?.stop()
  await removeDir(dir)
})

interface Acked { nonce: number, block: string }

/** Submits transfers Alice → Bob (IN_FLIGHT at a time) until `stop`; records what the chain acknowledged. */
async function load (api: ApiPromise, stop: AbortSignal, acked: Acked[], finalized: Map<number, string>): Promise<number> {
  const alice = keyring.addFromUri('//Alice')
  const bob = keyring.addFromUri('//Bob')
  const unsub = await api.rpc.chain.subscribeFinalizedHeads(h => { finalized.set(h.number.toNumber(), h.hash.toHex()) })
  let nonce = (await api.rpc.system.accountNextIndex(alice.address)).toNumber()
  let sent = 0
  const inflight = new Set<Promise<void>>()
  // the chain gone (killed): stop submitting rather than spin on failures
  let gone = false
  // a refused submission (the pool kept a later nonce across the kill, and lost
  // an earlier one): take the next nonce from the chain again
  let resync = false
  while (!stop.aborted && !gone) {
    if (resync) {
      resync = false
      nonce = (await api.rpc.system.accountNextIndex(alice.address).catch(() => undefined))?.toNumber() ?? nonce
    }
    const n = nonce++
    const p = new Promise<void>(resolve => {
      const done = (): void => { stop.removeEventListener('abort', done); resolve() }
      stop.addEventListener('abort', done, { once: true })
      api.tx.balances.transferKeepAlive(bob.address, AMOUNT).signAndSend(alice, { nonce: n }, (r: ISubmittableResult) => {
        // @polkadot/api may skip InBlock when Finalized follows at once: either acknowledges inclusion
        if ((r.status.isInBlock || r.status.isFinalized) && !acked.some(a => a.nonce === n)) {
          acked.push({ nonce: n, block: (r.status.isInBlock ? r.status.asInBlock : r.status.asFinalized).toHex() }); done()
        }
        if (r.isError) { resync = true; done() }
      }).catch(() => { if (api.isConnected) resync = true; else gone = true; done() })
    })
    sent++
    inflight.add(p)
    void p.then(() => inflight.delete(p))
    if (inflight.size >= IN_FLIGHT) await Promise.race(inflight)
  }
  try { unsub() } catch {}
  return sent
}

describe('dev chain killed with SIGKILL under load', () => {
  it(`${RESTARTS} kills and restarts: no finalized block, included transfer, balance or nonce lost`, async () => {
    const alice = keyring.addFromUri('//Alice')
    const bob = keyring.addFromUri('//Bob')
    const acked: Acked[] = []
    const finalized = new Map<number, string>()
    let alice0: bigint | undefined
    let bob0: bigint | undefined
    let genesis: string | undefined
    let sent = 0
    const started = Date.now()
    for (let round = 0; round <= RESTARTS; round++) {
      chain = await startChainProcess(dir, ['--block-time', '100'])
      const api = await connect(chain.url)
      try {
        genesis ??= api.genesisHash.toHex()
        expect(api.genesisHash.toHex()).toBe(genesis)
        // everything acknowledged before the kill is still there
        for (const [n, hash] of finalized) expect((await api.rpc.chain.getBlockHash(n)).toHex(), `finalized block ${n}`).toBe(hash)
        for (const a of acked) {
          const header = await api.rpc.chain.getHeader(a.block).catch(() => undefined)
          expect(header, `block ${a.block} of included transfer nonce ${a.nonce}`).toBeDefined()
          expect((await api.rpc.chain.getBlockHash(header!.number.toNumber())).toHex()).toBe(a.block)
        }
        const A = (await api.query.system.account(alice.address))
        const B = (await api.query.system.account(bob.address))
        alice0 ??= A.data.free.toBigInt()
        bob0 ??= B.data.free.toBigInt()
        const nonce = A.nonce.toNumber()
        // every included transfer moved AMOUNT, nothing else moved anything
        expect(A.data.free.toBigInt()).toBe(alice0 - AMOUNT * BigInt(nonce))
        expect(B.data.free.toBigInt()).toBe(bob0 + AMOUNT * BigInt(nonce))
        if (acked.length > 0) expect(nonce).toBeGreaterThan(Math.max(...acked.map(a => a.nonce)))
        if (round === RESTARTS) {
          console.log(`chain kill -9 ×${RESTARTS}: ${sent} transfers sent, ${acked.length} acknowledged included, nonce ${nonce}, ${finalized.size} finalized heads checked, ${Date.now() - started} ms`)
          expect(acked.length).toBeGreaterThanOrEqual(RESTARTS)
          break
        }
        // load, then kill -9 at a moment that varies from round to round
        const stop = new AbortController()
        const running = load(api, stop.signal, acked, finalized)
        // under load: at least one transfer acknowledged in this round (bounded), then a varying delay
        const ackedBefore = acked.length
        for (let i = 0; i < 150 && acked.length === ackedBefore; i++) await new Promise(resolve => setTimeout(resolve, 100))
        expect(acked.length, `round ${round}: no transfer included within 15 s`).toBeGreaterThan(ackedBefore)
        await new Promise(resolve => setTimeout(resolve, 300 + round * 200))
        chain.proc.kill('SIGKILL')
        await new Promise(resolve => chain!.proc.once('exit', resolve))
        stop.abort()
        sent += await running
      } finally {
        await api.disconnect().catch(() => {})
      }
    }
  }, 180_000) // ~36 s on a quiet machine; the bound is for a loaded one

  it('on a slow disk, a transfer is acknowledged only once its block is written: killed at the acknowledgement, nothing is lost', async () => {
    const slowDir = await tempDir('ps-chain-slow-disk-')
    const alice = keyring.addFromUri('//Alice')
    const bob = keyring.addFromUri('//Bob')
    try {
      // every LevelDB batch waits 250 ms before it is written (a fault: a slow disk)
      let slow: ChainProcess | undefined = await startChainProcess(slowDir, ['--block-time', '300'], { PROOFSWARM_CHAIN_SLOW_DISK_MS: '250' })
      let api = await connect(slow.url)
      const acks: Array<{ how: string, block: string }> = []
      try {
        const proc = slow.proc
        await new Promise<void>((resolve, reject) => {
          const t = setTimeout(() => reject(new Error('no acknowledgement within 30 s')), 30_000)
          api.tx.balances.transferKeepAlive(bob.address, AMOUNT).signAndSend(alice, (r: ISubmittableResult) => {
            if (!(r.status.isInBlock || r.status.isFinalized) || acks.length > 0) return
            // killed the moment the client hears of the inclusion
            proc.kill('SIGKILL')
            acks.push({ how: r.status.type, block: (r.status.isInBlock ? r.status.asInBlock : r.status.asFinalized).toHex() })
            clearTimeout(t)
            resolve()
          }).catch(reject)
        })
        await new Promise(resolve => proc.exitCode !== null || proc.signalCode !== null ? resolve(undefined) : proc.once('exit', resolve))
      } finally {
        await api.disconnect().catch(() => {})
      }
      slow = await startChainProcess(slowDir, ['--block-time', '100'])
      slowChain = slow
      api = await connect(slow.url)
      try {
        const header = await api.rpc.chain.getHeader(acks[0].block).catch(() => undefined)
        expect(header, `the block of the ${acks[0].how} acknowledgement survives the kill`).toBeDefined()
        const A = await api.query.system.account(alice.address)
        expect(A.nonce.toNumber()).toBe(1)
      } finally {
        await api.disconnect().catch(() => {})
        await slow.stop()
      }
    } finally {
      await removeDir(slowDir)
    }
  }, 90_000)
})
