import { u8aToHex } from '@polkadot/util'
import { beforeAll, describe, expect, it } from 'vitest'
import { REVEAL_WINDOW } from '../../devnet/chain/runtime/spec.js'
import { encodeClaim, verifySigned } from '../../protocols/dispute/index.js'
import { signed } from '../helpers/dispute-msgs.js'
import { STAKE, nodeOf, pair, tamperOp, verify, type Run, type Side } from '../unit/dispute/fixture.js'
import { answer, challengerClaim, dispute, force, honestReply, mlpRun, opened, tx, until, worth } from './setup.js'
import { CTX, bob, dave, segmentChallenger, segmentDefender, stepGames, verify as segVerify } from './segment-setup.js'

// The defender's first message off chain is signed and well formed but of no
// use to the challenger: a commit of another step than the disputed one (in a
// segment dispute, than the opened one), or a refusal where the commit is
// due. Neither is provably a lie (the chain refuses a `lie` naming a commit of
// another step). Before, the challenger's game gave up on it ('expected the
// tape commitment', 'defender refused') and the honest challenger's node
// stopped playing: the cheater never committed, and the challenger lost its
// bond at the deadline while the wrong proof stood. Now the game asks for it
// on chain (a `demand`: the challenger's first force; in a segment dispute the
// opening forced again), where only the commit of the right step answers.

let run: Run
let cheat: Side
beforeAll(async () => {
  run = await mlpRun()
  cheat = tamperOp(run, run.entries.findIndex(e => e.kernel === 'BatchMatMul'))
}, 120_000)

describe('a cheater answers the dispute with a commit of another step', () => {
  it('one-step dispute: the challenger demands the commit on chain; the cheater must post the real one and loses its claim', async () => {
    const { h, g } = await opened(run, cheat)
    const daveBefore = worth(h, 'Dave')
    const real = g.D.commit()
    const other = signed('Bob', g.ctx, { t: 'commit', d: 0, step: run.step + 1, traceRoot: new Uint8Array(32).fill(3), depth: g.D.depth })
    const first = g.C.onMessage(verifySigned(other, pair('Bob').publicKey, verify, g.ctx), other)
    if ('demand' in first) {
      // the node's first force: both messages empty; the chain takes only a commit of the disputed step
      expect(force(h, 'Dave')).toBeUndefined()
      expect(answer(h, 'Bob', other)).toBe('Arbitration.InvalidMove')
      expect(answer(h, 'Bob', real)).toBeUndefined()
      const claim = challengerClaim(g, real, honestReply(g))
      expect(claim).toBeDefined()
      expect(tx(h, 'Dave', 'adjudicate', { claim: u8aToHex(encodeClaim(claim!)) })).toBeUndefined()
    } else {
      // the game gave up: the node stops playing and the dispute runs to its deadline
      expect(first).toHaveProperty('fail')
      until(h, dispute(h).deadline + 1)
      expect(tx(h, 'Bob', 'claim_timeout')).toBeUndefined()
    }
    expect(dispute(h).status).toBe('ChallengerWon')
    expect(h.advance(REVEAL_WINDOW + 1)).toContain('Arbitration.SolverPenalized')
    expect(nodeOf(h, 'Bob').stake).toBeLessThan(STAKE)
    expect(worth(h, 'Dave')).toBeGreaterThan(daveBefore)
  }, 120_000)

  it('segment dispute: a refusal or a commit of another step answering the opening makes the challenger force its opening again', () => {
    const m = 4
    const j = Math.floor(run.step / m)
    const SD = segmentDefender(run, cheat, m, j)
    const SC = segmentChallenger(run, cheat, run.roots, m, j)
    const seg = SD.segment()
    const opened = SC.onSegment(verifySigned(seg, bob.publicKey, segVerify, CTX), seg)
    if ('fail' in opened) throw new Error(opened.fail)
    const r = SD.onOpen(verifySigned(opened.send, dave.publicKey, segVerify, CTX), opened.send)
    if (!('opening' in r)) throw new Error('the defender should take the opening')
    for (const body of [
      { t: 'refuse' as const, d: 0, reason: 'no' },
      { t: 'commit' as const, d: 0, step: opened.step + 1, traceRoot: new Uint8Array(32).fill(3), depth: 5 }
    ]) {
      const { C } = stepGames(run, cheat, { entries: run.entries, values: run.values, roots: run.roots }, r.opening, opened.segment, CTX)
      const bad = signed('Bob', CTX, body, opened.send)
      const next = C.onMessage(verifySigned(bad, bob.publicKey, segVerify, CTX), bad)
      // the same opening again: the node forces it (theirs: the segment, mine: the opening)
      expect(next).toEqual({ send: opened.send })
      expect(C.pending).toEqual({ theirs: seg, mine: opened.send })
    }
  })
})
