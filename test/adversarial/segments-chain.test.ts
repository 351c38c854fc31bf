import { u8aToHex } from '@polkadot/util'
import { beforeAll, describe, expect, it } from 'vitest'
import { disputeDeadline } from '../../devnet/chain/runtime/disputes.js'
import { fromHex, merkleRoot, toHex } from '../../protocols/commit/merkle.js'
import { MAX_SEGMENT_SEQ, encodeClaim, signAfter, verifySigned, type DisputeContext, type Signed } from '../../protocols/dispute/index.js'
import type { Harness } from '../unit/chain/harness.js'
import { contextOn, honest, taskOf, taskOnChain, tamperOp, type Run, type Side } from '../unit/dispute/fixture.js'
import { BOND, answer, dispute, force, tx, worth, mlpRun } from './setup.js'
import { bob, dave, leavesOf, playSegment, segmentDefender, verify } from './segment-setup.js'

// The segment game on the pallet (the pure runtime of test/unit/chain/harness.ts):
// a 5-step MLP task whose proof commits a root every m = 4 steps. The task is
// posted by the fixture's m = 1 program, so the test writes the task's
// TaskRootEvery as submit_task does from a program naming m (arbitration.ts).
// Bob solves, Dave challenges.

const M = 4
let run: Run

beforeAll(async () => { run = await mlpRun(4) }, 120_000)

/** Task 0 with a root every M steps: Bob commits `d`'s leaves (steps 0, 4, 5) and Dave opens segment `j`. */
async function segmentTask (d: Side, j = 0): Promise<{ h: Harness, ctx: DisputeContext }> {
  const h = await taskOnChain(run, d, { commit: false })
  h.write('Arbitration', 'TaskRootEvery', 0, M)
  const leaves = leavesOf(d.roots, run.program.steps, M)
  expect(h.run('Bob', 'Arbitration', 'commit_proof', { taskId: 0, proofRoot: '0x' + toHex(merkleRoot(leaves.map(fromHex))), finalStateRoot: '0x' + leaves[leaves.length - 1], stepCount: run.program.steps, checkpoints: [] }).error).toBeUndefined()
  expect(h.run('Dave', 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: j }).error).toBeUndefined()
  return { h, ctx: { ...contextOn(h, 0), segmented: true } }
}

