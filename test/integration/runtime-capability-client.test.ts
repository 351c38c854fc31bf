import { afterEach, describe, expect, it } from 'vitest'
import { createLogger } from '../../node/log.js'
import { ensureRegistered } from '../../node/roles/chain-link.js'
import { declarableRuntimes } from '../../node/train/psk-available.js'
import { WASM_PSK_RUNTIME } from '../../protocols/program/runtime.js'
import { minRewards, minWindow, taskProgram } from '../helpers/program.js'
import { testPeer } from '../helpers/peer-key.js'
import { clientSample } from '../helpers/verdict-sample.js'
import { chainClients } from './chain-clients.js'

// A node without the psk1 addon (PROOFSWARM_PSK_NATIVE=0, the switch the node
// reads to tell whether psk1 would run on its JavaScript kernels) registers
// through the node's own path (ensureRegistered) and declares no psk1; one
// with the addon declares it. Over the dev chain process, a psk1 task is then
// trained and verified by the declared peers only, though the peers without
// the addon hold ten times their stake; a node whose addon is gone at its next
// start withdraws its declaration.

const UNIT = 10n ** 12n
const c = chainClients('ps-runtimes-', ['Alice', 'Bob', 'Charlie', 'Dave', 'Eve'])
const log = createLogger('test', { level: 'silent' })
const saved = process.env.PROOFSWARM_PSK_NATIVE

afterEach(() => {
  if (saved === undefined) delete process.env.PROOFSWARM_PSK_NATIVE
  else process.env.PROOFSWARM_PSK_NATIVE = saved
})

async function register (name: 'Bob' | 'Charlie' | 'Dave' | 'Eve', role: 'solver' | 'verifier', stake: bigint, addon: boolean): Promise<void> {
  if (addon) delete process.env.PROOFSWARM_PSK_NATIVE
  else process.env.PROOFSWARM_PSK_NATIVE = '0'
  const peer = testPeer(`runtimes-${name}`)
  await ensureRegistered(c[name], peer.peerId, [role], log, peer.sign, stake)
}

describe('a node declares the runtimes it runs, and the chain draws it only for those', () => {
  it('peers without the psk1 addon are never selected or drawn for a psk1 task', async () => {
    // the premise: this machine's addon loads (npm ci builds it), so the node declares psk1 unless told not to
    expect(declarableRuntimes()).toEqual([WASM_PSK_RUNTIME])
    await register('Bob', 'solver', 2000n * UNIT, true)
    await register('Charlie', 'solver', 20_000n * UNIT, false)
    await register('Dave', 'verifier', 2000n * UNIT, true)
    await register('Eve', 'verifier', 20_000n * UNIT, false)
    expect(await c.Bob.nodeRuntimes()).toEqual([WASM_PSK_RUNTIME])
    expect(await c.Dave.nodeRuntimes()).toEqual([WASM_PSK_RUNTIME])
    expect(await c.Charlie.nodeRuntimes()).toEqual([])
    expect(await c.Eve.nodeRuntimes()).toEqual([])

    const block = async (): Promise<void> => { await c.Alice.api.rpc.engine.createBlock(true, true) }
    const p = taskProgram({ steps: 100, checkpointEvery: 10, runtime: WASM_PSK_RUNTIME })
    const { solverReward, verifierReward } = minRewards(p, 1)
    const solvers = new Set<string>()
    const drawn = new Set<string>()
    for (let i = 0; i < 3; i++) {
      const id = await c.Alice.submitTask({
        programHash: p.programHash, program: p.bytes, datasetRoot: '0x' + '02'.repeat(32), skeletonRoot: '0x' + '03'.repeat(32), steps: 100, checkpointEvery: 10,
        escrow: solverReward + verifierReward, solverReward, verifierReward, verifierCount: 1, challengeWindow: minWindow(p, 1), solveTimeout: 40
      })
      for (let b = 0; b < 5 && (await c.Alice.task(id))?.solver == null; b++) await block()
      const solver = (await c.Alice.task(id))?.solver
      expect(solver).toBeTruthy()
      solvers.add(String(solver))
      const by = solver === c.Bob.accountId ? c.Bob : c.Charlie
      await by.commitProof(id, { proofRoot: '0x' + '09'.repeat(32), finalStateRoot: '0x' + '08'.repeat(32), stepCount: 100, checkpoints: [] })
      for (let b = 0; b < 10 && (await c.Alice.assignments(id)) == null; b++) await block()
      for (const v of (await c.Alice.assignments(id))?.verifiers ?? []) drawn.add(v.verifier)
      // the task's verifier votes so that its stake is free for the next one
      if (await c.Dave.myAssignment(id) != null) {
        await c.Dave.submitVerdict(id, true, await clientSample(c.Dave, id))
      }
      for (let b = 0; b < 200 && (await c.Alice.openTasks()).map(BigInt).includes(BigInt(id)); b++) await block()
    }
    expect([...solvers]).toEqual([c.Bob.accountId])
    expect([...drawn]).toEqual([c.Dave.accountId])
  }, 120_000)

  it('a node whose addon no longer loads at its next start withdraws psk1', async () => {
    await register('Dave', 'verifier', 2000n * UNIT, false)
    expect(await c.Dave.nodeRuntimes()).toEqual([])
    await register('Dave', 'verifier', 2000n * UNIT, true)
    expect(await c.Dave.nodeRuntimes()).toEqual([WASM_PSK_RUNTIME])
  }, 60_000)
})
