import { Keyring } from '@polkadot/keyring'
import { u8aToHex } from '@polkadot/util'
import { describe, expect, it } from 'vitest'
import type { DrawRequest, Params, TaskInfo } from '../../../protocols/pallet-types.js'
import type { ChainClient, ChainEvent } from '../../../node/chain/client.js'
import { DrawRevealer } from '../../../node/dispute/draw-revealer.js'
import { createLogger } from '../../../node/log.js'
import { verifiedTask } from '../../helpers/verified-task.js'
import type { Harness } from '../chain/harness.js'
import { taskOf } from './fixture.js'

// The solver node's reveal of its draw at settlement (node/dispute/draw-revealer.ts),
// against the in-process runtime: the chain client's reads and reveal_draw go to the harness.

/** `name`'s chain client on harness `h`: just what the revealer uses. */
function clientOn (h: Harness, name: string): ChainClient {
  const pair = new Keyring({ type: 'sr25519' }).addFromUri(`//${name}`)
  const fake = {
    accountId: h.accounts[name],
    pair,
    params: async () => h.read<Params>('Arbitration', 'Params')!,
    rootEvery: async () => 1,
    openTasks: async () => h.read<bigint[]>('Arbitration', 'OpenTasks') ?? [],
    task: async (id: bigint | number) => h.read<TaskInfo>('Arbitration', 'Tasks', BigInt(id) as never) ?? null,
    drawRequest: async (id: bigint | number) => h.read<DrawRequest>('Arbitration', 'DrawRequests', BigInt(id) as never) ?? null,
    revealDraw: async (id: bigint | number, outputs: Uint8Array[], proofs: Uint8Array[]) => {
      const r = h.run(name, 'Arbitration', 'reveal_draw', { taskId: BigInt(id), vrfOutputs: outputs.map(o => u8aToHex(o)), vrfProofs: proofs.map(p => u8aToHex(p)) })
      if (r.error !== undefined) throw new Error(r.error)
      const { forcedStep, forcedSteps } = h.read<DrawRequest>('Arbitration', 'DrawRequests', 0 as never)!
      return { forcedStep, forcedSteps, outcome: {} }
    }
  }
  return fake as unknown as ChainClient
}

const log = createLogger('test', { level: 'silent' })
const requested: ChainEvent = { section: 'arbitration', method: 'DrawRequested', data: { taskId: 0n, deadline: 0 } } as unknown as ChainEvent

/** Blocks until the chain asks for the draw. */
function untilRequested (h: Harness): void {
  for (let i = 0; i < 200 && h.read('Arbitration', 'DrawRequests', 0 as never) === undefined; i++) h.advance(1)
  expect(h.read('Arbitration', 'DrawRequests', 0 as never)).toBeDefined()
}

describe('the solver reveals its draw when the chain asks before paying it', () => {
  it('on DrawRequested: the reveal lands, the draw is the one the chain derives, and the task settles', async () => {
    const h = await verifiedTask(1_000_000)
    untilRequested(h)
    const bob = new DrawRevealer({ chain: async () => clientOn(h, 'Bob'), log })
    await bob.reveal(0)
    expect(bob.revealed).toHaveLength(1)
    expect(bob.revealed[0].forcedStep).not.toBeNull()
    expect(h.read<DrawRequest>('Arbitration', 'DrawRequests', 0 as never)).toMatchObject({ revealed: true })
    h.advance(1)
    expect(taskOf(h).phase).toBe('Settled')
  })

  it('after a restart (the event missed) it finds the open request on chain; another node, not the solver, reveals nothing', async () => {
    const h = await verifiedTask(1)
    untilRequested(h)
    const dave = new DrawRevealer({ chain: async () => clientOn(h, 'Dave'), log })
    dave.onChainEvent(requested)
    await dave.catchUp()
    await new Promise(resolve => setTimeout(resolve, 50))
    expect(dave.revealed).toEqual([])
    const bob = new DrawRevealer({ chain: async () => clientOn(h, 'Bob'), log })
    await bob.catchUp()
    for (let i = 0; i < 100 && bob.revealed.length === 0; i++) await new Promise(resolve => setTimeout(resolve, 10))
    expect(bob.revealed.map(r => r.forcedStep)).toEqual([null])
    // nothing left to reveal
    await bob.reveal(0)
    expect(bob.revealed).toHaveLength(1)
  })
})
