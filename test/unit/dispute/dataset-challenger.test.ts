import { describe, expect, it } from 'vitest'
import { runDatasetChallenge } from '../../../node/availability/dataset-challenger.js'
import type { ChainClient } from '../../../node/chain/client.js'
import type { Logger } from '../../../node/log.js'

// The verifier's node follows its dataset challenge to its end (docs/economics.md
// "A withheld dataset"): answered → served (it replays from the rows); past the
// deadline unanswered → it calls dataset_timeout itself, its reject stands;
// already challenged (a restart) → it follows the challenge it opened before.
// The chain is a stand-in: the deadline is block 10, each poll one block.

const ME = '0x' + '44'.repeat(32)

function fakeChain (o: { servedAfter?: number, opened?: number }): { chain: ChainClient, timeouts: number[], programs: Uint8Array[] } {
  const timeouts: number[] = []
  const programs: Uint8Array[] = []
  let block = 0
  let polls = 0
  const c = { challenger: ME, status: 'Open' as string, deadline: 10 }
  const chain = {
    accountId: ME,
    challengeDataset: async (_t: number, program: Uint8Array) => {
      if (o.opened !== undefined) throw Object.assign(new Error('again'), { error: 'arbitration.DatasetAlreadyChallenged' })
      programs.push(program)
      return 7n
    },
    openDatasetChallenges: async () => o.opened !== undefined ? [o.opened] : [],
    answeredDatasetChallenges: async () => [],
    datasetChallenge: async () => {
      block++
      if (c.status === 'Open' && o.servedAfter !== undefined && ++polls > o.servedAfter) c.status = 'Answered'
      return { ...c }
    },
    bestNumber: async () => block,
    datasetTimeout: async (id: number) => {
      if (block <= c.deadline) throw Object.assign(new Error('early'), { error: 'arbitration.DeadlineNotReached' })
      timeouts.push(id)
      c.status = 'TimedOut'
    }
  }
  return { chain: chain as unknown as ChainClient, timeouts, programs }
}

const log = { warn: () => {}, info: () => {} } as unknown as Logger

describe('the verifier\'s dataset challenge', () => {
  it('served: the outcome says so (the verifier replays from the rows and votes again)', async () => {
    const f = fakeChain({ servedAfter: 2 })
    const r = await runDatasetChallenge(f.chain, 1, Uint8Array.of(1, 2), log, { pollMs: 0 })
    expect(r).toMatchObject({ challengeId: 7, winner: 'defender', served: true })
    expect(f.programs).toEqual([Uint8Array.of(1, 2)])
    expect(f.timeouts).toEqual([])
  })

  it('unserved: timed out by the verifier once the deadline is past; its reject stands', async () => {
    const f = fakeChain({})
    const r = await runDatasetChallenge(f.chain, 1, Uint8Array.of(1), log, { pollMs: 0 })
    expect(r).toMatchObject({ challengeId: 7, winner: 'challenger' })
    expect(r.served).toBeUndefined()
    expect(f.timeouts).toEqual([7])
  })

  it('after a restart: follows the challenge it opened before', async () => {
    const f = fakeChain({ opened: 12, servedAfter: 0 })
    const r = await runDatasetChallenge(f.chain, 1, Uint8Array.of(1), log, { pollMs: 0 })
    expect(r).toMatchObject({ challengeId: 12, served: true })
  })
})
