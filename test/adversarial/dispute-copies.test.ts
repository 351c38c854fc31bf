import { cryptoWaitReady } from '@polkadot/util-crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import type { Harness } from '../unit/chain/harness.js'
import { STAKE, honest, nodeOf, playDispute, taskOf, taskOnChain, tamperOp, type Run, type Side } from '../unit/dispute/fixture.js'
import { commitCall, saltOf } from '../helpers/challenge-commit.js'
import { mlpRun, worth } from './setup.js'

// Copies of a real cheat's dispute. Once the finder's open_dispute is in the
// pool (author_pendingExtrinsics) or included (DisputeOpened), its step is
// public: a watcher opens its own dispute there, re-runs one step and wins
// the same claim. Each ruling against the solver slashes half of what is left
// of its stake, half of that to the challenger; before, the share went to
// whichever ruling landed first, so a copier whose ruling landed first took
// S/4 and the finder S/8. Now the finder commits to its dispute (a hash, one
// block before the reveal), and a slash's share is held for its fact (the
// disputed step) and paid largest first in the order of commitments: the
// copier commits only after it saw the step, or not at all, and ranks after
// the finder whatever the inclusion and ruling order. Each test fails if the
// copier takes more than the second share or the finder less than S/4.

const REVEAL_WINDOW = 30
let run: Run
let cheat: Side
beforeAll(async () => {
  await cryptoWaitReady()
  run = await mlpRun()
  // a real cheat: op 10's output changed at the run's step, and the proof commits the states that follow from it
  cheat = tamperOp(run, 10)
}, 120_000)

const disputeArgs = (h: Harness, salt?: string): Record<string, unknown> =>
  ({ taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: run.step, ...(salt !== undefined ? { salt } : {}) })
const reveal = (h: Harness, who: string): [string, string, string, Record<string, unknown>] => [who, 'Arbitration', 'reveal_dispute', disputeArgs(h, saltOf(who, 'Dispute'))]
const openPlain = (h: Harness, who: string): [string, string, string, Record<string, unknown>] => [who, 'Arbitration', 'open_dispute', disputeArgs(h)]
const win = (h: Harness, who: string, disputeId: number): void => {
  expect(playDispute(h, run, cheat, honest(run), { disputeId, challengerName: who, disputedStep: run.step }).status).toBe('ChallengerWon')
}
/** The ruling of `disputeId` stands once its reveal window passed without a forced-error reveal. */
const penalized = (h: Harness, disputeId: number): void => {
  for (let i = 0; i <= REVEAL_WINDOW + 1 && taskOf(h).rulings.find(r => Number(r.disputeId) === disputeId)?.outcome !== 'SolverPenalized'; i++) h.advance(1)
  expect(taskOf(h).rulings.find(r => Number(r.disputeId) === disputeId)?.outcome).toBe('SolverPenalized')
}

type Copy = 'opens in the reveal\'s block, ahead of it, without a commitment' | 'commits after seeing the reveal in the pool, the finder\'s reveal held back a block'

/** Ferdie finds the cheat and commits; Charlie, a pool watcher, copies it. Returns the ids of the finder's and the copier's disputes. */
function copied (h: Harness, copy: Copy): { finder: number, copier: number } {
  expect(h.block([commitCall(h.accounts, 'Ferdie', 'Dispute', run.step)]).results[0].error).toBeUndefined()
  if (copy === 'opens in the reveal\'s block, ahead of it, without a commitment') {
    const { results } = h.block([openPlain(h, 'Charlie'), reveal(h, 'Ferdie')])
    results.forEach(r => expect(r.error).toBeUndefined())
    return { copier: 0, finder: 1 }
  }
  // a block author that is the watcher: its own commitment first, the finder's reveal only in the next block, after its own
  expect(h.block([commitCall(h.accounts, 'Charlie', 'Dispute', run.step)]).results[0].error).toBeUndefined()
  const { results } = h.block([reveal(h, 'Charlie'), reveal(h, 'Ferdie')])
  results.forEach(r => expect(r.error).toBeUndefined())
  return { copier: 0, finder: 1 }
}

