import { u8aToHex } from '@polkadot/util'
import { beforeAll, describe, expect, it } from 'vitest'
import { encodeClaim, verifySigned } from '../../protocols/dispute/index.js'
import { initialRootCheckable } from '../../protocols/dispute/claim-proofs.js'
import { newProgram } from '../../protocols/program/index.js'
import type { TaskProgram } from '../../protocols/program/program.js'
import { canonicalJson } from '../../protocols/program/canonical-json.js'
import { SegmentDefender, decodeMsg } from '../../protocols/dispute/index.js'
import * as reference from '../../protocols/reference/index.js'
import { initBackend } from '../../node/train/backend.js'
import { datasetRef, syntheticDataset } from '../../node/train/dataset.js'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import { Harness } from '../unit/chain/harness.js'
import { STAKE, gamesFor, honest, honestRun, nodeOf, pair, taskOnChain, verify, type Run } from '../unit/dispute/fixture.js'
import { answer, dispute, force, tx, until, worth } from './setup.js'
import { signed } from '../helpers/dispute-msgs.js'
import { sha256, toHex } from '../../protocols/commit/merkle.js'

// A griefer disputes step 0 of an honest proof and, in its signed opening,
// disagrees with the committed state 0. The defender's answer is `badOpen`,
// which at step 0 stands only if the chain recomputes the program's initial
// state (checkInitialRoot): it cannot for a state over MAX_INIT_RECOMPUTE
// elements, and refuses the claim (UnsupportedKernel). The honest defender's
// game ended with that claim: it had nothing to answer the opening with, so
// the griefer forced it on chain and won at the due block. The honest solver
// lost half its stake and the task failed (the submitter, or its puppet
// griefer, got the escrow back and the trained checkpoints). Now the defender
// plays on when the chain cannot check its state 0: every claim is judged
// against the committed leaf 0, not the challenger's opening, so the honest
// tape wins.
//
// A program whose initializer the chain cannot generate at all (a normal one:
// GlorotNormal, …) is no longer admitted: a solver could start it from a
// state of its choosing (a planted model, say) and train honestly from there,
// and the verifier that saw state 0 was not the program's had no claim the
// chain could judge (initial-state claims generate elements: UnsupportedInitializer);
// its reject stood on nothing and lapsed, −(B + R), or it accepted a state it
// knew was wrong. submit_task refuses it (ProgramNotVerifiable).

let run: Run
let uniform: Uint8Array
let normal: Uint8Array

beforeAll(async () => {
  await initBackend('wasm')
  const ds = syntheticDataset(7, 64, 8)
  const p = newProgram({ model: 'mlp', dataset: datasetRef(ds), steps: 5, optimizer: 'sgd', batchSize: 4, seed: 11, checkpointEvery: 5 })
  // two hidden layers of 2,048 (5.8 M weights): over MAX_INIT_RECOMPUTE (4 Mi), each tensor one an initial-state claim addresses
  const big = JSON.parse(JSON.stringify(p)) as TaskProgram
  const layers = big.model.topology!.config.layers
  const wide = JSON.parse(JSON.stringify(layers[0])) as typeof layers[0]
  delete wide.config.batch_input_shape
  wide.config.name = 'wide'
  layers[0].config.units = 2048
  wide.config.units = 2048
  layers.splice(1, 0, wide)
  run = await honestRun(big, ds, 0)
  uniform = new TextEncoder().encode(canonicalJson(p))
  const n = JSON.parse(JSON.stringify(p)) as TaskProgram
  n.model.topology!.config.layers[0].config.kernel_initializer = { class_name: 'GlorotNormal', config: { seed: null } }
  normal = new TextEncoder().encode(canonicalJson(n))
}, 120_000)

