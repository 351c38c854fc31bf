import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { LegacyClient, WsProvider } from 'dedot'
import { Keyring } from '@polkadot/keyring'
import { cryptoWaitReady } from '@polkadot/util-crypto'
import { connect, removeDir, startChainProcess, tempDir, type ChainProcess } from './chain-process.js'

// A second Substrate client library, independent of polkadot.js (dedot), used
// as a user of other tools would: it builds everything from the dev chain's
// metadata and the standard JSON-RPC, so this checks that the chain speaks
// Substrate, not just what @polkadot/api happens to accept.

let chain: ChainProcess
let dir: string
let client: LegacyClient
const warnings: string[] = []

beforeAll(async () => {
  await cryptoWaitReady()
  dir = await tempDir('ps-second-client-')
  chain = await startChainProcess(dir)
  const spy = (...a: unknown[]): void => { warnings.push(a.map(String).join(' ')) }
  vi.spyOn(console, 'warn').mockImplementation(spy)
  vi.spyOn(console, 'error').mockImplementation(spy)
  client = await LegacyClient.new(new WsProvider(chain.url))
}, 60_000)

afterAll(async () => {
  vi.restoreAllMocks()
  await client?.disconnect().catch(() => {})
  await chain?.stop()
  await removeDir(dir)
})

describe('dedot (a second client library) against the dev chain', () => {
  const keyring = new Keyring({ type: 'sr25519' })
  const alice = keyring.addFromUri('//Alice')
  const bob = keyring.addFromUri('//Bob')
  const eve = keyring.addFromUri('//Eve')

  it('connects without warnings and reads the runtime version from the metadata like the RPC gives it', async () => {
    expect(client.runtimeVersion.specName).toBe('proofswarm-dev')
    const version = client.consts.system.version
    expect(version.specName).toBe('proofswarm-dev')
    expect(version.specVersion).toBe(client.runtimeVersion.specVersion)
    expect(version.transactionVersion).toBe(client.runtimeVersion.transactionVersion)
    expect(warnings).toEqual([])
  })

  it('reads storage the same as @polkadot/api, standard and proofswarm pallets alike', async () => {
    const api = await connect(chain.url)
    try {
      const viaDedot = await client.query.system.account(alice.address)
      const viaPjs = (await api.query.system.account(alice.address)).toJSON() as { data: { free: number | string } }
      expect(viaDedot.data.free).toBe(BigInt(viaPjs.data.free))
      const params = await client.query.arbitration.params()
      const pjsParams = (await api.query.arbitration.params()).toJSON() as { minStake: number | string, disputeClock: number }
      expect(params.minStake).toBe(BigInt(pjsParams.minStake))
      expect(params.disputeClock).toBe(pjsParams.disputeClock)
    } finally {
      await api.disconnect()
    }
  })

  it('signs and submits a transfer, and sees it finalized with its events', async () => {
    const before = (await client.query.system.account(bob.address)).data.free
    const res = await client.tx.balances.transferKeepAlive(bob.address, 12_345n).signAndSend(alice).untilFinalized()
    expect(res.events.map(e => `${e.event.pallet}.${(e.event.palletEvent as { name: string }).name}`)).toContain('Balances.Transfer')
    expect((await client.query.system.account(bob.address)).data.free - before).toBe(12_345n)
  }, 60_000)

  it('decodes a proofswarm pallet error by name', async () => {
    const res = await client.tx.arbitration.addStake(5n).signAndSend(eve).untilFinalized()
    expect(res.dispatchError).toBeDefined()
    const meta = client.registry.findErrorMeta(res.dispatchError!)
    expect(`${meta?.pallet}.${meta?.name}`).toBe('Arbitration.NotRegistered')
  }, 60_000)
})