describe('segment disputes on the pallet', () => {
  it('open_dispute names a segment; the deadline has room for the segment re-runs and two messages more', async () => {
    const { h } = await segmentTask(tamperOp(run, 10))
    // two segments (steps 0–3 and 4): no third
    expect(h.run('Eve', 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: 2 }).error).toBe('Arbitration.InvalidStep')
    expect(h.run('Eve', 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: 1 }).error).toBeUndefined()
    const d = dispute(h)
    const window = h.read<{ disputeClock: number }>('Arbitration', 'Params')!.disputeClock
    // allowance per re-run of (0 mod 4 + 4) steps: 16 blocks at the submitter's pace (solve_timeout 20 / 5 steps),
    // 5 at the program's reference cost (twice 4 steps of 2,440 millionths of a block, and the engine start): the less;
    // the defender's two re-runs and the challenger's tape of the step it opens
    expect(d.deadline).toBe(disputeDeadline(d.openedAt, window, 3 * 5, MAX_SEGMENT_SEQ))
  })

  it('a cheat inside the segment: played off chain, the claim through the signed segment wins on chain at the step inside it', async () => {
    const cheat = tamperOp(run, 10)
    const { h, ctx } = await segmentTask(cheat)
    const before = worth(h, 'Bob')
    const r = playSegment(run, cheat, honest(run), M, 0, { ctx })
    expect(r.by).toBe('challenger')
    expect(tx(h, 'Dave', 'adjudicate', { claim: u8aToHex(encodeClaim(r.claim)) })).toBeUndefined()
    expect(dispute(h).status).toBe('ChallengerWon')
    // the ruling is at the step the defender's commit named, not at the segment's index
    expect(taskOf(h).rulings.map(x => [x.step, x.outcome])).toEqual([[2, 'AwaitingReveal']])
    // slashed only when no forced-error reveal comes (the reveal window), as for a one-step ruling
    expect(worth(h, 'Bob')).toBe(before)
  })

  it('an honest solver wins against a challenger whose own step is wrong and takes its bond share', async () => {
    const { h, ctx } = await segmentTask(honest(run))
    const daveBefore = worth(h, 'Dave')
    const r = playSegment(run, honest(run), tamperOp(run, 10), M, 0, { ctx })
    expect(tx(h, 'Dave', 'adjudicate', { claim: u8aToHex(encodeClaim(r.claim)) })).toBeUndefined()
    expect(dispute(h).status).toBe('DefenderWon')
    expect(worth(h, 'Dave')).toBe(daveBefore - BOND)
  })

  it('a silent defender is forced to sign its segment and loses when it does not', async () => {
    const { h } = await segmentTask(tamperOp(run, 10))
    const stake = h.read<{ stake: bigint }>('Arbitration', 'Nodes', h.accounts.Bob)!.stake
    expect(force(h, 'Dave')).toBeUndefined()
    const f = dispute(h).force!
    expect(f).toMatchObject({ to: 'Defender', seq: 0 })
    h.advance(f.due - h.number)
    expect(tx(h, 'Alice', 'claim_timeout')).toBeUndefined()
    expect(dispute(h).status).toBe('ChallengerWon')
    expect(h.read<{ stake: bigint }>('Arbitration', 'Nodes', h.accounts.Bob)!.stake).toBeLessThan(stake)
  })

  it('a challenger that opens and never plays: the defender forces its segment and the silent challenger loses its bond', async () => {
    const { h, ctx } = await segmentTask(honest(run))
    const daveBefore = worth(h, 'Dave')
    const seg = segmentDefender(run, honest(run), M, 0, { ctx }).segment()
    expect(force(h, 'Bob', undefined, seg)).toBeUndefined()
    const f = dispute(h).force!
    expect(f).toMatchObject({ to: 'Challenger', seq: 1 })
    h.advance(f.due - h.number)
    expect(tx(h, 'Alice', 'claim_timeout')).toBeUndefined()
    expect(dispute(h).status).toBe('DefenderWon')
    expect(worth(h, 'Dave')).toBe(daveBefore - BOND)
  })

  it('a forced segment must be one of this segment with exactly L − 1 roots; an opening must name a step inside it', async () => {
    const cheat = tamperOp(run, 10)
    const { h, ctx } = await segmentTask(cheat)
    expect(force(h, 'Dave')).toBeUndefined()
    const sign = { ...ctx, account: bob.publicKey, sign: (x: Uint8Array) => bob.sign(x) }
    const short = signAfter(sign, { t: 'segment', d: 0, j: 0, roots: [fromHex(cheat.roots[1])] }, undefined, 0)
    expect(answer(h, 'Bob', short)).toBe('Arbitration.NotAnAnswer')
    const other = segmentDefender(run, cheat, M, 1, { ctx }).segment()
    expect(answer(h, 'Bob', other)).toBe('Arbitration.InvalidMove')
    // a one-step dispute's commit does not decode in a segment dispute
    const commit = signAfter(sign, { t: 'commit', d: 0, step: 2, traceRoot: fromHex(cheat.roots[1]), depth: 7 }, undefined, 0)
    expect(answer(h, 'Bob', commit)).toBe('Arbitration.InvalidMove')
    const seg = segmentDefender(run, cheat, M, 0, { ctx }).segment()
    expect(answer(h, 'Bob', seg)).toBeUndefined()
    const asDave = { ...ctx, account: dave.publicKey, sign: (x: Uint8Array) => dave.sign(x) }
    const outside = signAfter(asDave, { t: 'open', d: 0, step: 4, pre: fromHex(cheat.roots[4]), post: fromHex(cheat.roots[5]) }, seg, 0)
    expect(force(h, 'Dave', undefined, outside)).toBe('Arbitration.InvalidMove')
    const inside = signAfter(asDave, { t: 'open', d: 0, step: 2, pre: fromHex(cheat.roots[2]), post: fromHex(run.roots[3]) }, seg, 0)
    expect(force(h, 'Dave', undefined, inside)).toBeUndefined()
    // the defender owes the commit of the opened step, with the tape allowance
    expect(dispute(h).force).toMatchObject({ to: 'Defender', seq: 2 })
  })

  it('equivocation: a segment posted on chain and another sent off chain are a lie, on chain', async () => {
    const cheat = tamperOp(run, 10)
    const { h, ctx } = await segmentTask(cheat)
    expect(force(h, 'Dave')).toBeUndefined()
    const onChain = segmentDefender(run, cheat, M, 0, { ctx }).segment()
    expect(answer(h, 'Bob', onChain)).toBeUndefined()
    const offChain: Signed = segmentDefender(run, cheat, M, 0, { ctx, inside: [1, 2, 3].map(s => fromHex(run.roots[s])) }).segment()
    verifySigned(offChain, bob.publicKey, verify, ctx)
    expect(tx(h, 'Dave', 'adjudicate', { claim: u8aToHex(encodeClaim({ v: 1, kind: 'lie', msgs: [onChain, offChain] })) })).toBeUndefined()
    expect(dispute(h).status).toBe('ChallengerWon')
  })

  it('a challenger that signs two openings loses to the defender\'s claim, even after forcing the second on chain', async () => {
    const { h, ctx } = await segmentTask(honest(run))
    const SD = segmentDefender(run, honest(run), M, 0, { ctx })
    const seg = SD.segment()
    const asDave = { ...ctx, account: dave.publicKey, sign: (x: Uint8Array) => dave.sign(x) }
    const o1 = signAfter(asDave, { t: 'open', d: 0, step: 2, pre: fromHex(run.roots[2]), post: fromHex(run.roots[1]) }, seg, 0)
    expect(SD.onOpen(verifySigned(o1, dave.publicKey, verify, ctx), o1)).toMatchObject({ step: 2 })
    const o2 = signAfter(asDave, { t: 'open', d: 0, step: 1, pre: fromHex(run.roots[1]), post: fromHex(run.roots[1]) }, seg, 0)
    expect(force(h, 'Dave', seg, o2)).toBeUndefined()
    const r = SD.onOpen(verifySigned(o2, dave.publicKey, verify, ctx), o2)
    if (!('claim' in r)) throw new Error('no claim on a second opening')
    const daveBefore = worth(h, 'Dave')
    expect(tx(h, 'Bob', 'adjudicate', { claim: u8aToHex(encodeClaim(r.claim)) })).toBeUndefined()
    expect(dispute(h).status).toBe('DefenderWon')
    expect(worth(h, 'Dave')).toBe(daveBefore - BOND)
  })
})
