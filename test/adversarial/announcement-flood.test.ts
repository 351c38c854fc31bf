import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Keyring } from '@polkadot/keyring'
import { u8aToHex } from '@polkadot/util'
import { cryptoWaitReady } from '@polkadot/util-crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ChainClient } from '../../node/chain/client.js'
import { Defender } from '../../node/dispute/defender.js'
import { NO_NODE_FAULTS } from '../../node/dispute/faults.js'
import type { TapeFile } from '../../node/engine/tape-file.js'
import { createLogger } from '../../node/log.js'
import { POL_VERSION, proofRootOf } from '../../protocols/pol/proof.js'

// A challenger may announce a step before opening its dispute (`prepare`), so
// that the solver tapes it meanwhile. The announcement costs nothing (any
// registered peer, no bond) and a tape is an engine process (a fresh tfjs, the
// model, the batch). Before, every announced step started its own process at
// once: a peer announcing every step of a proof made the solver run hundreds of
// them side by side (its memory gone, its real disputes' tapes late, and their
// commits due on chain: a timeout is a slash). And disputes opened together
// were taped side by side, all finishing late, while the chain's TapeQueue
// gives the first its allowance first. Now the defender tapes one step at a
// time in the order asked for, tapes an announcement only when idle, and an
// announced tape gives way to a dispute's.

const STEPS = 40
let dataDir: string
let chain: ChainClient

beforeAll(async () => {
  await cryptoWaitReady()
  dataDir = mkdtempSync(join(tmpdir(), 'psw-announce-'))
  const roots = Array.from({ length: STEPS + 1 }, (_, i) => (i + 1).toString(16).padStart(64, '0'))
  const proofRoot = proofRootOf(roots)
  const runDir = join(dataDir, 'tasks', '0', 'run'); mkdirSync(runDir, { recursive: true })
  writeFileSync(join(runDir, 'proof.json'), JSON.stringify({ version: POL_VERSION, programHash: '00'.repeat(32), steps: STEPS, stateRoots: roots, finalStateRoot: roots[STEPS], checkpoints: [], proofRoot }))
  const pair = new Keyring({ type: 'sr25519' }).addFromUri('//Bob')
  const task = { solver: u8aToHex(pair.publicKey), phase: 'Verifying', stepCount: STEPS, steps: STEPS, divergence: null, proofRoot: '0x' + proofRoot.replace(/^0x/, ''), selectionSeed: '0x' + '11'.repeat(32) }
  chain = {
    accountId: task.solver,
    pair,
    genesisHash: '0x' + '22'.repeat(32),
    task: async () => task,
    peerOwner: async () => '0x' + '33'.repeat(32),
    params: async () => ({ forcedErrorPpm: 0 }),
    rootEvery: async () => 1
  } as unknown as ChainClient
})
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

/** A defender whose engine processes are recorded: how many ran at once, in which order, which were aborted. */
function defender (ms: number): { d: Defender, started: number[], aborted: number[], peak: () => number } {
  let running = 0; let peak = 0
  const started: number[] = []; const aborted: number[] = []
  const d = new Defender({
    log: createLogger('test', { level: 'silent' }),
    faults: NO_NODE_FAULTS,
    dataDir,
    chain: async () => chain,
    adjudicate: async () => '',
    forceAfterMs: 60_000,
    segmentRoots: async () => { throw new Error('no segments in this task') },
    tapeInChild: async (_runDir, step, _out, _o, signal) => {
      running += 1; peak = Math.max(peak, running); started.push(step - 1)
      try {
        await new Promise<void>((resolve, reject) => {
          if (signal?.aborted === true) { reject(new Error('aborted')); return }
          const timer = setTimeout(resolve, ms)
          signal?.addEventListener('abort', () => { clearTimeout(timer); aborted.push(step - 1); reject(new Error('aborted')) }, { once: true })
        })
      } finally { running -= 1 }
      return { entries: [] } as unknown as TapeFile
    }
  })
  return { d, started, aborted, peak: () => peak }
}

describe('announcements and concurrent disputes against one defender', () => {
  it('a peer announcing every step of the proof gets one engine process, not one per step', async () => {
    const { d, started, peak } = defender(200)
    const answers = await Promise.all(Array.from({ length: STEPS }, async (_, s) => await d.answer({ d: 0, prepare: { task: 0, step: s } }, 'peer')))
    await new Promise(resolve => setTimeout(resolve, 400))
    expect(peak()).toBe(1)
    expect(started.length).toBe(1)
    expect(answers.filter(a => a.end === 'preparing').length).toBe(1)
    expect(answers.filter(a => a.err === 'busy taping another step').length).toBe(STEPS - 1)
  })

  it('disputes are taped one at a time, in the order they were opened', async () => {
    const { d, started, peak } = defender(50)
    await Promise.all([7, 3, 9, 1].map(async s => await d.tapeFor(chain, 0, s)))
    expect(peak()).toBe(1)
    expect(started).toEqual([7, 3, 9, 1])
  })

  it('an announced tape gives way to a dispute of another step; one of the announced step keeps it', async () => {
    const { d, started, aborted } = defender(300)
    expect(await d.answer({ d: 0, prepare: { task: 0, step: 5 } }, 'peer')).toEqual({ end: 'preparing' })
    await new Promise(resolve => setTimeout(resolve, 50))
    const first = Date.now()
    await d.tapeFor(chain, 0, 6)
    expect(aborted).toEqual([5])
    expect(Date.now() - first).toBeLessThan(600)
    expect(await d.answer({ d: 0, prepare: { task: 0, step: 8 } }, 'peer')).toEqual({ end: 'preparing' })
    await new Promise(resolve => setTimeout(resolve, 50))
    await d.tapeFor(chain, 0, 8)
    expect(aborted).toEqual([5])
    expect(started).toEqual([5, 6, 8])
  })
})
