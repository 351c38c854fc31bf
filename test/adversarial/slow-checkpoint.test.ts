import { randomBytes } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cryptoWaitReady } from '@polkadot/util-crypto'
import { startChain, type RunningChain } from '../../devnet/chain/index.js'
import { ChainClient } from '../../node/chain/client.js'
import { createLogger } from '../../node/log.js'
import type { Peer } from '../../node/peer.js'
import { blockSignal } from '../../node/roles/block-signal.js'
import type { PortsShared } from '../../node/roles/ports-part.js'
import { VerifierChecks } from '../../node/roles/verifier-checks.js'
import { getShardService } from '../../node/shards/index.js'
import { startShardPeer } from '../helpers/shard-peer.js'
import { tempDir } from '../helpers/procs.js'

// The attack: a solver serves its checkpoints, but one block just inside each
// request's timeout (30 s): the verifier's fetch never fails, it only never
// ends in time. A checkpoint withheld outright is met with an availability
// challenge at once; one served this slowly was waited for past the verifier's
// deadline (a silent slot lapses: the honest verifier pays). Now an assigned
// verifier's downloads end a few blocks before its deadline
// (node/roles/block-signal.ts): the checkpoint is then "not obtainable" and
// challenged on chain in time.

const BLOCK_MS = 250
let dir: { path: string, cleanup: () => Promise<void> }
let rc: RunningChain
let chain: ChainClient
let solver: Peer
let verifier: Peer

beforeAll(async () => {
  await cryptoWaitReady()
  dir = await tempDir('ps-slow-ck-')
  rc = await startChain({ dataDir: join(dir.path, 'chain'), port: 0, blockTime: BLOCK_MS, log: createLogger('chain', { level: 'silent' }) })
  chain = await ChainClient.connect({ url: rc.url, signer: '//Alice' })
  // each answer held 20 s: under the fetcher's 30 s per request, so it never times out
  solver = await startShardPeer(join(dir.path, 'solver'), [], { delayMs: 20_000 })
  verifier = await startShardPeer(join(dir.path, 'verifier'), [solver.host.getMultiaddrs()[0].toString()])
}, 60_000)

afterAll(async () => {
  await verifier?.stop()
  await solver?.stop()
  await chain?.disconnect()
  await rc?.close()
  await dir?.cleanup()
})

describe('a checkpoint served just slowly enough never to time out', () => {
  it('the verifier stops waiting at its block and calls it not obtainable, in time to challenge it', async () => {
    const state = randomBytes(3 * 1024 * 1024) // three blocks: a minute at the solver's pace
    const { cid } = await getShardService(solver).addBytes(state, { name: 'state.bin', kind: 'checkpoint' })
    const checks = new VerifierChecks({ init: { shards: getShardService(verifier) }, log: createLogger('verifier', { level: 'silent' }), dataDir: join(dir.path, 'verifier') } as unknown as PortsShared)
    const ckDir = join(dir.path, 'verifier', 'verify', '0', 'checkpoints', 'step-00000010')
    mkdirSync(ckDir, { recursive: true })
    // its deadline (less the reserve for its reject and challenge) is 12 blocks away: 3 s
    const until = await chain.bestNumber() + 12
    const by = blockSignal(chain, until)
    const t0 = Date.now()
    let timer: NodeJS.Timeout | undefined
    const problem = await Promise.race([
      checks.fetchCheckpoint({ step: 10, manifest: cid, data: cid }, ckDir, solver.peerId.toString(), state.length, by.signal),
      new Promise<string>(resolve => { timer = setTimeout(() => resolve('still waiting after 30 s'), 30_000) })
    ])
    clearTimeout(timer)
    by.stop()
    const ms = Date.now() - t0
    expect(problem).toMatch(/not obtainable/)
    expect(await chain.bestNumber()).toBeGreaterThanOrEqual(until)
    // ended at its block (3 s away; the load may slow blocks), not after the minute the solver takes
    expect(ms).toBeLessThan(15_000)
  }, 90_000)
})
