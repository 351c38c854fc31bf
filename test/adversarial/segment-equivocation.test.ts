import { beforeAll, describe, expect, it } from 'vitest'
import { fromHex } from '../../protocols/commit/merkle.js'
import { signAfter, verifySigned, type Claim, type Ruling } from '../../protocols/dispute/index.js'
import { honest, tamperOp, type Run } from '../unit/dispute/fixture.js'
import { CTX, bob, dave, judge, segEnv, segmentChallenger, segmentDefender, verify } from './segment-setup.js'
import { mlpRun } from './setup.js'

// A segment dispute's roots inside the segment are the defender's signed
// word, not committed leaves: the challenger opens the first step whose
// post-root differs from its own, naming the pre-root both agree on. Who
// gains by breaking it: a cheating solver that signs a second segment list
// after the opening, with another root at the opened step's pre-state, and
// files `badOpen` with that list: the opening then "disputes a pre-state the
// defender signed", the honest challenger loses its bond and the wrong proof
// stands. The opening names the segment it follows (its `prev`); a badOpen
// must be judged against that segment, not against any the defender signed.

const M = 4
let run: Run
beforeAll(async () => { run = await mlpRun(M) }, 180_000)

describe('a defender that equivocates on its segment after the opening', () => {
  it('cannot win badOpen with a second segment list the opening does not follow', () => {
    // the cheat is at step 2: roots after steps 1 and 2 agree, the one after step 3 differs
    const cheat = tamperOp(run, 10)
    const SD = segmentDefender(run, cheat, M, 0)
    const SC = segmentChallenger(run, cheat, honest(run).roots, M, 0)
    const seg = SD.segment()
    const opened = SC.onSegment(verifySigned(seg, bob.publicKey, verify, CTX), seg)
    if ('fail' in opened) throw new Error(opened.fail)
    expect(opened.step).toBe(2)
    // the second list: the root after step 2 (the opening's pre-state) replaced
    const inside = [1, 2, 3].map(s => fromHex(cheat.roots[s]))
    inside[1] = new Uint8Array(32).fill(9)
    const other = segmentDefender(run, cheat, M, 0, { inside })
    const claim: Claim = { v: 1, kind: 'badOpen', open: opened.send, pre: inside[1], prePath: [], seg: other.proof }
    const r = judge(segEnv(run, cheat.roots, M, 0, 'defender'), claim)
    expect(typeof r === 'string' ? r : (r as Ruling).winner).toBe('InvalidClaim')
    // with the segment the opening follows, the opening agreed with the defender's pre-state: no badOpen either
    const same: Claim = { ...claim, pre: fromHex(cheat.roots[2]), seg: SD.proof }
    expect(judge(segEnv(run, cheat.roots, M, 0, 'defender'), same)).toBe('InvalidClaim')
  })
})

// The other side: the defender commits to the one opening it answered. A challenger that forces on chain a
// second opening of the same step with other roots (its post-root, say) made the honest defender's commit,
// linked to the first, no answer to the forced one (NotAnAnswer): the honest solver timed out, slashed.
describe('a challenger that signs a second opening of the same step', () => {
  it('loses to the defender\'s badOpen with both openings', () => {
    const SD = segmentDefender(run, honest(run), M, 0)
    const seg = SD.segment()
    const asDave = { ...CTX, account: dave.publicKey, sign: (x: Uint8Array) => dave.sign(x) }
    const o1 = signAfter(asDave, { t: 'open', d: 0, step: 2, pre: fromHex(run.roots[2]), post: fromHex(run.roots[3]) }, seg, 0)
    expect(SD.onOpen(verifySigned(o1, dave.publicKey, verify, CTX), o1)).toMatchObject({ step: 2 })
    const o2 = signAfter(asDave, { t: 'open', d: 0, step: 2, pre: fromHex(run.roots[2]), post: new Uint8Array(32).fill(5) }, seg, 0)
    const r = SD.onOpen(verifySigned(o2, dave.publicKey, verify, CTX), o2)
    if (!('claim' in r)) throw new Error('the defender took a second opening of the step it committed to')
    expect(r.claim.kind).toBe('badOpen')
    const ruling = judge(segEnv(run, run.roots, M, 0, 'defender'), r.claim)
    expect(typeof ruling === 'string' ? ruling : ruling.winner).toBe('defender')
    // the same opening again is no second one
    expect(SD.onOpen(verifySigned(o1, dave.publicKey, verify, CTX), o1)).toMatchObject({ step: 2 })
  })
})
