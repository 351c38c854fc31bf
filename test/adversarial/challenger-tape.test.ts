import { u8aToHex } from '@polkadot/util'
import { beforeAll, describe, expect, it } from 'vitest'
import { REVEAL_WINDOW } from '../../devnet/chain/runtime/spec.js'
import { tapeAllowance } from '../../devnet/chain/runtime/disputes.js'
import { fromHex, merkleRoot, toHex } from '../../protocols/commit/merkle.js'
import { encodeClaim, verifySigned, type Signed } from '../../protocols/dispute/index.js'
import { referenceCostOn } from '../helpers/rerun-cost.js'
import { STAKE, contextOn, honest, nodeOf, taskOf, taskOnChain, tamperOp, type Run } from '../unit/dispute/fixture.js'
import { answer, dispute, force, tx, until, worth, mlpRun } from './setup.js'
import { bob, dave, leavesOf, segmentChallenger, segmentDefender, stepGames, verify } from './segment-setup.js'

// A segment dispute (a root every m > 1 steps): the challenger learns which
// step it opens only from the defender's signed segment, and tapes that step
// then; the defender got the re-run's allowance for its segment and for its
// commit, the challenger nothing for its tape. A cheating solver knows the
// step its own segment leads to (the first root it faked), tapes it before the
// dispute, posts its segment and, at the honest challenger's opening, forces
// its commit on chain at once: the challenger's next move was due one response
// window later, before its tape of the step (priced by the chain itself at
// rerun((s mod checkpoint_every) + 1) blocks at the reference speed) could be
// done. It timed out: its bond lost, the cheater's wrong proof standing. Here
// the program's step costs a block at the reference speed and the window is 4
// blocks (the fixture's solve_timeout caps a re-run at 4 blocks a step); on the
// devnet's 20-block window the same holds for any program whose re-run takes
// longer. Now the challenger's answer to a segment dispute's commit is due a
// window plus that step's tape allowance after the force.

const M = 4
/** a short response window, as on a chain whose window is shorter than a re-run of the program at the reference speed */
const CLOCK = 4
let run: Run
beforeAll(async () => { run = await mlpRun(4) }, 120_000)

describe('a cheater forces its segment commit before the challenger can have taped the step it opened', () => {
  it('the challenger answers when its tape is done, within its due, plays on and wins; the cheater is slashed', async () => {
    const cheat = tamperOp(run, 10)
    const h = await taskOnChain(run, cheat, { commit: false, disputeClock: CLOCK })
    h.write('Arbitration', 'TaskRootEvery', 0, M)
    // a program whose step takes a block at the reference speed (the fixture's MLP: 0.0024)
    h.write('Arbitration', 'TaskStepCost', 0, 1_000_000n)
    const leaves = leavesOf(cheat.roots, run.program.steps, M)
    expect(h.run('Bob', 'Arbitration', 'commit_proof', { taskId: 0, proofRoot: '0x' + toHex(merkleRoot(leaves.map(fromHex))), finalStateRoot: '0x' + leaves[leaves.length - 1], stepCount: run.program.steps, checkpoints: [] }).error).toBeUndefined()
    expect(h.run('Dave', 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: 0 }).error).toBeUndefined()
    const ctx = { ...contextOn(h, 0), segmented: true }
    const daveBefore = worth(h, 'Dave')
    // the cheater's segment, on chain at once
    const seg = segmentDefender(run, cheat, M, 0, { ctx }).segment()
    expect(force(h, 'Bob', undefined, seg)).toBeUndefined()
    const segAt = h.number
    // Dave opens the first transition that differs from its replay (step 2) and tapes it: at the
    // reference speed its tape is done rerun((2 mod 4) + 1) blocks later, more than a window and the two
    // blocks the cheater needs to force its commit after the opening
    const opened = segmentChallenger(run, cheat, run.roots, M, 0, ctx).onSegment(verifySigned(seg, bob.publicKey, verify, ctx), seg)
    if ('fail' in opened) throw new Error(opened.fail)
    expect(opened.step).toBe(run.step)
    const tape = tapeAllowance(taskOf(h), opened.step, referenceCostOn(h))
    expect(tape).toBeGreaterThan(CLOCK + 2)
    expect(answer(h, 'Dave', opened.send)).toBeUndefined()
    // the cheater taped step 2 before the dispute: its commit, forced in the next block
    const { D, C } = stepGames(run, cheat, honest(run), opened.send, opened.segment, ctx)
    expect(force(h, 'Bob', undefined, D.commit())).toBeUndefined()
    expect(dispute(h).force).toMatchObject({ to: 'Challenger', seq: 3 })
    // Dave answers in the block its tape is done, if the chain still takes it; else the cheater times it out
    until(h, segAt + tape)
    let d: Signed = D.commit()
    const first = C.onMessage(verifySigned(d, bob.publicKey, verify, ctx), d)
    if (!('send' in first)) throw new Error('the challenger has no move after the commit')
    const late = answer(h, 'Dave', first.send)
    if (late !== undefined) {
      expect(late).toBe('Arbitration.ResponseTooLate')
      expect(tx(h, 'Bob', 'claim_timeout')).toBeUndefined()
    } else {
      // the rest off chain, the cheater answering from its tape, and Dave's claim
      let q: Signed = first.send
      for (let round = 0; round < 100; round++) {
        d = D.respond(verifySigned(q, dave.publicKey, verify, ctx), q).reply!
        const next = C.onMessage(verifySigned(d, bob.publicKey, verify, ctx), d)
        if ('claim' in next) { expect(tx(h, 'Dave', 'adjudicate', { claim: u8aToHex(encodeClaim(next.claim)) })).toBeUndefined(); break }
        if (!('send' in next)) throw new Error('the challenger stopped playing')
        q = next.send
      }
    }
    expect(dispute(h).status).toBe('ChallengerWon')
    expect(taskOf(h).rulings.map(x => x.step)).toEqual([run.step])
    expect(h.advance(REVEAL_WINDOW + 1)).toContain('Arbitration.SolverPenalized')
    expect(nodeOf(h, 'Bob').stake).toBeLessThan(STAKE)
    expect(worth(h, 'Dave')).toBeGreaterThan(daveBefore)
  }, 120_000)
})
