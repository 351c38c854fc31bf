import type {} from '@polkadot/api-augment' // types for System.Account and the other standard pallets
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { Keyring } from '@polkadot/keyring'
import { ApiPromise, WsProvider } from '@polkadot/api'
import { cryptoWaitReady } from '@polkadot/util-crypto'
import { connect, raw, removeDir, sendAndFinalize, startChainProcess, tempDir, type ChainProcess } from './chain-process.js'

// An unmodified ApiPromise against the dev chain in its own process.

let chain: ChainProcess
let api: ApiPromise
let dir: string
const keyring = new Keyring({ type: 'sr25519' })

beforeAll(async () => {
  await cryptoWaitReady()
  dir = await tempDir('ps-chain-rpc-')
  chain = await startChainProcess(dir)
  api = await connect(chain.url)
})

describe('runtime APIs an unmodified client calls at connect', () => {
  it('@polkadot/api connects without any API/INIT warning; the Metadata runtime API serves the same metadata as state_getMetadata', async () => {
    const warnings: string[] = []
    const spy = vi.spyOn(console, 'warn').mockImplementation((...a: unknown[]) => { warnings.push(a.map(String).join(' ')) })
    const spyLog = vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => { warnings.push(a.map(String).join(' ')) })
    let fresh: ApiPromise | undefined
    try {
      fresh = await ApiPromise.create({ provider: new WsProvider(chain.url, 1000), throwOnConnect: true })
      expect(fresh.runtimeMetadata.version).toBe(14)
    } finally {
      spy.mockRestore(); spyLog.mockRestore()
      await fresh?.disconnect()
    }
    expect(warnings.filter(w => /API\/INIT|MetadataApi|rpc::state::get_metadata/.test(w))).toEqual([])
    const versions = await raw(chain.url, { jsonrpc: '2.0', id: 1, method: 'state_call', params: ['Metadata_metadata_versions', '0x'] })
    expect(versions.result).toBe('0x040e000000')
    const at = await raw(chain.url, { jsonrpc: '2.0', id: 2, method: 'state_call', params: ['Metadata_metadata_at_version', '0x0e000000'] })
    const meta = await raw(chain.url, { jsonrpc: '2.0', id: 3, method: 'state_getMetadata', params: [] })
    // Option<OpaqueMetadata>: Some, a compact length, then the same bytes
    expect(at.result.startsWith('0x01')).toBe(true)
    expect(at.result.endsWith(meta.result.slice(2))).toBe(true)
    expect((await raw(chain.url, { jsonrpc: '2.0', id: 4, method: 'state_call', params: ['Metadata_metadata_at_version', '0x0f000000'] })).result).toBe('0x00')
    expect((await raw(chain.url, { jsonrpc: '2.0', id: 5, method: 'state_call', params: ['Core_nothing', '0x'] })).error.code).toBe(-32000)
  })
})

afterAll(async () => {
  await api?.disconnect()
  await chain?.stop()
  await removeDir(dir)
})

