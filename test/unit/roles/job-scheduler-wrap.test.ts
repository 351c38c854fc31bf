import { Registry } from 'prom-client'
import { afterEach, describe, expect, it } from 'vitest'
import type { RolePorts, VerifyResult } from '../../../actors/ports.js'
import type { ChainClient } from '../../../node/chain/client.js'
import { createLogger } from '../../../node/log.js'
import { PeerScheduler, defaultLimits } from '../../../node/roles/job-scheduler.js'

// The scheduler wraps a peer's ports from the outside: what the ports are
// asked must reach them unchanged. A whistleblower's re-check asks verify for
// every step; a wrapper that dropped the sample size made it replay only a
// verifier's sample, and forced errors went uncaught.

let s: PeerScheduler | undefined
afterEach(() => { s?.stop() })

describe('the job scheduler\'s wrapped ports', () => {
  it('verify passes the sample size through (a whistleblower replays every step, a verifier its sample)', async () => {
    const asked: Array<number | undefined> = []
    const ports = {
      verify: async (_taskId: number, sampleCount?: number): Promise<VerifyResult> => { asked.push(sampleCount); return { accept: true, checkedSteps: [] } },
      train: async () => { throw new Error('not in this test') }
    } as unknown as RolePorts
    // the chain as the scheduler reads it: a task in its challenge window, far from its end
    const chain = { task: async () => ({ phase: 'Verifying', challengeEnd: 10_000, steps: 10 }), myAssignment: async () => undefined, bestNumber: async () => 1 } as unknown as ChainClient
    s = new PeerScheduler(defaultLimits({}), { chain: async () => chain, program: async () => { throw new Error('no program') }, log: createLogger('test', { level: 'silent' }), registry: new Registry() })
    s.wrap(ports)
    await ports.verify(3, Number.MAX_SAFE_INTEGER)
    await ports.verify(4)
    expect(asked).toEqual([Number.MAX_SAFE_INTEGER, undefined])
  })
})
