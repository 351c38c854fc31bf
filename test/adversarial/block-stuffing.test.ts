import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Keyring } from '@polkadot/keyring'
import { u8aToHex } from '@polkadot/util'
import { cryptoWaitReady } from '@polkadot/util-crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DevChain } from '../../devnet/chain/chain.js'
import { UNIT, devGenesis } from '../../devnet/chain/dev-spec.js'
import type { TaskInfo } from '../../devnet/chain/runtime/arbitration.js'
import { Storage, Overlay } from '../../devnet/chain/runtime/state.js'
import { registerArgs } from '../helpers/peer-key.js'
import { minWindow, taskProgram } from '../helpers/program.js'
import * as reference from '../../protocols/reference/index.js'

// Block stuffing: the dev chain charges no fees, so anyone can fill the pool and
// the blocks with calls that cost nothing. An attacker that keeps the pool full
// (or just deep) around an honest party's deadline used to keep its answer out
// until the deadline passed: the honest solver missed its commit and was slashed
// and replaced. Deadline calls that would succeed are operational: they make room
// in a full pool and go first in a block; failing ones do not. The pool and blocks
// are small here (the attack and the rule are the same at any size).

const kr = new Keyring({ type: 'sr25519' })
const key = (who: string): ReturnType<Keyring['addFromUri']> => kr.addFromUri(`//${who}`)
const acc = (who: string): string => u8aToHex(key(who).publicKey)
const H = (b: number): string => '0x' + b.toString(16).padStart(2, '0').repeat(32)
const MAX_POOL = 120
const MAX_BLOCK = 20
const SOLVE_TIMEOUT = 6

const dirs: string[] = []
const chains: DevChain[] = []
beforeAll(async () => { await cryptoWaitReady() })
afterAll(async () => {
  for (const c of chains) await c.close()
  for (const d of dirs) await rm(d, { recursive: true, force: true })
})

class Node {
  private readonly nonces = new Map<string, number>()
  constructor (readonly c: DevChain) {}

  tx (who: string, section: string, method: string, args: Record<string, unknown>, nonce?: number): Uint8Array {
    const reg = this.c.runtime.types.registry
    const p = this.c.runtime.types.pallets.find(x => x.name === section)
    const call = p?.calls.find(x => x.name === method)
    if (p === undefined || call === undefined) throw new Error(`no call ${section}.${method}`)
    const snake = Object.fromEntries(Object.entries(args).map(([k, v]) => [k.replace(/[A-Z]/g, x => '_' + x.toLowerCase()), v]))
    const n = nonce ?? this.nonces.get(who) ?? this.c.nextNonce(acc(who))
    this.nonces.set(who, n + 1)
    const ext = reg.createType('Extrinsic', reg.createType('Call', { callIndex: [p.index, call.index], args: snake }))
    const g = this.c.genesisHash
    ext.sign(key(who), { nonce: n, era: 0 as never, blockHash: g, genesisHash: g, runtimeVersion: { specVersion: 1, transactionVersion: 1 } as never })
    return ext.toU8a()
  }

  last = ''
  async send (who: string, section: string, method: string, args: Record<string, unknown>): Promise<void> {
    this.last = (await this.c.submit(this.tx(who, section, method, args))).hash
  }

  /** The attacker tops the pool up with free remarks from its accounts until it refuses more. */
  async flood (accounts: string[], max = 2 * MAX_POOL): Promise<number> {
    let sent = 0
    for (let i = 0; i < max; i++) {
      const who = accounts[i % accounts.length]
      try {
        await this.send(who, 'System', 'remark', { remark: '0x' + 'ab'.repeat(32) })
        sent++
      } catch (e) {
        if ((e as { code?: number }).code !== 1016) throw e
        this.nonces.set(who, (this.nonces.get(who) as number) - 1)
        break
      }
    }
    return sent
  }

  task (id: number): TaskInfo {
    return new Storage(this.c.runtime.types, new Overlay({ get: (k: string) => this.c.state.get(k) })).read<TaskInfo>('Arbitration', 'Tasks', id) as TaskInfo
  }
}