describe('a griefer disputes the committed state 0 of a program whose initial state the chain cannot recompute', () => {
  it('the honest defender plays on instead of a badOpen the chain refuses, and keeps its stake', async () => {
    // the premise: the chain cannot recompute this program's initial state
    expect(initialRootCheckable(run.programBytes)).toBe(false)
    const h = await taskOnChain(run, honest(run))
    expect(h.run('Dave', 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: 0 }).error).toBeUndefined()
    const g = gamesFor(h, run, honest(run), honest(run), { disputeId: 0, challengerName: 'Dave', disputedStep: 0 })
    const dave = worth(h, 'Dave')
    const commit = g.D.commit()
    // the griefer's opening names another state 0 than the committed one
    const open = { send: signed('Dave', g.ctx, { t: 'open', d: 0, step: 0, pre: sha256(Uint8Array.of(1)), post: sha256(Uint8Array.of(2)) }, commit) }
    const r = g.D.respond(verifySigned(open.send, pair('Dave').publicKey, verify, g.ctx), open.send)
    expect(r.claim?.kind ?? 'reply').not.toBe('refuse')
    // a defender claim goes to the chain at once
    if (r.claim !== undefined) expect(tx(h, 'Bob', 'adjudicate', { claim: u8aToHex(encodeClaim(r.claim)) })).toBe('Arbitration.UnsupportedKernel')
    // the griefer forces its opening on chain: the defender answers with what its game gives, if anything
    expect(force(h, 'Dave', commit, open.send)).toBeUndefined()
    if (r.reply === undefined) {
      until(h, dispute(h).force!.due + 1)
      expect(tx(h, 'Dave', 'claim_timeout')).toBeUndefined()
    } else {
      // its answer is on chain; the griefer has no move that wins (every claim is judged against leaf 0),
      // and when it makes none the defender forces it and wins at the due block
      expect(answer(h, 'Bob', r.reply)).toBeUndefined()
      expect(force(h, 'Bob', undefined, r.reply)).toBeUndefined()
      until(h, dispute(h).force!.due + 1)
      expect(tx(h, 'Bob', 'claim_timeout')).toBeUndefined()
    }
    expect(nodeOf(h, 'Bob').stake).toBe(STAKE)
    expect(dispute(h).status).toBe('DefenderWon')
    expect(worth(h, 'Dave')).toBeLessThan(dave)
  }, 120_000)

  it('in a segment dispute too: the opening of step 0 is taken; with a recomputable initial state it is still a badOpen', () => {
    const bob = pair('Bob')
    const ctx = { genesis: new Uint8Array(32).fill(7), taskId: 0, disputeId: 0 }
    const leaves = [1, 2, 3, 4].map(b => toHex(sha256(Uint8Array.of(b))))
    const outcome = (program: Uint8Array): string => {
      const D = new SegmentDefender({
        ...ctx, account: bob.publicKey, sign: m => bob.sign(m), j: 0, rootEvery: 2, steps: 5, stateRoots: leaves, inside: [sha256(Uint8Array.of(9))], program
      })
      const open = signed('Dave', ctx, { t: 'open', d: 0, step: 0, pre: sha256(Uint8Array.of(5)), post: sha256(Uint8Array.of(6)) }, D.segment())
      const r = D.onOpen(decodeMsg(open.m, true), open)
      return 'claim' in r ? r.claim.kind : 'step' in r ? `opened ${r.step}` : 'ignored'
    }
    expect(outcome(run.programBytes)).toBe('opened 0')
    expect(outcome(uniform)).toBe('badOpen')
  })

  it('a program whose initializer the chain cannot generate is refused at submit_task', async () => {
    const h = await Harness.create({ reference })
    const submit = (bytes: Uint8Array): string | undefined => h.run('Alice', 'Arbitration', 'submit_task', {
      programHash: '0x' + toHex(sha256(bytes)), program: u8aToHex(bytes), datasetRoot: '0x' + '01'.repeat(32), skeletonRoot: '0x' + '03'.repeat(32),
      steps: 5, checkpointEvery: 5, escrow: 1000n * UNIT, solverReward: 600n * UNIT, verifierReward: 100n * UNIT,
      verifierCount: 2, challengeWindow: 50, solveTimeout: 20
    }).error
    expect(initialRootCheckable(normal)).toBe(false)
    expect(submit(normal)).toBe('Arbitration.ProgramNotVerifiable')
    // the same program with its uniform initializer is taken
    expect(submit(uniform)).toBeUndefined()
  })
})
