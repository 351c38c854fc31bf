import { beforeAll, describe, expect, it } from 'vitest'
import { fromHex, sha256, toHex } from '../../protocols/commit/merkle.js'
import { continuationError, decodeMsg, signAfter, type Claim, type Msg, type Ruling, type SegmentRule } from '../../protocols/dispute/index.js'
import { newProgram } from '../../protocols/program/index.js'
import { initBackend } from '../../node/train/backend.js'
import { datasetRef, syntheticDataset } from '../../node/train/dataset.js'
import { honest, honestRun, tamperOp, tamperWeight, type Run, type Side } from '../unit/dispute/fixture.js'
import { CTX, bob, dave, judge, playSegment, segEnv, segmentDefender } from './segment-setup.js'

// Attacks on the segment game (docs/disputes.md "Segments"): a 5-step MLP
// task whose proof commits a root every m = 4 steps (leaves: steps 0, 4, 5),
// so segment 0 holds steps 0–3 and the defender signs the roots after steps
// 1, 2 and 3. Every test fails if the attacker wins.

const M = 4
const runs: Run[] = []
const h32 = (b: number): Uint8Array => new Uint8Array(32).fill(b)
const winner = (r: Ruling | string): string => typeof r === 'string' ? r : r.winner
const RULE: SegmentRule = { j: 0, first: 0, length: 4 }
const dec = (b: Uint8Array): Msg => decodeMsg(b, true)

beforeAll(async () => {
  await initBackend('wasm')
  const ds = syntheticDataset(7, 64, 8)
  const p = newProgram({ model: 'mlp', dataset: datasetRef(ds), steps: 5, optimizer: 'sgd', batchSize: 4, seed: 11, checkpointEvery: 4 })
  for (const s of [1, 2, 3]) runs[s] = await honestRun(p, ds, s)
}, 180_000)

/** The messages of a played game follow each other by the chain's continuation rule for segment 0. */
function expectTranscript (msgs: Uint8Array[]): void {
  let prev: Msg | undefined
  for (const b of msgs) {
    const m = dec(b)
    expect(continuationError(prev, m, RULE)).toBeUndefined()
    prev = m
  }
}

describe('segment game: a defender that lies inside a segment loses', () => {
  it('a wrong op at step 2 (later roots consistent with it): the challenger opens step 2 and wins on one element', () => {
    const run = runs[2]
    const cheat = tamperOp(run, 10)
    const r = playSegment(run, cheat, honest(run), M, 0)
    expect(r.step).toBe(2)
    expect(r.by).toBe('challenger')
    expectTranscript(r.msgs.map(s => s.m))
    const ruling = judge(segEnv(run, cheat.roots, M, 0, 'challenger'), r.claim)
    expect(winner(ruling)).toBe('challenger')
    expect((ruling as Ruling).step).toBe(2)
  })

  it('honest inner roots but a wrong committed end (leaf 1): the last transition is opened and the state claim wins', () => {
    const run = runs[3]
    const cheat = tamperWeight(run)
    const r = playSegment(run, cheat, honest(run), M, 0)
    expect(r.step).toBe(3)
    expect(r.claim.kind).toBe('state')
    const ruling = judge(segEnv(run, cheat.roots, M, 0, 'challenger'), r.claim)
    expect(winner(ruling)).toBe('challenger')
    expect((ruling as Ruling).step).toBe(3)
  })

  it('a faked root inside the segment (honest ends): the transition into it is opened and the defender\'s own tape convicts it', () => {
    const run = runs[1]
    const inside = [1, 2, 3].map(s => fromHex(run.roots[s]))
    inside[1] = h32(7) // the root after step 2
    const r = playSegment(run, honest(run), honest(run), M, 0, { inside })
    expect(r.step).toBe(1)
    expect(r.claim.kind).toBe('state')
    expect(winner(judge(segEnv(run, run.roots, M, 0, 'challenger'), r.claim))).toBe('challenger')
  })

  it('equivocation: two signed segment lists are a lie', () => {
    const run = runs[2]
    const a = segmentDefender(run, honest(run), M, 0).segment()
    const b = segmentDefender(run, honest(run), M, 0, { inside: [h32(1), h32(2), h32(3)] }).segment()
    const e = segEnv(run, run.roots, M, 0, 'challenger')
    expect(winner(judge(e, { v: 1, kind: 'lie', msgs: [a, b] }))).toBe('challenger')
    // one list alone contradicts nothing; a list of another length is a contradiction too
    expect(judge(e, { v: 1, kind: 'lie', msgs: [a] })).toBe('InvalidClaim')
  })
})

