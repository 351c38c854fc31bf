import { randomBytes } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ChainClient, TaskInfo } from '../../node/chain/client.js'
import { ensureReplayDir } from '../../node/dispute/replay-dir.js'
import { createLogger } from '../../node/log.js'
import type { Peer } from '../../node/peer.js'
import { blockSignal } from '../../node/roles/block-signal.js'
import { DEFAULT_ECONOMICS } from '../../node/roles/economics.js'
import { PortsPart, type PortsShared } from '../../node/roles/ports-part.js'
import { VerifierPorts } from '../../node/roles/verifier-ports.js'
import { getShardService } from '../../node/shards/index.js'
import type { TaskProgram } from '../../protocols/program/program.js'
import { RUN_INDEX_PREFIX } from '../../protocols/verification/run-index.js'
import { CUSTOM_PROGRAM } from '../helpers/custom-dataset.js'
import { tempDir } from '../helpers/procs.js'
import { startShardPeer } from '../helpers/shard-peer.js'

// The attack (slow-checkpoint.test.ts's, on the fetches it did not cover): a
// solver, or a submitter, serves what others must fetch one block just inside
// each request's timeout (30 s), so a fetch never fails, it only never ends
// in time. A whistleblower re-checking the task (no assignment, so no deadline
// of its own) waited on the run index past the challenge window, its one
// chance to challenge, and meanwhile re-checked no other task (it takes them
// one at a time): the cheat it was there to catch went unchallenged. A
// challenger's replay directory and a task's dataset (its submitter's bundle)
// were waited on the same way. Now a whistleblower's downloads end a few
// blocks before the task's challenge window ends, a challenger's before the
// last block it may open its dispute in, and a dataset's with its fetcher's
// (an assigned verifier's deadline; half of what is left of a solver's solve
// window), each in time to challenge or hand the task back.

const BLOCK_MS = 400
/** a CID the run index names (its files are never fetched here) */
const BAFY = 'bafyreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy'
const log = createLogger('test', { level: 'silent' })
let dir: { path: string, cleanup: () => Promise<void> }
let slow: Peer
let fetcher: Peer
let solver: Peer
const t0 = Date.now()
/** the chain's best block: one every BLOCK_MS */
const best = (): number => 100 + Math.floor((Date.now() - t0) / BLOCK_MS)

beforeAll(async () => {
  dir = await tempDir('ps-slow-fetches-')
  // each answer held 20 s: under the fetcher's 30 s per request, so it never times out
  slow = await startShardPeer(join(dir.path, 'slow'), [], { delayMs: 20_000 })
  fetcher = await startShardPeer(join(dir.path, 'fetcher'), [slow.host.getMultiaddrs()[0].toString()])
  solver = await startShardPeer(join(dir.path, 'solver'), [slow, fetcher].map(p => p.host.getMultiaddrs()[0].toString()))
}, 60_000)

afterAll(async () => {
  await solver?.stop()
  await fetcher?.stop()
  await slow?.stop()
  await dir?.cleanup()
})

/** Content the slow peer serves (three blocks: a minute at its pace), announced in the DHT. */
async function served (name: string): Promise<string> {
  const { cid } = await getShardService(slow).addBytes(randomBytes(3 * 1024 * 1024), { name, kind: 'file' })
  await getShardService(slow).provide(cid, 10_000).catch(() => {})
  return cid
}

/** `p`, or 'still waiting' after 15 s (the minute the slow peer takes is the old behaviour). */
async function within<T> (p: Promise<T>): Promise<T | 'still waiting'> {
  let timer: NodeJS.Timeout | undefined
  const r = await Promise.race([p, new Promise<'still waiting'>(resolve => { timer = setTimeout(() => resolve('still waiting'), 15_000) })])
  clearTimeout(timer)
  return r
}

/** A task in its challenge window, its run index `indexCid`, the window ending `blocks` from now; its solver's peer `solverPeer`. */
function taskView (indexCid: string, blocks: number, solverPeer?: string): { chain: ChainClient, task: TaskInfo } {
  const task = {
    phase: 'Verifying', solver: '0x' + '22'.repeat(32), steps: 10, stepCount: 10, checkpointEvery: 5, verifierCount: 1, committedAt: 90,
    challengeEnd: best() + blocks, divergence: null, proofRoot: '0x' + '11'.repeat(32),
    checkpoints: ['0x' + Buffer.from(RUN_INDEX_PREFIX + indexCid).toString('hex')]
  } as unknown as TaskInfo
  const chain = {
    accountId: '0x' + '44'.repeat(32),
    task: async () => task,
    myAssignment: async () => null, // a whistleblower: drawn for nothing
    bestNumber: async () => best(),
    randomness: async () => '0x' + '55'.repeat(32),
    rootEvery: async () => 1,
    servedCheckpoints: async () => new Map(),
    openDatasetChallenges: async () => [],
    answeredDatasetChallenges: async () => [],
    node: async () => solverPeer === undefined ? null : { peerId: '0x' + Buffer.from(solverPeer).toString('hex') }
  } as unknown as ChainClient
  return { chain, task }
}