describe('dev chain over JSON-RPC with @polkadot/api', () => {
  it('connects and reads runtime, metadata and storage', async () => {
    expect(api.runtimeVersion.specName.toString()).toBe('proofswarm-dev')
    expect(api.tx.arbitration.submitTask).toBeTypeOf('function')
    expect(api.tx.balances.transferKeepAlive).toBeTypeOf('function')
    const bob = await api.query.system.account(keyring.addFromUri('//Bob').address)
    expect(bob.data.free.toBigInt()).toBe(1_000_000_000n * 1_000_000_000_000n)
    const peer8 = await api.query.system.account(keyring.addFromUri('//Peer8').address)
    expect(peer8.data.free.toBigInt()).toBeGreaterThan(0n)
    const entries = await api.query.system.account.entries()
    expect(entries.length).toBe(15)
    expect(((await api.query.arbitration.params()) as unknown as { minStake: { toBigInt: () => bigint } }).minStake.toBigInt()).toBeGreaterThan(0n)
  })

  it('transfers with events at inBlock and finalized, and answers api.at(pastHash)', async () => {
    const alice = keyring.addFromUri('//Alice')
    const dave = keyring.addFromUri('//Dave')
    const before = (await api.query.system.account(dave.address)).data.free.toBigInt()
    const r = await sendAndFinalize(api, api.tx.balances.transferKeepAlive(dave.address, 777n), alice)
    expect(r.inBlock).toMatch(/^0x[0-9a-f]{64}$/)
    expect(r.finalized).toBe(r.inBlock)
    expect(r.events).toContain('balances.Transfer')
    expect(r.events).toContain('system.ExtrinsicSuccess')
    const after = (await api.query.system.account(dave.address)).data.free.toBigInt()
    expect(after - before).toBe(777n)
    const header = await api.rpc.chain.getHeader(r.inBlock)
    const parent = header.parentHash.toHex()
    const past = await api.at(parent)
    expect((await past.query.system.account(dave.address)).data.free.toBigInt()).toBe(before)
    const atBlock = await api.at(r.inBlock as string)
    const events = await atBlock.query.system.events()
    expect(events.map(e => `${e.event.section}.${e.event.method}`)).toContain('balances.Transfer')
    const fin = await api.rpc.chain.getFinalizedHead()
    expect((await api.rpc.chain.getHeader(fin)).number.toNumber()).toBeGreaterThanOrEqual(header.number.toNumber())
  })

  it('decodes module errors', async () => {
    const r = await sendAndFinalize(api, api.tx.arbitration.addStake(5n), keyring.addFromUri('//Eve'))
    expect(r.error).toBe('arbitration.NotRegistered')
    expect(r.events).toContain('system.ExtrinsicFailed')
    const r2 = await sendAndFinalize(api, api.tx.balances.transferKeepAlive(keyring.addFromUri('//Bob').address, 10n ** 37n), keyring.addFromUri('//Eve'))
    expect(r2.error).toBe('balances.InsufficientBalance')
  })

  it('sends many transactions concurrently from one account with app-managed nonces', async () => {
    const ferdie = keyring.addFromUri('//Ferdie')
    const charlie = keyring.addFromUri('//Charlie')
    const start = (await api.rpc.system.accountNextIndex(ferdie.address)).toNumber()
    const before = (await api.query.system.account(charlie.address)).data.free.toBigInt()
    const hashes = await Promise.all(Array.from({ length: 20 }, async (_, i) =>
      await api.tx.balances.transferKeepAlive(charlie.address, 1n).signAndSend(ferdie, { nonce: start + i })))
    expect(new Set(hashes.map(h => h.toHex())).size).toBe(20)
    for (let i = 0; i < 50; i++) {
      if ((await api.query.system.account(charlie.address)).data.free.toBigInt() - before === 20n) break
      await new Promise(r => setTimeout(r, 100))
    }
    expect((await api.query.system.account(charlie.address)).data.free.toBigInt() - before).toBe(20n)
  })

  it('rejects bad signatures (1010), duplicate and stale nonces (1014)', async () => {
    const alice = keyring.addFromUri('//Alice')
    const bob = keyring.addFromUri('//Bob')
    const nonce = (await api.rpc.system.accountNextIndex(alice.address)).toNumber()
    const tx = await api.tx.balances.transferKeepAlive(bob.address, 1n).signAsync(alice, { nonce, era: 0 })
    const hex = tx.toHex()
    // flip one byte inside the signature
    const bytes = Buffer.from(hex.slice(2), 'hex')
    const sigOffset = bytes.indexOf(Buffer.from(tx.signature.toU8a()))
    expect(sigOffset).toBeGreaterThan(0)
    const bad = Buffer.from(bytes)
    bad[sigOffset + 10] ^= 0xff
    const r1 = await raw(chain.url, { jsonrpc: '2.0', id: 1, method: 'author_submitExtrinsic', params: ['0x' + bad.toString('hex')] })
    expect(r1.error.code).toBe(1010)
    expect(r1.error.data).toMatch(/bad signature/)
    // two txs with the same nonce in one batch: the second is a duplicate (same sender + nonce)
    const other = (await api.tx.balances.transferKeepAlive(bob.address, 2n).signAsync(alice, { nonce, era: 0 })).toHex()
    const r2 = await raw(chain.url, [
      { jsonrpc: '2.0', id: 2, method: 'author_submitExtrinsic', params: [hex] },
      { jsonrpc: '2.0', id: 3, method: 'author_submitExtrinsic', params: [other] }
    ])
    expect(r2[0].result).toMatch(/^0x/)
    expect(r2[1].error.code).toBe(1014)
    for (let i = 0; i < 50 && (await api.rpc.system.accountNextIndex(alice.address)).toNumber() === nonce; i++) await new Promise(r => setTimeout(r, 50))
    for (let i = 0; i < 50 && (await api.query.system.account(alice.address)).nonce.toNumber() === nonce; i++) await new Promise(r => setTimeout(r, 50))
    const r3 = await raw(chain.url, { jsonrpc: '2.0', id: 4, method: 'author_submitExtrinsic', params: [other] })
    expect(r3.error.code).toBe(1014)
    expect(r3.error.data).toMatch(/outdated/)
  })

  it('answers bad requests with JSON-RPC errors and keeps running', async () => {
    expect((await raw(chain.url, { jsonrpc: '2.0', id: 1, method: 'nope_nothing', params: [] })).error.code).toBe(-32601)
    expect((await raw(chain.url, { jsonrpc: '2.0', id: 2, method: 'state_getStorage', params: ['0xzz'] })).error.code).toBe(-32602)
    expect((await raw(chain.url, { jsonrpc: '2.0', id: 3, method: 'chain_getBlockHash', params: [-5] })).error.code).toBe(-32602)
    expect((await raw(chain.url, { jsonrpc: '2.0', id: 4, method: 'author_submitExtrinsic', params: ['0x1234'] })).error.code).toBe(1001)
    expect((await raw(chain.url, { jsonrpc: '2.0', id: 5, method: 'state_getKeysPaged', params: ['0x', 'x'] })).error.code).toBe(-32602)
    expect((await raw(chain.url, '{not json')).error.code).toBe(-32700)
    // an oversized message is refused: the server closes the connection with 1009 (message too big)
    await expect(raw(chain.url, { jsonrpc: '2.0', id: 6, method: 'author_submitExtrinsic', params: ['0x' + '00'.repeat(5 * 1024 * 1024)] })).rejects.toThrow(/closed 1009/)
    // a large but allowed extrinsic is refused by the pool with a clear error
    const big = await raw(chain.url, { jsonrpc: '2.0', id: 7, method: 'author_submitExtrinsic', params: ['0x' + '00'.repeat(3 * 1024 * 1024)] })
    expect(big.error.code).toBe(1001)
    // still alive
    expect((await raw(chain.url, { jsonrpc: '2.0', id: 8, method: 'system_health', params: [] })).result.isSyncing).toBe(false)
    expect((await api.rpc.system.chain()).toString()).toBe('proofswarm dev')
  })
})