describe('segment game: a challenger that breaks the rules loses', () => {
  it('disagreeing with a root inside the segment that it had to agree with: badOpen wins for the defender', () => {
    const run = runs[2]
    const SD = segmentDefender(run, honest(run), M, 0)
    const seg = SD.segment()
    const open = signAfter({ ...CTX, account: dave.publicKey, sign: x => dave.sign(x) }, { t: 'open', d: 0, step: 2, pre: h32(9), post: h32(8) }, seg, 0)
    const r = SD.onOpen(dec(open.m), open)
    expect('claim' in r).toBe(true)
    const claim = (r as { claim: Claim }).claim
    if (claim.kind !== 'badOpen') throw new Error(`a ${claim.kind} claim`)
    expect(winner(judge(segEnv(run, run.roots, M, 0, 'defender'), claim))).toBe('defender')
    // with the defender's own pre-root in the opening there is nothing bad about it
    const fair = signAfter({ ...CTX, account: dave.publicKey, sign: x => dave.sign(x) }, { t: 'open', d: 0, step: 2, pre: fromHex(run.roots[2]), post: h32(8) }, seg, 0)
    expect(judge(segEnv(run, run.roots, M, 0, 'defender'), { ...claim, open: fair })).toBe('InvalidClaim')
  })

  it('opening two steps of one segment: the defender commits to neither second tape and wins on the two openings', () => {
    const run = runs[2]
    const SD = segmentDefender(run, honest(run), M, 0)
    const seg = SD.segment()
    const as = { ...CTX, account: dave.publicKey, sign: (x: Uint8Array) => dave.sign(x) }
    const o1 = signAfter(as, { t: 'open', d: 0, step: 2, pre: fromHex(run.roots[2]), post: h32(8) }, seg, 0)
    const o2 = signAfter(as, { t: 'open', d: 0, step: 1, pre: fromHex(run.roots[1]), post: h32(8) }, seg, 0)
    expect(SD.onOpen(dec(o1.m), o1)).toMatchObject({ step: 2 })
    const r = SD.onOpen(dec(o2.m), o2)
    expect('claim' in r).toBe(true)
    expect(winner(judge(segEnv(run, run.roots, M, 0, 'defender'), (r as { claim: Claim }).claim))).toBe('defender')
  })

  it('opening a later step than the first difference, against an honest defender: every fact holds and the challenger loses', () => {
    const run = runs[3]
    const own = [...run.roots]
    own[4] = toHex(h32(5)) // a challenger that "disagrees" only with the committed end
    const c: Side = { ...honest(run), roots: own }
    const r = playSegment(run, honest(run), c, M, 0)
    expect(r.step).toBe(3)
    expect(winner(judge(segEnv(run, run.roots, M, 0, 'challenger'), r.claim))).toBe('defender')
    // nor can it swap in a post-root of its own for the one the defender signed
    expect(r.claim.kind).toBe('state')
    expect(judge(segEnv(run, run.roots, M, 0, 'challenger'), { ...r.claim, post: h32(5) } as Claim)).toBe('InvalidProof')
  })

  it('a challenger whose own computation is wrong disputes honest steps agreed from a signed root: it loses', () => {
    const run = runs[2]
    const wrong = tamperOp(run, 10)
    const r = playSegment(run, honest(run), wrong, M, 0)
    expect(r.step).toBe(2)
    expect(winner(judge(segEnv(run, run.roots, M, 0, 'challenger'), r.claim))).toBe('defender')
  })
})

