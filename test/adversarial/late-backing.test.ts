import { beforeAll, describe, expect, it } from 'vitest'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import type { Params } from '../../devnet/chain/runtime/arbitration.js'
import { backingGrace } from '../../devnet/chain/runtime/late-backing.js'
import { referenceRerunBlocks } from '../../protocols/scheduling/estimate.js'
import { referenceCostOn } from '../helpers/rerun-cost.js'
import { assignedNames, harnessAssignments, harnessSample } from '../helpers/verdict-sample.js'
import type { Harness } from '../unit/chain/harness.js'
import { STAKE, honest, honestRun, nodeOf, playDispute, taskOf, taskOnChain, tamperOp, type Run } from '../unit/dispute/fixture.js'
import { fromHex, merkleRoot, toHex } from '../../protocols/commit/merkle.js'
import { newProgram } from '../../protocols/program/index.js'
import { initBackend } from '../../node/train/backend.js'
import { datasetRef, syntheticDataset } from '../../node/train/dataset.js'
import { leavesOf } from './segment-setup.js'
import { mlpRun, worth } from './setup.js'

// A reject backed too late. An assigned verifier's reject stands only with
// evidence of its own, and a node submits the verdict first, then re-runs the
// step (a segment: one more engine process) before open_dispute. Before, a
// reject decided in the window's last blocks met ChallengeWindowClosed: its
// dispute was refused, the reject was void and the verifier that was right
// paid the silence penalty. Now a reject submitted in time opens a backing
// grace (backingGrace: dispute_clock + a re-run of one checkpoint interval and
// a segment, priced as every re-run: the task's solve pace, or its program's
// cost at the reference speed if less) in which only that verifier may open its
// evidence, once; the task does not settle before the grace ends, and a
// reject still bare after it lapses as before. Everyone else keeps the window.

const V = 100n * UNIT
let run: Run
beforeAll(async () => { run = await mlpRun() }, 120_000)

/** The solver's proof is wrong at the run's step (a BatchMatMul output changed). */
const cheat = (r: Run): ReturnType<typeof tamperOp> => tamperOp(r, r.entries.findIndex(e => e.kernel === 'BatchMatMul'))
const grace = (h: Harness): number => backingGrace(h.read<Params>('Arbitration', 'Params')!, taskOf(h), 1, referenceCostOn(h))
/** Runs blocks until the next call lands in block `n`. */
const until = (h: Harness, n: number): void => { h.advance(n - 1 - h.number) }
const drawn = (h: Harness): string[] => {
  for (let i = 0; i < 10 && assignedNames(h).length < taskOf(h).verifierCount; i++) h.advance(1)
  return assignedNames(h)
}
const verdict = (h: Harness, who: string, accept: boolean): string | undefined =>
  h.run(who, 'Arbitration', 'submit_verdict', { taskId: 0, accept, checkedSteps: accept ? harnessSample(h, who) : [] }).error
const openDispute = (h: Harness, who: string): string | undefined =>
  h.run(who, 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: run.step }).error
const challengeAvailability = (h: Harness, who: string): string | undefined =>
  h.run(who, 'Arbitration', 'challenge_availability', { taskId: 0, checkpointStep: 0 }).error
const assignmentOf = (h: Harness, who: string): NonNullable<ReturnType<typeof harnessAssignments>>['verifiers'][number] =>
  harnessAssignments(h)!.verifiers.find(v => v.verifier === h.accounts[who])!
/** Runs blocks while the task is Verifying; the on_initialize events, each with its block. */
function toTheEnd (h: Harness): Array<{ block: number, event: string }> {
  const out: Array<{ block: number, event: string }> = []
  for (let i = 0; i < 600 && taskOf(h).phase === 'Verifying'; i++) for (const event of h.advance(1)) out.push({ block: h.number, event })
  return out
}

