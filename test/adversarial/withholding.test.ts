import { beforeAll, describe, expect, it } from 'vitest'
import { REVEAL_WINDOW } from '../../devnet/chain/runtime/spec.js'
import type { Signed } from '../../protocols/dispute/index.js'
import { signed } from '../helpers/dispute-msgs.js'
import { STAKE, honest, nodeOf, pair, playOnChain, taskOf, tamperOp, verify, type Run, type Side } from '../unit/dispute/fixture.js'
import { verifySigned } from '../../protocols/dispute/index.js'
import { answer, dispute, force, mlpRun, opened, tx, until, worth } from './setup.js'

// (b) A cheating defender that withholds: it commits (off chain, or not at
// all) and then never serves the bytes of its answers. Before forces, a move
// was only a hash on chain and its bytes went over libp2p, so the challenger's
// clock ran while it waited. Now the challenger forces its pending move and
// the defender must post the answer's bytes on chain or lose. Every test
// fails if the cheater keeps its stake or the challenger loses anything.

let run: Run
let cheat: Side
beforeAll(async () => {
  run = await mlpRun()
  cheat = tamperOp(run, run.entries.findIndex(e => e.kernel === 'BatchMatMul'))
}, 120_000)

function expectCheaterLost (h: Awaited<ReturnType<typeof opened>>['h'], daveBefore: bigint): void {
  expect(dispute(h).status).toBe('ChallengerWon')
  // a timeout has no forced-error excuse: slashed at once, half its stake
  expect(nodeOf(h, 'Bob').stake).toBe(STAKE / 2n)
  expect(taskOf(h).solverFailed).toBe(true)
  expect(worth(h, 'Dave')).toBeGreaterThan(daveBefore)
}

describe('a cheating defender withholds its moves', () => {
  it('commits off chain, then never answers the opening: forced, silent, it loses and is slashed', async () => {
    const { h, g } = await opened(run, cheat)
    const daveBefore = worth(h, 'Dave')
    const commit = g.D.commit()
    const open = g.C.onMessage(verifySigned(commit, pair('Bob').publicKey, verify, g.ctx), commit)
    if (!('send' in open)) throw new Error('the challenger should open')
    // the defender withholds its answer: the challenger posts the commit it got and its opening
    expect(force(h, 'Dave', commit, open.send)).toBeUndefined()
    const f = dispute(h).force!
    expect(f).toMatchObject({ to: 'Defender', seq: 2 })
    // both messages are on chain in full: the opening is readable by anyone
    expect(dispute(h).moves).toBe(2)
    until(h, f.due)
    expect(tx(h, 'Bob', 'claim_timeout')).toBe('Arbitration.NotExpired')
    expect(tx(h, 'Eve', 'claim_timeout')).toBeUndefined()
    expectCheaterLost(h, daveBefore)
  })

  it('never sends its commit: the challenger demands it on chain and wins when it does not come', async () => {
    const { h } = await opened(run, cheat)
    const daveBefore = worth(h, 'Dave')
    expect(force(h, 'Dave')).toBeUndefined()
    until(h, dispute(h).force!.due + 1)
    expect(tx(h, 'Dave', 'claim_timeout')).toBeUndefined()
    expectCheaterLost(h, daveBefore)
  })

  it('answers a force with bytes that are not the answer (a refusal): refused, so it still loses', async () => {
    const { h, g } = await opened(run, cheat)
    const daveBefore = worth(h, 'Dave')
    const commit = g.D.commit()
    const open = g.C.onMessage(verifySigned(commit, pair('Bob').publicKey, verify, g.ctx), commit) as { send: Signed }
    expect(force(h, 'Dave', commit, open.send)).toBeUndefined()
    expect(answer(h, 'Bob', signed('Bob', g.ctx, { t: 'refuse', d: 0, reason: 'no' }, open.send))).toBe('Arbitration.NotAnAnswer')
    until(h, dispute(h).force!.due + 1)
    expect(tx(h, 'Eve', 'claim_timeout')).toBeUndefined()
    expectCheaterLost(h, daveBefore)
  })

  it('goes silent in the middle of the bisection: forced, it loses; answering every force on chain only delays its loss on the claim', async () => {
    const silent = await playOnChain(run, cheat, honest(run), { defenderSilentAfter: 6 })
    expect(silent.outcome).toMatchObject({ how: 'timeout', status: 'ChallengerWon' })
    expect(nodeOf(silent.h, 'Bob').stake).toBe(STAKE / 2n)
    const slow = await playOnChain(run, cheat, honest(run), { defenderOffChainAfter: 1 })
    expect(slow.outcome).toMatchObject({ how: 'claim', status: 'ChallengerWon' })
    expect(slow.h.advance(REVEAL_WINDOW + 1)).toContain('Arbitration.SolverPenalized')
    expect(nodeOf(slow.h, 'Bob').stake).toBeLessThan(STAKE)
  })
})