describe('fetches served just slowly enough never to time out', () => {
  it('a whistleblower stops waiting for the run before the challenge window ends, in time to challenge', async () => {
    const { chain, task } = taskView(await served('run-index.json'), 15)
    const ports = new VerifierPorts({
      init: { chain: async () => chain, shards: getShardService(fetcher), book: { get: async () => undefined } },
      peerId: fetcher.peerId, progress: new Map(), econ: DEFAULT_ECONOMICS, log, dataDir: mkdtempSync(join(dir.path, 'wb-')), engine: undefined
    } as unknown as PortsShared)
    const started = Date.now()
    const r = await within(ports.verify(0, 4))
    // not the run: a challenge of what a replay from the chain needs, before the window's end
    expect(r).toMatchObject({ accept: false, unavailable: { step: 0 } })
    expect(best()).toBeLessThan(task.challengeEnd)
    expect(Date.now() - started).toBeLessThan(15_000)
  }, 60_000)

  it('a run its solver serves is fetched from it, however the DHT\'s provider records stall', async () => {
    // the solver's run index (its proof root is not the task's: the verifier finds out once it has it),
    // which the solver holds but the DHT does not name; the staller's record of the same bytes, it does
    const index = new TextEncoder().encode(JSON.stringify({ version: 1, taskId: 0, programHash: '0x' + '33'.repeat(32), proofRoot: '0x' + '66'.repeat(32), program: BAFY, proof: BAFY, checkpoints: [] }))
    const { cid } = await getShardService(solver).addBytes(index, { name: 'run-index.json', kind: 'file' }, { provide: false })
    await getShardService(slow).addBytes(index, { name: 'run-index.json', kind: 'file' })
    await getShardService(slow).provide(cid, 10_000).catch(() => {})
    const { chain } = taskView(cid, 40, solver.peerId)
    const ports = new VerifierPorts({
      init: { chain: async () => chain, shards: getShardService(fetcher), book: { get: async () => undefined } },
      peerId: fetcher.peerId, progress: new Map(), econ: DEFAULT_ECONOMICS, log, dataDir: mkdtempSync(join(dir.path, 'wb-')), engine: undefined
    } as unknown as PortsShared)
    const started = Date.now()
    const r = await within(ports.verify(0, 4))
    // it got the index (and found it is not the task's) from the solver at once, not from the staller
    expect(r).toMatchObject({ accept: false, unavailable: { step: 0, reason: expect.stringMatching(/names proof root/) } })
    expect(Date.now() - started).toBeLessThan(10_000)
  }, 60_000)

  it('a challenger\'s replay directory ends with its signal', async () => {
    const { task } = taskView(await served('run-index.json'), 8)
    const by = blockSignal({ bestNumber: async () => best() }, task.challengeEnd)
    const r = await within(ensureReplayDir(getShardService(fetcher), 0, task, mkdtempSync(join(dir.path, 'ch-')), 5, slow.peerId, by.signal).then(() => 'done', (e: Error) => e.message))
    by.stop()
    expect(r).toMatch(/aborted|not obtained before block/)
    expect(best()).toBeGreaterThanOrEqual(task.challengeEnd)
  }, 60_000)

  it('a task\'s dataset ends with its fetcher\'s signal', async () => {
    const program: TaskProgram = CUSTOM_PROGRAM.program
    // a bundle served as slowly: its manifest's answer alone takes 20 s
    const bundle = await served('bundle.json')
    class DatasetFetch extends PortsPart {
      async fetch (signal: AbortSignal): Promise<string | undefined> { return await this.datasetDirFor(program, bundle, signal) }
    }
    const ports = new DatasetFetch({
      init: { shards: getShardService(fetcher), datasetDir: join(dir.path, 'nowhere') },
      peerId: fetcher.peerId, progress: new Map(), econ: {}, log, dataDir: mkdtempSync(join(dir.path, 'ds-')), engine: undefined
    } as unknown as PortsShared)
    const until = best() + 8
    const by = blockSignal({ bestNumber: async () => best() }, until)
    const r = await within(ports.fetch(by.signal).then(() => 'done', (e: Error) => e.message))
    by.stop()
    expect(r).toMatch(/aborted|not obtained before block/)
    expect(best()).toBeGreaterThanOrEqual(until)
  }, 60_000)
})
