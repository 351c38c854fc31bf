import { createHash, randomBytes } from 'node:crypto'
import { writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { multiaddr } from '@multiformats/multiaddr'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Peer } from '../../node/peer.js'
import { getShardService } from '../../node/shards/index.js'
import { firstJson, hasJson, killAll, runCli, sleep, startCli, stopProc, tempDir, waitForOutput, type Proc } from '../helpers/procs.js'
import { startShardPeer } from '../helpers/shard-peer.js'

// The only provider of a shard is killed (kill -9) mid-fetch and comes back
// ~4 s later on the same address. The fetch used to drop it for good and fail
// (NoProviderError after ~27 s); now a provider whose connection failed is
// tried again with a backoff, and the fetch resumes from it.

const MiB = 1024 * 1024
let dir: { path: string, cleanup: () => Promise<void> }
let provider: Proc
let fetcher: Peer
let dataDir: string
let listen: string

async function freePort (): Promise<number> {
  const srv = createServer()
  await new Promise<void>(resolve => srv.listen(0, '127.0.0.1', resolve))
  const port = (srv.address() as { port: number }).port
  await new Promise(resolve => srv.close(resolve))
  return port
}

// the provider answers one block per 100 ms: the fetch takes long enough to kill it midway
function startProvider (): Proc {
  return startCli(['bootstrap', '--data-dir', dataDir, '--listen', listen, '--json', '--log-level', 'warn'], { PROOFSWARM_FAULT_SHARDS: 'delay:100' })
}

beforeAll(async () => {
  dir = await tempDir('ps-provider-returns-')
  dataDir = join(dir.path, 'provider')
  listen = `/ip4/127.0.0.1/tcp/${await freePort()}`
  provider = startProvider()
  await waitForOutput(provider, hasJson, 20_000, 'provider ready')
  fetcher = await startShardPeer(join(dir.path, 'fetcher'), [])
}, 60_000)

afterAll(async () => {
  await fetcher?.stop()
  if (provider != null) await stopProc(provider)
  killAll()
  await dir?.cleanup()
})

describe('a provider that is killed and comes back', () => {
  it('is tried again with a backoff: the fetch resumes from it and completes', async () => {
    const data = randomBytes(40 * MiB)
    const file = join(dir.path, 'shard.bin')
    await writeFile(file, data)
    const add = await runCli(['shards', 'add', file, '--name', 'shard', '--data-dir', dataDir, '--json'])
    expect(add.code).toBe(0)
    const cid = JSON.parse(add.stdout).cid as string
    const providerId = firstJson(provider.stdout()).peerId as string
    await fetcher.host.dial(multiaddr(`${listen}/p2p/${providerId}`))

    let have = 0
    const started = Date.now()
    const fetching = getShardService(fetcher).fetch(cid, {
      providers: [providerId], findTimeoutMs: 10_000, provide: false, onProgress: p => { have = p.haveBlocks }
    })
    fetching.catch(() => {})
    // kill -9 once some blocks arrived; back 4 s later on the same address, same key and store
    for (let i = 0; i < 200 && have < 5; i++) await sleep(50)
    expect(have).toBeGreaterThanOrEqual(5)
    provider.child.kill('SIGKILL')
    await provider.exited
    const atKill = have
    await sleep(4000)
    provider = startProvider()
    await waitForOutput(provider, hasJson, 20_000, 'provider ready again')
    expect(firstJson(provider.stdout()).peerId).toBe(providerId)

    const r = await fetching
    const took = Date.now() - started
    expect(createHash('sha256').update(await getShardService(fetcher).read(cid)).digest('hex')).toBe(createHash('sha256').update(data).digest('hex'))
    const p = r.providers.find(s => s.peerId === providerId)!
    expect(p.retries).toBeGreaterThanOrEqual(1)
    expect(atKill).toBeLessThan(40)
    console.log(`provider killed at ${atKill}/40 blocks, back after 4 s: fetch completed in ${took} ms after ${p.retries} retries`)
  }, 90_000)
})
