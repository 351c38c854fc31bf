import { getDynamicBuilder } from '@polkadot-api/metadata-builders'
import { Blake2256, blockHeader, Bytes, metadata as metadataCodec, Option, u32, Vector } from '@polkadot-api/substrate-bindings'
import { Keyring } from '@polkadot/keyring'
import { cryptoWaitReady } from '@polkadot/util-crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connect, raw, removeDir, sendAndFinalize, startChainProcess, tempDir, type ChainProcess } from './chain-process.js'

// The dev chain read by a second, independent Substrate client library:
// polkadot-api's SCALE and metadata layers (@polkadot-api/substrate-bindings,
// @polkadot-api/metadata-builders), over plain JSON-RPC. Nothing of
// @polkadot/types decodes here: the metadata the chain serves, the storage
// keys and values, the events and the block hashes must be what another
// implementation of the Substrate formats makes of them.

let chain: ChainProcess
let dir: string
let id = 0
const rpc = async (method: string, params: unknown[] = []): Promise<any> => {
  const r = await raw(chain.url, { jsonrpc: '2.0', id: ++id, method, params })
  if (r.error != null) throw new Error(`${method}: ${JSON.stringify(r.error)}`)
  return r.result
}
const hexToBytes = (h: string): Uint8Array => Uint8Array.from(Buffer.from(h.slice(2), 'hex'))
const toHex = (b: Uint8Array): string => '0x' + Buffer.from(b).toString('hex')

beforeAll(async () => {
  dir = await tempDir('psw-papi-')
  chain = await startChainProcess(dir, ['--block-time', '200'])
})
afterAll(async () => { await chain?.stop(); await removeDir(dir) })

describe('dev chain through polkadot-api\'s codecs', () => {
  it('serves metadata every way a client asks, decoded by polkadot-api', async () => {
    const versions = Vector(u32).dec(await rpc('state_call', ['Metadata_metadata_versions', '0x']))
    expect(versions).toContain(14)
    // Option<OpaqueMetadata>: the metadata as SCALE bytes, if the version is served
    const at = Option(Bytes()).dec(await rpc('state_call', ['Metadata_metadata_at_version', toHex(u32.enc(14))]))
    expect(at).toBeInstanceOf(Uint8Array)
    const viaCall = metadataCodec.dec(at!)
    expect(Option(Bytes()).dec(await rpc('state_call', ['Metadata_metadata_at_version', toHex(u32.enc(99))]))).toBeUndefined()
    const viaRpc = metadataCodec.dec(await rpc('state_getMetadata'))
    expect(viaRpc.magicNumber).toBe(0x6174656d) // "meta"
    expect(viaRpc.metadata.tag).toBe('v14')
    expect(viaCall.metadata.tag).toBe('v14')
    const pallets = (viaRpc.metadata.value as { pallets: Array<{ name: string }> }).pallets.map(p => p.name)
    expect(pallets).toEqual(expect.arrayContaining(['System', 'Balances', 'Arbitration']))
  })

  it('storage, constants, events and block hashes decode and hash the same with the other library', async () => {
    await cryptoWaitReady()
    const md = metadataCodec.dec(await rpc('state_getMetadata')).metadata.value as Parameters<typeof getDynamicBuilder>[0]
    const b = getDynamicBuilder(md)
    expect(b.buildConstant('System', 'SS58Prefix').dec(constantValue(md, 'System', 'SS58Prefix'))).toBe(42)

    // System.Account of a funded dev account: key hashed and value decoded by polkadot-api
    const alice = new Keyring({ type: 'sr25519', ss58Format: 42 }).addFromUri('//Alice').address
    const account = b.buildStorage('System', 'Account')
    const value = await rpc('state_getStorage', [account.enc(alice)])
    expect(value).not.toBeNull()
    const info = account.dec(value) as { nonce: number, data: { free: bigint, reserved: bigint } }
    expect(info.data.free).toBe(1_000_000_000n * 10n ** 12n)

    // a transfer made with @polkadot/api: its block's events, decoded by polkadot-api, carry it
    const api = await connect(chain.url)
    try {
      const k = new Keyring({ type: 'sr25519', ss58Format: 42 })
      const bob = k.addFromUri('//Bob').address
      const sent = await sendAndFinalize(api, api.tx.balances.transferKeepAlive(bob, 12_345n), k.addFromUri('//Alice'))
      expect(sent.error).toBeUndefined()
      const events = b.buildStorage('System', 'Events')
      const stored = await rpc('state_getStorage', [events.enc(), sent.inBlock])
      const list = events.dec(stored) as Array<{ event: { type: string, value: { type: string, value: Record<string, unknown> } } }>
      const transfer = list.find(e => e.event.type === 'Balances' && e.event.value.type === 'Transfer')
      expect(transfer?.event.value.value).toMatchObject({ from: alice, to: bob, amount: 12_345n })
      expect(list.some(e => e.event.type === 'System' && e.event.value.type === 'ExtrinsicSuccess')).toBe(true)
    } finally { await api.disconnect() }

    // the header's hash, as polkadot-api encodes and hashes it, is the block hash the chain reports
    const header = await rpc('chain_getHeader')
    const n = Number(header.number)
    const encoded = blockHeader.enc({
      parentHash: header.parentHash,
      number: n,
      stateRoot: header.stateRoot,
      extrinsicRoot: header.extrinsicsRoot,
      // a digest item decoded by polkadot-api: the item inside an otherwise empty header (hashes, number 0, one item)
      digests: header.digest.logs.map(
        (l: string) => blockHeader.dec(new Uint8Array([...new Uint8Array(32), 0, ...new Uint8Array(64), 4, ...hexToBytes(l)])).digests[0]
      )
    })
    expect(toHex(Blake2256(encoded))).toBe(await rpc('chain_getBlockHash', [n]))
    expect(n).toBeGreaterThan(0)
  })
})

/** A pallet constant's SCALE value from the V14 metadata. */
function constantValue (md: any, pallet: string, name: string): Uint8Array {
  const p = md.pallets.find((x: { name: string }) => x.name === pallet)
  const c = p.constants.find((x: { name: string }) => x.name === name)
  return typeof c.value === 'string' ? hexToBytes(c.value) : c.value.asBytes?.() ?? c.value
}
