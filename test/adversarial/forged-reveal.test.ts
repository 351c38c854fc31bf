import { beforeAll, describe, expect, it } from 'vitest'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import { toHex } from '../../protocols/commit/merkle.js'
import { commitTensor } from '../../protocols/commit/tensor.js'
import { newProgram } from '../../protocols/program/index.js'
import type { TapeEntry } from '../../protocols/tape/tape.js'
import { initBackend } from '../../node/train/backend.js'
import { datasetRef, syntheticDataset } from '../../node/train/dataset.js'
import { drawOn, honest, honestRun, nodeOf, playDispute, taskOf, taskOnChain, type Run, type Side } from '../unit/dispute/fixture.js'
import { honestPost, revealOf } from '../unit/dispute/forced-fixture.js'

// A forged forced-error reveal. A coalition solver trains honestly and
// commits the HONEST root at its drawn step f. It signs a fake @state entry
// (the honest post-state with element 0 of tensor 0, x ≥ 1, set to x − 1),
// its puppet disputes f with that tape, the tapes agree and the puppet's
// `state` claim wins with honest_post H' = the fake state. Before, the
// reveal proved "the committed post-state is honest_post with element 0
// set to |v| + 1": |x − 1| + 1 = x, the honest state, so it passed, and at
// settlement every honest accept that listed f (a verifier that replayed f
// and found it right) lost 20 % of its stake as a blind accept. Now a
// forced error commits forcedLeaf(H) for the state H it reached; the reveal
// must show the committed leaf is forcedLeaf(honest_post), and an honest
// leaf is the mark of no state (a sha256 preimage). The test fails if the
// coalition's reveal is accepted or the honest accept is slashed.

const STAKE = 10_000n * UNIT
let run: Run

beforeAll(async () => {
  await initBackend('wasm')
  const ds = syntheticDataset(7, 64, 8)
  // two steps, a checkpoint at 2: the draw can only mark state 1 (f = 0); this seed and rate give element 0 of tensor 0 after it x ≥ 1
  const p = newProgram({ model: 'mlp', dataset: datasetRef(ds), steps: 2, optimizer: 'sgd', batchSize: 4, seed: 5, checkpointEvery: 2, learningRate: 50 })
  run = await honestRun(p, ds, 0)
}, 120_000)

/** The coalition's fake tape of step f: its @state entry reads the honest post-state with element 0 of tensor 0 set to x − 1. */
function fakeTape (): Side {
  const fake = honestPost(run).map((t, k) => k === 0 ? { ...t, values: t.values.map((v, i) => i === 0 ? Math.fround(v - 1) : v) } : t)
  const last = run.entries.length - 1
  const entries: TapeEntry[] = run.entries.map(
    (e, i) => i !== last ? e : { ...e, inputs: e.inputs.map((x, k) => ({ ...x, commitment: toHex(commitTensor(fake[k]).root) })) }
  )
  return { entries, values: run.values.map((v, i) => i !== last ? v : { inputs: fake, outputs: [] }), roots: run.roots }
}

describe('a coalition cannot forge a forced-error reveal on an honest step', () => {
  it('the puppet wins a state claim on a fake @state entry; the reveal is refused and the honest accept keeps its stake', async () => {
    const x = honestPost(run)[0].values[0]
    expect(x).toBeGreaterThanOrEqual(1) // |x − 1| + 1 = x: the old exactness rule took the honest state for the forced one
    const h = await taskOnChain(run, honest(run), { forcedErrorPpm: 1_000_000, verifierCount: 1, verifiers: ['Dave'], challengeWindow: 200, disputeClock: 400 })
    const draw = drawOn(h)
    expect(draw.step).toBe(0)
    h.advance(1)
    // Dave, honest and drawn, replayed both steps (f among them) and accepts
    expect(h.run('Dave', 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: [0, 1] }).error).toBeUndefined()
    // Ferdie, Bob's puppet, disputes f; both play the fake tape: a state ruling on the fake post-state
    expect(h.run('Ferdie', 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: 0 }).error).toBeUndefined()
    const fake = fakeTape()
    expect(playDispute(h, run, fake, fake, { disputeId: 0, challengerName: 'Ferdie', disputedStep: 0 }).status).toBe('ChallengerWon')
    const ruling = taskOf(h).rulings[0]
    expect(ruling.claimKind).toBe('State')
    expect(ruling.honestPost).not.toBe('0x' + run.roots[1])
    // the best the coalition can prove: the path of the committed (honest) leaf
    const reveal = h.run('Bob', 'Arbitration', 'reveal_forced_error', { taskId: 0, vrfOutput: draw.output, vrfProof: draw.proof, exactness: revealOf(run, honest(run)) }).error
    expect(reveal).toBe('Arbitration.NotExactForcedError')
    expect(taskOf(h).revealedForcedError).toBeNull()
    const ev: string[] = []
    for (let i = 0; i < 600 && taskOf(h).phase === 'Verifying'; i++) ev.push(...h.advance(1))
    // the thrown dispute fails the task and costs the coalition's solver half its stake; no verdict is slashed for it
    expect(ev).toContain('Arbitration.SolverPenalized')
    expect(ev).not.toContain('Arbitration.VerdictSlashed')
    expect(ev).not.toContain('Arbitration.JackpotPaid')
    expect(nodeOf(h, 'Dave').stake).toBe(STAKE)
    expect(nodeOf(h, 'Bob').stake).toBe(STAKE / 2n)
  })
})
