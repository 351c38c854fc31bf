import type {} from '@polkadot/api-augment' // types for System.Account and the other standard pallets
import type { Option, u128 } from '@polkadot/types'
import type { Codec } from '@polkadot/types/types'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Keyring } from '@polkadot/keyring'
import type { ApiPromise } from '@polkadot/api'
import { cryptoWaitReady } from '@polkadot/util-crypto'
import { REFERENCE_FLOPS } from '../../protocols/scheduling/estimate.js'
import { minRewards, minWindow, taskProgram } from '../helpers/program.js'
import { connect, removeDir, sendAndFinalize, startChainProcess, tempDir, type ChainProcess } from './chain-process.js'

// A restart keeps balances, tasks, history and the transaction pool.

let dir: string
const procs: ChainProcess[] = []
const apis: ApiPromise[] = []
const keyring = new Keyring({ type: 'sr25519' })
const H = (b: number): string => '0x' + b.toString(16).padStart(2, '0').repeat(32)
const P1 = taskProgram({ steps: 10, checkpointEvery: 5 })

beforeAll(async () => {
  await cryptoWaitReady()
  dir = await tempDir('ps-chain-restart-')
})

afterAll(async () => {
  for (const a of apis) await a.disconnect().catch(() => {})
  for (const p of procs) await p.stop()
  await removeDir(dir)
})

async function start (extra: string[]): Promise<ApiPromise> {
  const p = await startChainProcess(dir, extra)
  procs.push(p)
  const api = await connect(p.url)
  apis.push(api)
  return api
}

describe('dev chain persistence', () => {
  it('keeps balances, tasks, history and pending transactions across restarts', async () => {
    const alice = keyring.addFromUri('//Alice')
    const bob = keyring.addFromUri('//Bob')
    // phase 1: timed blocks (200 ms: a fifth of the reference work per block)
    let api = await start(['--block-time', '200'])
    const genesis = api.genesisHash.toHex()
    const t = await sendAndFinalize(api, api.tx.balances.transferKeepAlive(bob.address, 4242n), alice)
    const window = minWindow(P1, 2, REFERENCE_FLOPS * 0.2)
    // the least rewards the chain takes (the floor prices reference work, the same at any block time)
    const { solverReward, verifierReward } = minRewards(P1, 2)
    const escrow = solverReward + 2n * verifierReward
    const submit = api.tx.arbitration.submitTask(P1.programHash, P1.programHex, H(2), H(3), 10, 5, escrow, solverReward, verifierReward, 2, window, 50)
    const task = await sendAndFinalize(api, submit, alice)
    expect(task.events).toContain('arbitration.TaskSubmitted')
    const bobAfter = (await api.query.system.account(bob.address)).data.free.toBigInt()
    const head = (await api.rpc.chain.getHeader()).number.toNumber()
    expect(head).toBeGreaterThanOrEqual(2)
    await api.disconnect()
    await procs[0].stop()

    // phase 2: very slow blocks, so a submitted transaction stays in the pool across the restart
    api = await start(['--block-time', '600000'])
    expect(api.genesisHash.toHex()).toBe(genesis)
    expect((await api.query.system.account(bob.address)).data.free.toBigInt()).toBe(bobAfter)
    const stored = await api.query.arbitration.tasks(0) as Option<Codec & { programHash: Codec, escrow: u128 }>
    expect(stored.isSome).toBe(true)
    expect(stored.unwrap().programHash.toHex()).toBe(P1.programHash)
    expect(stored.unwrap().escrow.toBigInt()).toBe(escrow)
    const past = await api.at(t.inBlock as string)
    const ev = await past.query.system.events()
    expect(ev.map(e => `${e.event.section}.${e.event.method}`)).toContain('balances.Transfer')
    expect((await api.rpc.chain.getBlockHash(1)).toHex()).toMatch(/^0x/)
    const nonce = (await api.rpc.system.accountNextIndex(alice.address)).toNumber()
    await api.tx.balances.transferKeepAlive(bob.address, 1n).signAndSend(alice, { nonce })
    expect((await api.rpc.author.pendingExtrinsics()).length).toBe(1)
    await api.disconnect()
    await procs[1].stop()

    // phase 3: instant seal picks the persisted pool transaction up
    api = await start(['--instant-seal'])
    for (
      let i = 0; i < 100 && (await api.query.system.account(bob.address)).data.free.toBigInt() !== bobAfter + 1n; i++
    ) await new Promise(r => setTimeout(r, 50))
    expect((await api.query.system.account(bob.address)).data.free.toBigInt()).toBe(bobAfter + 1n)
    expect((await api.rpc.chain.getHeader()).number.toNumber()).toBeGreaterThan(head)
  })
})