describe('segment game: what the chain checks', () => {
  it('a claim needs the defender\'s signed segment and the committed ends; a forged or missing one proves nothing', () => {
    const run = runs[3]
    const cheat = tamperWeight(run)
    const { claim } = playSegment(run, cheat, honest(run), M, 0)
    const e = segEnv(run, cheat.roots, M, 0, 'challenger')
    const seg = claim.seg!
    const { seg: _s, ...bare } = claim
    expect(judge(e, bare as Claim)).toBe('InvalidClaim')
    // the end leaf with the start's path
    expect(judge(e, { ...claim, seg: { ...seg, end: seg.start, endPath: seg.startPath } })).toBe('InvalidProof')
    // a segment "signed" by the challenger
    const forged = { ...seg.msg, s: dave.sign(sha256(seg.msg.m)), a: dave.publicKey }
    expect(judge(e, { ...claim, seg: { ...seg, msg: forged } })).toBe('InvalidProof')
    // the same claim judged as a dispute of segment 1 (another L, another first step) is refused
    expect(judge({ ...e, segment: { j: 1, rootEvery: M } }, claim)).toBe('InvalidClaim')
  })

  it('the continuation rule: a segment of exactly L − 1 roots opens the dispute, an opening inside it, then the commit of that step', () => {
    const run = runs[2]
    const seg = segmentDefender(run, honest(run), M, 0).segment()
    const as = { ...CTX, account: dave.publicKey, sign: (x: Uint8Array) => dave.sign(x) }
    const asD = { ...CTX, account: bob.publicKey, sign: (x: Uint8Array) => bob.sign(x) }
    expect(continuationError(undefined, dec(seg.m), RULE)).toBeUndefined()
    const short = segmentDefender(run, honest(run), M, 1).segment()
    expect(continuationError(undefined, dec(short.m), RULE)).toMatch(/segment is 1/)
    const wrongLength = dec(seg.m) as Extract<Msg, { t: 'segment' }>
    expect(continuationError(undefined, { ...wrongLength, roots: wrongLength.roots.slice(1) }, RULE)).toMatch(/3 roots inside it, not 2/)
    // a one-step dispute never takes a segment, a segment dispute never a bare commit
    expect(continuationError(undefined, dec(seg.m))).toMatch(/commit/)
    expect(() => decodeMsg(seg.m)).toThrow(/seq 0 is the defender's commit/)
    const outside = signAfter(as, { t: 'open', d: 0, step: 4, pre: h32(1), post: h32(2) }, seg, 0)
    expect(continuationError(dec(seg.m), dec(outside.m), RULE)).toMatch(/outside segment 0/)
    const open = signAfter(as, { t: 'open', d: 0, step: 2, pre: h32(1), post: h32(2) }, seg, 0)
    expect(continuationError(dec(seg.m), dec(open.m), RULE)).toBeUndefined()
    const otherStep = signAfter(asD, { t: 'commit', d: 0, step: 1, traceRoot: h32(3), depth: 7 }, open, 1)
    expect(continuationError(dec(open.m), dec(otherStep.m), RULE)).toMatch(/commit of the step it names/)
    const commit = signAfter(asD, { t: 'commit', d: 0, step: 2, traceRoot: h32(3), depth: 7 }, open, 1)
    expect(continuationError(dec(open.m), dec(commit.m), RULE)).toBeUndefined()
    const q = signAfter(as, { t: 'query', d: 0, want: 'children', tree: { e: -1 }, level: 0, index: 0 }, commit, 2)
    expect(continuationError(dec(commit.m), dec(q.m), RULE)).toBeUndefined()
    const q2 = signAfter(as, { t: 'query', d: 0, want: 'entry', tree: { e: -1 }, level: 7, index: 0 }, commit, 2)
    expect(continuationError(dec(commit.m), dec(q2.m), RULE)).toMatch(/tape root/)
  })
})
