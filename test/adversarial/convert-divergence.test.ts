import { cryptoWaitReady } from '@polkadot/util-crypto'
import { u8aToHex } from '@polkadot/util'
import { beforeAll, describe, expect, it } from 'vitest'
import { proveElementChunk } from '../../protocols/commit/chunked.js'
import { matrixView, proveSlice, type TensorData } from '../../protocols/commit/tensor.js'
import { encodeClaim, encodeEntryBytes, type Claim } from '../../protocols/dispute/index.js'
import { pathWith } from '../../protocols/dispute/tree.js'
import type { Harness } from '../unit/chain/harness.js'
import { gamesFor, honest, taskOf, taskOnChain } from '../unit/dispute/fixture.js'
import { dispute, nanRun, worth } from './setup.js'

// The `convert` claim (a state conversion's cross-check, for chunked state
// roots not yet in use) against today's row + column tapes, which hold no
// conversion. Who gains by misusing it: a griefer that disputes an honest
// diverged proof's last step. Its divergence point is an ordinary op (a
// MatMul, an Exp); a convert claim naming that entry was ruled for the
// challenger by the rule "a conversion makes no NaN" before the chain looked
// at whether the entry is a conversion at all, so the honest solver was
// slashed, its task failed and the griefer paid. The claim must be refused
// (the dispute goes on) for an entry that is no conversion.

let bad: Awaited<ReturnType<typeof nanRun>>
beforeAll(async () => {
  await cryptoWaitReady()
  bad = await nanRun()
}, 120_000)

describe('a convert claim at an honest divergence point', () => {
  it('is refused: the entry is an ordinary op, not a state conversion, and the honest solver is not slashed', async () => {
    const h: Harness = await taskOnChain(bad.run, honest(bad.run), { diverged: { stepCount: bad.k, ...bad.first }, verifiers: ['Dave', 'Eve'] })
    expect(h.run('Dave', 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: bad.k }).error).toBeUndefined()
    const g = gamesFor(h, bad.run, honest(bad.run), honest(bad.run), { disputeId: 0, challengerName: 'Dave', disputedStep: bad.k, nan: { firstNan: bad.first, divergence: bad.first } })
    const i = bad.first.entry
    const e = bad.run.entries[i]
    expect(e.kernel.startsWith('@')).toBe(false)
    // any chunk and slice will do for the griefer: the rule it abuses never opens them
    const out: TensorData = bad.run.values[i].outputs[0]
    const claim: Claim = {
      v: 1,
      kind: 'convert',
      commit: g.D.commit(),
      index: i,
      entry: encodeEntryBytes(e),
      path: pathWith(g.D.levels, new Map(), i),
      flat: 0,
      chunk: proveElementChunk(out, 0),
      slice: proveSlice(out, 'row', Math.floor(0 / matrixView(out.shape).cols))
    }
    const bob = worth(h, 'Bob')
    expect(h.run('Dave', 'Arbitration', 'adjudicate', { disputeId: 0, claim: u8aToHex(encodeClaim(claim)) }).error).toBe('Arbitration.InvalidClaim')
    expect(dispute(h).status).toBe('Open')
    expect(taskOf(h).solverFailed).toBe(false)
    expect(worth(h, 'Bob')).toBe(bob)
  }, 60_000)
})
