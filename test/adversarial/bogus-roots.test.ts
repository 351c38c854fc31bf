import { cryptoWaitReady } from '@polkadot/util-crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { REVEAL_WINDOW } from '../../devnet/chain/runtime/spec.js'
import { merkleProof, merkleRoot, sha256, toHex } from '../../protocols/commit/merkle.js'
import { encodeClaim, encodeEntryBytes, skeletonRootOf, type Claim } from '../../protocols/dispute/index.js'
import { pathWith } from '../../protocols/dispute/tree.js'
import { u8aToHex } from '@polkadot/util'
import { gamesFor, honest, nodeOf, taskOf, taskOnChain, type Run } from '../unit/dispute/fixture.js'
import { mlpRun, worth } from './setup.js'

// skeleton_root and dataset_root are the submitter's word: the chain cannot
// compute them, and judges skeleton and data claims against them. A submitter
// whose puppet solver trains a real program under a bogus skeleton_root (a tree
// of its own, whose leaves it holds) has another puppet dispute the correct
// proof and win a skeleton claim at a step the honest verifiers' accepts
// listed. Before, each such verifier lost a fifth of its stake, half of it to
// the puppet challenger: the coalition came out ahead (a minimum-stake puppet
// solver loses 500, a quarter back to the coalition; two 10,000-stake
// verifiers lose 2,000 each, 2,000 of it to the coalition). An accept vouches
// that the step replays to the committed states from the program and the
// dataset, which an honest verifier checked; not that the submitter's roots
// are the program's and dataset's, which it cannot open. Now a ruling on a
// skeleton or data claim slashes the solver but no verdict.

let run: Run
beforeAll(async () => {
  await cryptoWaitReady()
  run = await mlpRun()
}, 120_000)

describe('a bogus skeleton_root and a puppet solver against honest verifiers', () => {
  it('the puppet challenger wins a skeleton claim at a step the verifiers replayed; the verifiers are not slashed for it', async () => {
    // the submitter's tree: the program's skeleton with leaf 0 changed
    const forged = run.skeleton.map((l, i) => i === 0 ? sha256(new TextEncoder().encode('not the program\'s first op')) : l)
    const h = await taskOnChain(run, honest(run), { verifiers: ['Dave', 'Eve'], skeletonRoot: '0x' + toHex(skeletonRootOf(forged)) })
    h.advance(2)
    const all = Array.from({ length: run.program.steps }, (_, i) => i)
    for (const v of ['Dave', 'Eve']) expect(h.run(v, 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: all }).error).toBeUndefined()
    const before = { dave: nodeOf(h, 'Dave').stake, eve: nodeOf(h, 'Eve').stake, ferdie: worth(h, 'Ferdie') }
    // Ferdie, the submitter's puppet (a whistleblower), disputes the step both accepts listed
    expect(h.run('Ferdie', 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: run.step }).error).toBeUndefined()
    const g = gamesFor(h, run, honest(run), honest(run), { disputeId: 0, challengerName: 'Ferdie', disputedStep: run.step })
    const commit = g.D.commit()
    const claim: Claim = {
      v: 1,
      kind: 'skeleton',
      commit,
      index: 0,
      entry: encodeEntryBytes(run.entries[0]),
      path: pathWith(g.D.levels, new Map(), 0),
      skelLeaf: forged[0],
      skelPath: merkleProof(forged, 0),
      skelCount: forged.length,
      skelInner: merkleRoot(forged)
    }
    const r = h.run('Ferdie', 'Arbitration', 'adjudicate', { disputeId: 0, claim: u8aToHex(encodeClaim(claim)) })
    expect(r.error).toBeUndefined()
    h.advance(REVEAL_WINDOW + 2)
    expect(taskOf(h).solverFailed).toBe(true)
    expect(taskOf(h).rulings[0]).toMatchObject({ outcome: 'SolverPenalized', claimKind: 'Skeleton' })
    expect({ dave: before.dave - nodeOf(h, 'Dave').stake, eve: before.eve - nodeOf(h, 'Eve').stake }).toEqual({ dave: 0n, eve: 0n })
    // the puppet challenger's gain is the solver's slash share only (the coalition's own stake)
    expect(worth(h, 'Ferdie') - before.ferdie).toBeLessThanOrEqual(nodeOf(h, 'Bob').stake)
  }, 60_000)
})
