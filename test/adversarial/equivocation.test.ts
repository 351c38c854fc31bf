import { cryptoWaitReady } from '@polkadot/util-crypto'
import { u8aToHex } from '@polkadot/util'
import { decode, encode } from 'cborg'
import { beforeAll, describe, expect, it } from 'vitest'
import { encodeClaim, equivocationClaim, signMsg, signingPayload, type Msg, type Signed } from '../../protocols/dispute/index.js'
import { pair, tamperOp, verify, type Run, type Side } from '../unit/dispute/fixture.js'
import { answer, dispute, force, mlpRun, msgOf, opened, tx } from './setup.js'

// A defender's message travels off chain first; the challenger's next move
// names its bytes (`prev`). Who gains by forcing on chain another message at
// the same place: a cheating solver. The challenger's move, linked to the first,
// is no answer to the second (NotAnAnswer), and the honest node, answering the
// force with the move it had, failed and lost at the response window's end,
// the wrong proof standing. Two ways to say it again:
//   - the same message in other bytes (another key order, an extra field):
//     messages now have one encoding, and a re-encoded one is refused;
//   - another message at that place (another tape root): the two contradict,
//     and the challenger claims the `lie` from both (equivocationClaim).

let run: Run
let cheat: Side
beforeAll(async () => {
  await cryptoWaitReady()
  run = await mlpRun()
  cheat = tamperOp(run, 10)
}, 120_000)

const bob = pair('Bob')
/** Bob's signature over raw message bytes in this dispute (a defender message: even seq). */
const signRaw = (ctx: Parameters<typeof signingPayload>[0], m: Uint8Array): Signed => ({ m, s: bob.sign(signingPayload(ctx, 'defender', m)), a: bob.publicKey })

describe('a defender that forces another message than the one the challenger answered', () => {
  it('the same commit re-encoded (an extra field) is refused on chain: the challenger\'s opening still answers the real one', async () => {
    const { h, g } = await opened(run, cheat)
    const c1 = g.D.commit()
    const next = g.C.onMessage(msgOf(c1), c1)
    if (!('send' in next)) throw new Error('no opening')
    const reEncoded = signRaw(g.ctx, encode({ ...(decode(c1.m) as Record<string, unknown>), z: 0 }))
    expect(force(h, 'Bob', undefined, reEncoded)).toBe('Arbitration.InvalidMove')
    // the commit itself, forced: the opening answers it
    expect(force(h, 'Bob', undefined, c1)).toBeUndefined()
    expect(answer(h, 'Dave', next.send)).toBeUndefined()
  }, 60_000)

  it('another commit (another tape root) forced after the opening: the challenger\'s lie claim from the two wins', async () => {
    const { h, g } = await opened(run, cheat)
    const c1 = g.D.commit()
    const next = g.C.onMessage(msgOf(c1), c1)
    if (!('send' in next)) throw new Error('no opening')
    const m1 = msgOf(c1) as Extract<Msg, { t: 'commit' }>
    const c2 = signMsg({ ...m1, traceRoot: new Uint8Array(32).fill(7) }, bob.publicKey, x => bob.sign(x), g.ctx)
    expect(force(h, 'Bob', undefined, c2)).toBeUndefined()
    // the trap: the opening the challenger holds continues the first commit, not the forced one
    expect(answer(h, 'Dave', next.send)).toBe('Arbitration.NotAnAnswer')
    const claim = equivocationClaim(c1, c2, [c1], { ctx: g.ctx, defender: bob.publicKey, verify })
    expect(claim?.kind).toBe('lie')
    expect(tx(h, 'Dave', 'adjudicate', { claim: u8aToHex(encodeClaim(claim!)) })).toBeUndefined()
    expect(dispute(h).status).toBe('ChallengerWon')
    // and one message said once is no equivocation
    expect(equivocationClaim(c1, c1, [c1], { ctx: g.ctx, defender: bob.publicKey, verify })).toBeUndefined()
  }, 60_000)
})