describe('a copied dispute of a real cheat', () => {
  const copies: Copy[] = ['opens in the reveal\'s block, ahead of it, without a commitment', 'commits after seeing the reveal in the pool, the finder\'s reveal held back a block']
  for (const copy of copies) {
    for (const first of ['copier', 'finder'] as const) {
      it(`a copier that ${copy}, the ${first}'s ruling landing first: the finder takes S/4, the copier no more than the next share`, async () => {
        const h = await taskOnChain(run, cheat, { verifiers: ['Dave', 'Eve'] })
        expect(h.run('Charlie', 'Arbitration', 'register_node', h.registerArgs('Charlie', 8, STAKE)).error).toBeUndefined()
        const before = { Ferdie: worth(h, 'Ferdie'), Charlie: worth(h, 'Charlie') }
        const ids = copied(h, copy)
        // both win the same claim; one ruling stands before the other is even played
        const order = first === 'copier' ? [['Charlie', ids.copier], ['Ferdie', ids.finder]] as const : [['Ferdie', ids.finder], ['Charlie', ids.copier]] as const
        const [a, b] = order
        win(h, a[0], a[1])
        penalized(h, a[1])
        // the copier's ruling stood first: its share is held while the finder's earlier-committed dispute may still win
        if (first === 'copier') expect(worth(h, 'Charlie')).toBe(before.Charlie)
        win(h, b[0], b[1])
        penalized(h, b[1])
        for (let i = 0; i < 200 && taskOf(h).phase === 'Verifying'; i++) h.advance(1)
        expect(taskOf(h).phase).toBe('Failed')
        const gain = (n: 'Ferdie' | 'Charlie'): bigint => worth(h, n) - before[n]
        // two rulings: S/2, then half of the rest; the larger share to the earlier commitment (before: S/4 to whichever ruled first)
        expect(nodeOf(h, 'Bob').stake).toBe(STAKE / 4n)
        expect(gain('Ferdie')).toBe(STAKE / 4n)
        expect(gain('Charlie')).toBe(STAKE / 8n)
        expect(h.read('Arbitration', 'HeldShares', 0)).toEqual([])
      }, 60_000)
    }
  }

  it('a copier cannot reveal a commitment it did not make, nor in the commitment\'s own block, and a commitment never revealed is forfeited', async () => {
    const h = await taskOnChain(run, cheat, { verifiers: ['Dave', 'Eve'] })
    expect(h.run('Charlie', 'Arbitration', 'register_node', h.registerArgs('Charlie', 8, STAKE)).error).toBeUndefined()
    const bond = h.read<{ disputeBond: bigint }>('Arbitration', 'Params')!.disputeBond
    // the commitment binds its caller: Charlie replaying Ferdie's salt and step finds no commitment of its own
    expect(h.block([commitCall(h.accounts, 'Ferdie', 'Dispute', run.step)]).results[0].error).toBeUndefined()
    expect(h.run('Charlie', 'Arbitration', 'reveal_dispute', disputeArgs(h, saltOf('Ferdie', 'Dispute'))).error).toBe('Arbitration.CommitmentNotFound')
    // a reveal in the commitment's own block would let a block author put both ahead of the finder's: refused
    const { results } = h.block([commitCall(h.accounts, 'Charlie', 'Dispute', run.step), reveal(h, 'Charlie')])
    expect(results[0].error).toBeUndefined()
    expect(results[1].error).toBe('Arbitration.CommitmentTooRecent')
    // a guess at another step: committed, never revealed (its deposit is what blanket guessing costs)
    const charlie = worth(h, 'Charlie')
    expect(h.block([commitCall(h.accounts, 'Charlie', 'Dispute', run.step + 1)]).results[0].error).toBeUndefined()
    expect(h.run('Ferdie', 'Arbitration', 'reveal_dispute', disputeArgs(h, saltOf('Ferdie', 'Dispute'))).error).toBeUndefined()
    expect(h.run('Charlie', 'Arbitration', 'reveal_dispute', disputeArgs(h, saltOf('Charlie', 'Dispute'))).error).toBeUndefined()
    win(h, 'Ferdie', 0)
    win(h, 'Charlie', 1)
    for (let i = 0; i < 200 && taskOf(h).phase === 'Verifying'; i++) h.advance(1)
    expect(taskOf(h).phase).toBe('Failed')
    // Charlie: the second share, less the deposit of its unrevealed guess
    expect(worth(h, 'Charlie') - charlie).toBe(STAKE / 8n - bond)
    expect(h.read('Arbitration', 'ChallengeCommits', 0)).toEqual([])
  }, 60_000)

  it('a dispute committed in the window\'s last block is revealed after it, and the task waits for the reveal', async () => {
    const h = await taskOnChain(run, cheat, { verifiers: ['Dave', 'Eve'] })
    h.advance(taskOf(h).challengeEnd - h.number - 1)
    expect(h.block([commitCall(h.accounts, 'Ferdie', 'Dispute', run.step)]).results[0].error).toBeUndefined()
    expect(h.number).toBe(taskOf(h).challengeEnd)
    // past the window: an uncommitted dispute is refused, the committed one opens (its window is read at its commitment)
    const { results } = h.block([openPlain(h, 'Dave'), reveal(h, 'Ferdie')])
    expect(results[0].error).toBe('Arbitration.ChallengeWindowClosed')
    expect(results[1].error).toBeUndefined()
    expect(taskOf(h).phase).toBe('Verifying')
    win(h, 'Ferdie', 0)
  }, 60_000)
})
