import { beforeAll, describe, expect, it } from 'vitest'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import { jackpotParts } from '../../devnet/chain/runtime/jackpot.js'
import { fromHex, merkleRoot, sha256, toHex } from '../../protocols/commit/merkle.js'
import { forcedLeaf } from '../../protocols/dispute/forced-leaf.js'
import { FORCED_ERRORS_PER_DRAW, forcedErrorsFromOutputs } from '../../protocols/dispute/forced-error.js'
import { requiredSample, sampleHoldsTransition } from '../../protocols/verification/verdict.js'
import { harnessSample } from '../helpers/verdict-sample.js'
import type { Harness } from '../unit/chain/harness.js'
import { advanceRevealing, drawOn, forcedTask, honest, honestRun, playDispute, taskOf, taskOnChain, type ForcedRun, type HarnessDraw, type Run, type Side } from '../unit/dispute/fixture.js'
import { revealOf } from '../unit/dispute/forced-fixture.js'

// A drawn verifier that stops replaying once it has caught a forced error.
// With one forced error per task it knew the rest of its sample clean: its
// reject stood and it took its jackpot share whether or not it replayed on,
// so checking the rest (and a cheat hidden there) was not paid. Now the draw
// orders several independent forced errors, each with its own part of the
// jackpot: the one that stops forgoes the parts of those left in the rest of
// its sample. Fails if stopping costs it nothing.

const JACKPOT = 200n * UNIT
let base: ForcedRun
beforeAll(async () => { base = await forcedTask() }, 120_000)

const worth = (h: Harness, n: string): bigint => h.free(n) + h.reserved(n)

/** Bob's 5-step task with every leaf its draw names marked; Dave and Eve drawn (each sample the whole run); `dispute` plays one and Bob reveals its pick. */
async function multiForced (): Promise<{ h: Harness, draw: HarnessDraw, dispute: (who: string, f: number) => void }> {
  const { program, ds } = base.run
  const h = await taskOnChain(base.run, honest(base.run), { forcedErrorPpm: 1_000_000, verifierCount: 2, disputeClock: 400, challengeWindow: 200, verifiers: ['Dave', 'Eve'], commit: false })
  const draw = drawOn(h)
  expect(draw.steps.length).toBeGreaterThanOrEqual(2)
  // the honest solver marks every leaf its draw names and trains on from the honest states
  const runs = new Map<number, Run>()
  for (const f of draw.steps) runs.set(f, await honestRun(program, ds, f))
  const marked = base.run.roots.map((r, i) => draw.steps.includes(i - 1) ? toHex(forcedLeaf(fromHex(r))) : r)
  const sideAt = (f: number): Side => ({ entries: runs.get(f)!.entries, values: runs.get(f)!.values, roots: marked })
  const proofRoot = '0x' + toHex(merkleRoot(marked.map(fromHex)))
  expect(h.run('Bob', 'Arbitration', 'commit_proof', { taskId: 0, proofRoot, finalStateRoot: '0x' + marked[marked.length - 1], stepCount: 5, checkpoints: [] }).error).toBeUndefined()
  h.advance(2)
  for (const v of ['Dave', 'Eve']) for (const f of draw.steps) expect(harnessSample(h, v)).toContain(f + 1)
  let disputeId = 0
  const dispute = (who: string, f: number): void => {
    expect(h.run(who, 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: f }).error).toBeUndefined()
    const run = runs.get(f)!
    expect(playDispute(h, run, sideAt(f), honest(run), { disputeId: disputeId++, challengerName: who, disputedStep: f }).status).toBe('ChallengerWon')
    if (taskOf(h).rulings.some(r => r.step === f && r.outcome === 'AwaitingReveal')) {
      // the solver reveals each forced step ruled on: that pick's VRF alone (the others stay private) and that leaf's path
      const pick = draw.picks.find(p => p.step === f)!
      expect(h.run('Bob', 'Arbitration', 'reveal_forced_error', { taskId: 0, vrfOutput: pick.output, vrfProof: pick.proof, exactness: revealOf(run, sideAt(f), f) }).error).toBeUndefined()
    }
  }
  return { h, draw, dispute }
}

