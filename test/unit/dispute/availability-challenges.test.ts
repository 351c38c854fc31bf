import { describe, expect, it } from 'vitest'
import { runAvailabilityChallenge } from '../../../node/availability/index.js'
import type { ChainClient } from '../../../node/chain/client.js'
import type { Logger } from '../../../node/log.js'

// The verifier's node challenges every checkpoint its sample needs that it
// could not use, at once (docs/economics.md "Selective serving"): one at a
// time, a solver withholding two served the first at the deadline and the
// verifier met the second past the window, unable to challenge it. The chain
// here is a stand-in: challenges open, are served by `serves` (checkpoint →
// polls before its serve) or time out at block 10.

interface Fake { chain: ChainClient, opened: number[], timedOut: number[], manyCalls: number[][] }

function fakeChain (serves: Map<number, number>, o: { openByOthers?: Array<[number, number]> } = {}): Fake {
  const opened: number[] = []
  const timedOut: number[] = []
  const manyCalls: number[][] = []
  const challenges = new Map<number, { step: number, status: string, polls: number }>()
  for (const [step, id] of o.openByOthers ?? []) challenges.set(id, { step, status: 'Open', polls: 0 })
  let block = 0
  let next = 100
  const chain = {
    challengeAvailability: async (_t: number, step: number) => {
      if ((o.openByOthers ?? []).some(([s]) => s === step)) throw Object.assign(new Error('open'), { error: 'arbitration.AvailabilityAlreadyOpen' })
      opened.push(step)
      challenges.set(next, { step, status: 'Open', polls: 0 })
      return BigInt(next++)
    },
    challengeAvailabilityMany: async (t: number, steps: number[]) => {
      if (steps.some(s => (o.openByOthers ?? []).some(([x]) => x === s))) throw Object.assign(new Error('open'), { error: 'arbitration.AvailabilityAlreadyOpen' })
      manyCalls.push(steps)
      return await Promise.all(steps.map(async s => await chain.challengeAvailability(t, s)))
    },
    openAvailability: async () => [...challenges].filter(([, c]) => c.status === 'Open').map(([id, c]) => [c.step, id]),
    availabilityChallenge: async (id: number) => {
      const c = challenges.get(id)!
      block++
      const after = serves.get(c.step)
      if (c.status === 'Open' && after !== undefined && ++c.polls > after) c.status = 'Answered'
      return { status: c.status, deadline: 10 }
    },
    bestNumber: async () => block,
    availabilityTimeout: async (id: number) => { timedOut.push(challenges.get(id)!.step); challenges.get(id)!.status = 'TimedOut' }
  }
  return { chain: chain as unknown as ChainClient, opened, timedOut, manyCalls }
}

const log = { warn: () => {}, info: () => {} } as unknown as Logger

describe('availability challenges of every missing checkpoint', () => {
  it('opens one per checkpoint at once and is served only when every one is', async () => {
    // checkpoint 5 is served at once, 0 a few polls later: the outcome waits for both
    const f = fakeChain(new Map([[5, 0], [0, 3]]))
    const r = await runAvailabilityChallenge(f.chain, 1, 0, log, { pollMs: 0, more: [5] })
    expect(f.opened).toEqual([0, 5])
    // in one call: a solver serving the first at once cannot reopen the verdict before the second is in
    expect(f.manyCalls).toEqual([[0, 5]])
    expect(r.served).toBe(true)
    expect(r.winner).toBe('defender')
    expect(f.timedOut).toEqual([])
  })

  it('one served and one withheld: the withheld one is timed out and the challenger wins', async () => {
    const f = fakeChain(new Map([[5, 0]]))
    const r = await runAvailabilityChallenge(f.chain, 1, 0, log, { pollMs: 0, more: [5, 10] })
    expect(f.opened).toEqual([0, 5, 10])
    expect(f.timedOut.sort((a, b) => a - b)).toEqual([0, 10])
    expect(r.winner).toBe('challenger')
    expect(r.served).toBeUndefined()
  })

  it('a checkpoint someone else already challenged (the chain refuses the call): one by one, that one followed, the others opened', async () => {
    const f = fakeChain(new Map([[0, 0], [5, 1]]), { openByOthers: [[5, 7]] })
    const r = await runAvailabilityChallenge(f.chain, 1, 0, log, { pollMs: 0, more: [5] })
    expect(f.manyCalls).toEqual([])
    expect(f.opened).toEqual([0])
    expect(r.served).toBe(true)
  })
})