async function selectedTask (maxPool: number): Promise<Node> {
  const dir = await mkdtemp(join(tmpdir(), 'ps-stuffing-'))
  dirs.push(dir)
  const c = new DevChain({
    dataDir: dir, genesis: await devGenesis({}), instantSeal: false, blockTime: 3_600_000, verifyWorkers: 0, reference, maxPool, maxBlockExtrinsics: MAX_BLOCK
  })
  await c.start()
  chains.push(c)
  const n = new Node(c)
  await n.send('Bob', 'Arbitration', 'register_node', registerArgs(c.genesisHash, acc('Bob'), 'Bob', 2, 2000n * UNIT))
  await n.send('Dave', 'Arbitration', 'register_node', registerArgs(c.genesisHash, acc('Dave'), 'Dave', 4, 2000n * UNIT))
  await n.send('Eve', 'Arbitration', 'register_node', registerArgs(c.genesisHash, acc('Eve'), 'Eve', 4, 2000n * UNIT))
  const p = taskProgram({ steps: 20, checkpointEvery: 10 })
  await n.send('Alice', 'Arbitration', 'submit_task', {
    programHash: p.programHash, program: p.programHex, datasetRoot: H(2), skeletonRoot: H(3), steps: 20, checkpointEvery: 10, escrow: 100n * UNIT,
    solverReward: 60n * UNIT, verifierReward: 10n * UNIT, verifierCount: 2, challengeWindow: minWindow(p, 2), solveTimeout: SOLVE_TIMEOUT
  })
  c.produce()
  c.produce()
  expect(n.task(0).solver).toBe(acc('Bob'))
  expect(n.task(0).phase).toBe('Solving')
  return n
}

const commit = { taskId: 0, proofRoot: H(9), finalStateRoot: H(8), stepCount: 20, checkpoints: ['0x01', '0x02'] }
const ATTACKERS = ['Ferdie', 'Charlie']

describe('block stuffing around a deadline', () => {
  it('a full pool: the honest solver\'s commit makes room and lands in the next block; a failing deadline call cannot', async () => {
    const n = await selectedTask(MAX_POOL)
    expect(await n.flood(ATTACKERS)).toBe(MAX_POOL)
    // the attacker's own deadline call would fail (it is not the solver): no room for it
    await expect(n.send('Ferdie', 'Arbitration', 'commit_proof', commit)).rejects.toMatchObject({ code: 1016 })
    // nor for a normal call of an honest party (nothing rides on it)
    await expect(n.send('Alice', 'System', 'remark', { remark: '0x01' })).rejects.toMatchObject({ code: 1016 })
    // the newest remark makes room, and whoever watches it is told it was dropped
    const victim = n.last
    const told = new Promise(resolve => n.c.once(`tx:${victim}`, resolve))
    await n.send('Bob', 'Arbitration', 'commit_proof', commit)
    expect(await told).toBe('dropped')
    expect(n.c.pending()).toHaveLength(MAX_POOL)
    const block = n.c.produce()
    expect(block?.extrinsics).toHaveLength(MAX_BLOCK)
    expect(n.task(0).phase).toBe('Verifying')
    expect(n.task(0).solver).toBe(acc('Bob'))
  })

  it('a deep pool: the commit goes before the flood that arrived first, with the normal call its sender queued before it', async () => {
    // room for everything, but ten blocks of the attacker's remarks ahead of the solver
    const n = await selectedTask(50_000)
    expect(await n.flood(ATTACKERS, 10 * MAX_BLOCK)).toBe(10 * MAX_BLOCK)
    await n.send('Bob', 'System', 'remark', { remark: '0x02' })
    await n.send('Bob', 'Arbitration', 'commit_proof', commit)
    await n.flood(ATTACKERS, MAX_BLOCK)
    n.c.produce()
    expect(n.task(0).phase).toBe('Verifying')
    expect(n.c.pending()).toHaveLength(11 * MAX_BLOCK - (MAX_BLOCK - 2))
  })

  it('a flood kept up every block until the solve deadline: the solver committing in the last block before it is not slashed', async () => {
    const n = await selectedTask(MAX_POOL)
    const deadline = n.task(0).deadline as number
    while (n.c.headNumber + 1 < deadline) {
      await n.flood(ATTACKERS)
      expect(n.c.produce()?.extrinsics).toHaveLength(MAX_BLOCK)
    }
    await n.flood(ATTACKERS)
    await n.send('Bob', 'Arbitration', 'commit_proof', commit)
    n.c.produce()
    expect(n.c.headNumber).toBe(deadline)
    const t = n.task(0)
    expect(t.phase).toBe('Verifying')
    expect(t.solver).toBe(acc('Bob'))
    expect(t.excluded).not.toContain(acc('Bob'))
  })
})