describe('a reject decided at the window\'s end', () => {
  it('backed by the verifier\'s own dispute opened after the window, within the grace: the dispute is heard, won, and the verifier paid, not lapsed', async () => {
    // Dave is the only verifier the chain can draw (Eve and Ferdie are whistleblowers only)
    const h = await taskOnChain(run, cheat(run), { verifierCount: 1, verifiers: ['Dave'] })
    expect(drawn(h)).toEqual(['Dave'])
    const dave = worth(h, 'Dave')
    const end = taskOf(h).challengeEnd
    expect(grace(h)).toBeGreaterThan(3)
    // its replay found the wrong step in the window's last block: the reject is in time
    until(h, end)
    expect(verdict(h, 'Dave', false)).toBeUndefined()
    // the re-run of the step takes a few blocks: the window is over when the dispute is sent
    h.advance(3)
    expect(h.number + 1).toBeGreaterThan(end)
    // before: Arbitration.ChallengeWindowClosed
    expect(openDispute(h, 'Dave')).toBeUndefined()
    expect(assignmentOf(h, 'Dave').backed).toBe(true)
    expect(playDispute(h, run, cheat(run), honest(run), { disputeId: 0, challengerName: 'Dave', disputedStep: run.step }).status).toBe('ChallengerWon')
    const events = toTheEnd(h).map(e => e.event)
    expect(taskOf(h).phase).toBe('Failed')
    expect(events).not.toContain('Arbitration.AssignmentLapsed')
    // its stake untouched, its verdict paid as a standing one, its bond back (and its share of the solver's slash)
    expect(nodeOf(h, 'Dave').stake).toBe(STAKE)
    expect(worth(h, 'Dave') - dave).toBeGreaterThanOrEqual(V)
  }, 120_000)

  it('left bare through the grace, still lapses: the round closes only once the grace is over', async () => {
    // Dave and Eve are the only verifiers: nobody replaces the lapsed one
    const h = await taskOnChain(run, honest(run), { verifierCount: 2, verifiers: ['Dave', 'Eve'] })
    const [accepting, rejecting] = drawn(h)
    expect(verdict(h, accepting, true)).toBeUndefined()
    const end = taskOf(h).challengeEnd
    until(h, end)
    expect(verdict(h, rejecting, false)).toBeUndefined()
    const last = end + grace(h)
    expect(assignmentOf(h, rejecting).deadline).toBe(last)
    const events = toTheEnd(h)
    const at = (name: string): number[] => events.filter(e => e.event === name).map(e => e.block)
    // the bare reject is void once its grace is over, not before: lapsed with the silence penalty, replaced
    expect(at('Arbitration.AssignmentLapsed')).toEqual([last + 1])
    expect(at('Arbitration.VerificationExtended')[0]).toBe(last + 1)
    expect(nodeOf(h, rejecting).stake).toBeLessThan(STAKE)
    expect(assignmentOf(h, rejecting).status).toBe('Lapsed')
    expect(taskOf(h).phase).toBe('Unverified')
  }, 120_000)

  it('the replacement\'s accept settles the task once the grace is over', async () => {
    const h = await taskOnChain(run, honest(run), { verifierCount: 2 })
    const [accepting, rejecting] = drawn(h)
    const third = ['Dave', 'Eve', 'Ferdie'].find(n => n !== accepting && n !== rejecting)!
    expect(verdict(h, accepting, true)).toBeUndefined()
    const end = taskOf(h).challengeEnd
    until(h, end)
    expect(verdict(h, rejecting, false)).toBeUndefined()
    // through the grace the task is held open for the reject's evidence
    until(h, end + grace(h) + 1)
    expect(taskOf(h).phase).toBe('Verifying')
    expect(taskOf(h).extensions).toBe(0)
    h.advance(1)
    expect(taskOf(h).extensions).toBe(1)
    expect(drawn(h)).toContain(third)
    expect(verdict(h, third, true)).toBeUndefined()
    toTheEnd(h)
    expect(taskOf(h).phase).toBe('Settled')
  }, 120_000)
})

