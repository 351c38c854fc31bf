import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { cryptoWaitReady } from '@polkadot/util-crypto'
import { afterAll, describe, expect, it } from 'vitest'
import { DevChain } from '../../../devnet/chain/chain.js'
import { devGenesis } from '../../../devnet/chain/dev-spec.js'
import { Overlay, Storage } from '../../../devnet/chain/runtime/state.js'
import type { Logger } from '../../../node/log.js'

// The chain host (the process `proofswarm chain` runs) over a task its block
// hook faults on: it keeps producing blocks and logs the fault at error level
// (the runtime side: test/adversarial/hook-fault.test.ts).

let chain: DevChain | undefined
let dir: string | undefined
afterAll(async () => {
  await chain?.close()
  if (dir !== undefined) await rm(dir, { recursive: true, force: true })
})

describe('the dev chain host, when on_initialize faults on a task', () => {
  it('produces the block and the next ones, and logs the fault once', async () => {
    await cryptoWaitReady()
    dir = await mkdtemp(join(tmpdir(), 'ps-chain-fault-'))
    const errors: Array<{ o: Record<string, unknown>, msg: string }> = []
    const error = (o: Record<string, unknown>, msg: string): void => { errors.push({ o, msg }) }
    const log = { info () {}, debug () {}, warn () {}, trace () {}, error } as unknown as Logger
    chain = new DevChain({ dataDir: dir, genesis: await devGenesis({}), instantSeal: false, blockTime: 3_600_000, verifyWorkers: 0, log })
    await chain.start()
    // an open task whose stored record no code can read (only a write outside the runtime makes one)
    const c = chain
    const store = new Storage(c.runtime.types, new Overlay({ get: k => c.state.get(k) }))
    store.put('Arbitration', 'OpenTasks', undefined, [0n])
    for (const [k, v] of store.state.changes) if (v !== null) c.state.set(k, v)
    c.state.set(store.key('Arbitration', 'Tasks', 0n), Uint8Array.of(1, 2, 3))
    const first = c.produce({ allowEmpty: true })
    expect(first).toBeDefined()
    expect(errors.map(e => [e.o.taskId, e.msg])).toEqual([[0n, expect.stringMatching(/faulted/) as string]])
    expect(String(errors[0].o.reason)).toMatch(/AccountId/)
    for (let i = 0; i < 3; i++) expect(c.produce({ allowEmpty: true })).toBeDefined()
    expect(errors).toHaveLength(1)
    expect(c.headNumber).toBe(4)
  })
})