describe('a verifier that stops after its first caught forced error', () => {
  it('forgoes the jackpot parts of the forced errors later in its sample; the one that replays on takes them', async () => {
    const { h, draw, dispute } = await multiForced()
    const before = { dave: worth(h, 'Dave'), eve: worth(h, 'Eve'), bob: worth(h, 'Bob') }
    const [first, ...rest] = draw.steps
    // Dave replays up to the first forced step, rejects, disputes it and stops there
    expect(h.run('Dave', 'Arbitration', 'submit_verdict', { taskId: 0, accept: false, checkedSteps: [first] }).error).toBeUndefined()
    dispute('Dave', first)
    // the reveal made one pick's VRF public, which names the first forced step only; the chain holds
    // no draw before settlement: Dave cannot learn the others from the chain, only by replaying
    expect(h.read('Arbitration', 'DrawRequests', 0 as never)).toBeUndefined()
    const shown = draw.picks.find(p => p.step === first)!
    expect(draw.picks.filter(p => p.output === shown.output)).toHaveLength(1)
    // Eve replays her whole sample and disputes every forced step in it
    expect(h.run('Eve', 'Arbitration', 'submit_verdict', { taskId: 0, accept: false, checkedSteps: [first] }).error).toBeUndefined()
    for (const f of draw.steps) dispute('Eve', f)
    expect(taskOf(h).rulings.every(r => r.outcome === 'ForcedError')).toBe(true)
    const ev: string[] = []
    for (let i = 0; i < 300 && taskOf(h).phase === 'Verifying'; i++) ev.push(...advanceRevealing(h))
    expect(taskOf(h).phase).toBe('Settled')
    expect(ev).not.toContain('Arbitration.JackpotForfeited')
    const parts = jackpotParts(JACKPOT, draw.steps)
    const V = 100n * UNIT
    const dave = worth(h, 'Dave') - before.dave
    const eve = worth(h, 'Eve') - before.eve
    // both rejects stand; the first forced error's part is shared, the later ones are Eve's alone
    expect(dave).toBe(parts.get(first)! / 2n + V)
    expect(eve).toBe(parts.get(first)! / 2n + rest.reduce((a, f) => a + parts.get(f)!, 0n) + V)
    // stopping costs Dave what Eve's replay of the rest earned (before: nothing, there was nothing more to catch)
    expect(eve - dave).toBeGreaterThan(0n)
    // the solver pays J once, however many forced errors its draw ordered: its premium does not grow
    expect(worth(h, 'Bob') - before.bob).toBe(600n * UNIT - JACKPOT)
  }, 180_000)

  it('a solver that withholds its draw after ruled forced errors pays J all the same; each finder is paid J/4', async () => {
    const { h, draw, dispute } = await multiForced()
    const before = { dave: worth(h, 'Dave'), eve: worth(h, 'Eve'), bob: worth(h, 'Bob') }
    // each catches one forced step; the solver reveals both picks and then not its draw
    expect(h.run('Dave', 'Arbitration', 'submit_verdict', { taskId: 0, accept: false, checkedSteps: [draw.steps[0]] }).error).toBeUndefined()
    dispute('Dave', draw.steps[0])
    expect(h.run('Eve', 'Arbitration', 'submit_verdict', { taskId: 0, accept: false, checkedSteps: [draw.steps[1]] }).error).toBeUndefined()
    dispute('Eve', draw.steps[1])
    // no reveal_draw: the chain asks for it after the window and settles at its deadline
    const ev: string[] = []
    for (let i = 0; i < 400 && taskOf(h).phase === 'Verifying'; i++) ev.push(...h.advance(1))
    expect(taskOf(h).phase).toBe('Settled')
    expect(ev).toContain('Arbitration.JackpotForfeited')
    const V = 100n * UNIT
    expect(worth(h, 'Dave') - before.dave).toBe(JACKPOT / BigInt(FORCED_ERRORS_PER_DRAW) + V)
    expect(worth(h, 'Eve') - before.eve).toBe(JACKPOT / BigInt(FORCED_ERRORS_PER_DRAW) + V)
    expect(worth(h, 'Bob') - before.bob).toBe(600n * UNIT - JACKPOT)
  }, 180_000)

  it('in expectation on the devnet\'s task: a verifier that caught one forced error loses by stopping', () => {
    // 1,000 steps, a root every step, checkpoints every 10, 2 verifiers: samples of 22 steps each.
    // Over many draws (each forced step's part J/n shared by the drawn verifiers whose sample holds it),
    // the stopper replays its sample in step order up to its first forced step; the other verifier replays all.
    const [steps, m, every, k] = [1000, 1, 10, 2]
    const J = 200
    let caught = 0; let lost = 0; let tasks = 0
    for (let i = 0; i < 4000; i++) {
      const seed = (tag: string): string => '0x' + toHex(sha256(new TextEncoder().encode(`${tag}:${i}`)))
      const outputs = Array.from({ length: FORCED_ERRORS_PER_DRAW }, (_, j) => sha256(new TextEncoder().encode(`out:${i}:${j}`)))
      const forced = forcedErrorsFromOutputs(outputs, steps, 1_000_000, m, every)
      const mine = requiredSample(seed('seed'), '0x' + '11'.repeat(32), steps, k, m)
      const other = requiredSample(seed('seed'), '0x' + '22'.repeat(32), steps, k, m)
      tasks++
      const holds = (s: number[], f: number): boolean => sampleHoldsTransition(s, f, steps, false, m)
      const inMine = forced.filter(f => holds(mine, f))
      if (inMine.length === 0) continue
      caught++
      // what replaying on would have added: each later forced step's part, shared with the other verifier when its sample holds it too
      for (const f of inMine.slice(1)) lost += (J / forced.length) / (holds(other, f) ? 2 : 1)
    }
    const perCatch = lost / caught
    const perTask = lost / tasks
    // a verifier that caught one forgoes ≈ 1.4 units (of J = 200) by stopping, against the replay of ≈ 10 more
    // steps (docs/economics.md); with one forced error per task nothing was left to catch after the first: 0
    expect(caught).toBeGreaterThan(200)
    expect(perCatch).toBeGreaterThan(1)
    expect(perTask).toBeGreaterThan(0.1)
  })
})