describe('nobody else gets the grace', () => {
  it('a whistleblower, an accepting verifier and an already backed one keep the window', async () => {
    const h = await taskOnChain(run, cheat(run), { verifierCount: 2, verifiers: ['Dave', 'Eve'] })
    expect(drawn(h).sort()).toEqual(['Dave', 'Eve'])
    expect(verdict(h, 'Eve', true)).toBeUndefined()
    const end = taskOf(h).challengeEnd
    until(h, end)
    expect(verdict(h, 'Dave', false)).toBeUndefined()
    h.advance(1)
    // Ferdie is no assigned verifier; Eve accepted: the window is closed for both (and Eve, having
    // vouched that it replayed from its checkpoints, challenges none: test/adversarial/needless-serves.test.ts)
    expect(openDispute(h, 'Ferdie')).toBe('Arbitration.ChallengeWindowClosed')
    expect(challengeAvailability(h, 'Ferdie')).toBe('Arbitration.ChallengeWindowClosed')
    expect(openDispute(h, 'Eve')).toBe('Arbitration.ChallengeWindowClosed')
    expect(challengeAvailability(h, 'Eve')).toBe('Arbitration.ChallengeAfterAccept')
    // Dave backs its reject once; a second piece of evidence after the window is refused
    expect(challengeAvailability(h, 'Dave')).toBeUndefined()
    expect(assignmentOf(h, 'Dave').backed).toBe(true)
    expect(openDispute(h, 'Dave')).toBe('Arbitration.ChallengeWindowClosed')
  }, 120_000)

  it('a reject submitted long before the window\'s end has the window to back it, no more', async () => {
    const h = await taskOnChain(run, cheat(run), { verifierCount: 1, verifiers: ['Dave'] })
    expect(drawn(h)).toEqual(['Dave'])
    const end = taskOf(h).challengeEnd
    expect(end - h.number).toBeGreaterThan(grace(h))
    expect(verdict(h, 'Dave', false)).toBeUndefined()
    expect(assignmentOf(h, 'Dave').deadline).toBe(end)
    // the window closes as it always did: the bare reject lapses in the block after it
    until(h, end + 1)
    expect(h.advance(1)).toContain('Arbitration.AssignmentLapsed')
    expect(assignmentOf(h, 'Dave').status).toBe('Lapsed')
  }, 120_000)

  it('a coalition of rejecting verifiers holds the task past the window by one grace, not one each, and the window\'s close still lapses them', async () => {
    const h = await taskOnChain(run, honest(run), { verifierCount: 3 })
    const names = drawn(h)
    expect(names.length).toBe(3)
    const end = taskOf(h).challengeEnd
    // one rejects a block before the end, the others in the last block: all in time
    until(h, end - 1)
    expect(verdict(h, names[0], false)).toBeUndefined()
    const { results } = h.block(names.slice(1).map(n => [n, 'Arbitration', 'submit_verdict', { taskId: 0, accept: false, checkedSteps: [] }]))
    expect(h.number).toBe(end)
    expect(results.map(r => r.error)).toEqual([undefined, undefined])
    const deadlines = names.map(n => assignmentOf(h, n).deadline)
    expect(Math.max(...deadlines)).toBe(end + grace(h))
    const events = toTheEnd(h)
    const lapsed = events.filter(e => e.event === 'Arbitration.AssignmentLapsed').map(e => e.block)
    expect(lapsed.length).toBe(3)
    expect(new Set(lapsed)).toEqual(new Set([end + grace(h) + 1]))
  }, 120_000)
})

describe('at a root every m > 1 steps', () => {
  it('the grace has room for a segment more, and a segment dispute opened in it backs the reject', async () => {
    const M = 4
    await initBackend('wasm')
    const ds = syntheticDataset(7, 64, 8)
    const seg = await honestRun(newProgram({ model: 'mlp', dataset: datasetRef(ds), steps: 5, optimizer: 'sgd', batchSize: 4, seed: 11, checkpointEvery: 4 }), ds, 2)
    const h = await taskOnChain(seg, honest(seg), { commit: false, verifierCount: 1, verifiers: ['Dave'] })
    // as submit_task writes it from a program naming m
    h.write('Arbitration', 'TaskRootEvery', 0, M)
    const leaves = leavesOf(seg.roots, seg.program.steps, M)
    expect(h.run('Bob', 'Arbitration', 'commit_proof', { taskId: 0, proofRoot: '0x' + toHex(merkleRoot(leaves.map(fromHex))), finalStateRoot: '0x' + leaves[leaves.length - 1], stepCount: seg.program.steps, checkpoints: [] }).error).toBeUndefined()
    expect(drawn(h)).toEqual(['Dave'])
    const end = taskOf(h).challengeEnd
    until(h, end)
    expect(verdict(h, 'Dave', false)).toBeUndefined()
    const p = h.read<Params>('Arbitration', 'Params')!
    const t = taskOf(h)
    // dispute_clock + a re-run of (checkpoint_every + m) steps: at the solve pace 32 blocks, at the program's
    // reference cost 5 (twice 8 steps of 2,440 millionths of a block, and the engine start)
    const cost = referenceCostOn(h)
    const n = t.checkpointEvery + M
    const rerun = Math.min(Math.ceil(n * t.solveTimeout / t.steps), referenceRerunBlocks(n, cost.stepCost, cost.flopsPerBlock))
    expect(rerun).toBe(5)
    expect(assignmentOf(h, 'Dave').deadline).toBe(end + p.disputeClock + rerun)
    until(h, assignmentOf(h, 'Dave').deadline)
    expect(h.run('Dave', 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: 0 }).error).toBeUndefined()
    expect(assignmentOf(h, 'Dave').backed).toBe(true)
  }, 120_000)
})
