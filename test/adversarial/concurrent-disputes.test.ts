import { u8aToHex } from '@polkadot/util'
import { beforeAll, describe, expect, it } from 'vitest'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import { tapeAllowance, type DisputeInfo } from '../../devnet/chain/runtime/disputes.js'
import { sha256, toHex } from '../../protocols/commit/merkle.js'
import { programBytes } from '../../protocols/program/bytes.js'
import { newProgram } from '../../protocols/program/index.js'
import * as reference from '../../protocols/reference/index.js'
import { datasetRef, syntheticDataset } from '../../node/train/dataset.js'
import { Harness } from '../unit/chain/harness.js'
import { referenceCostOn } from '../helpers/rerun-cost.js'
import { contextOn, nodeOf, STAKE } from '../unit/dispute/fixture.js'
import { h32, hex, signed } from '../helpers/dispute-msgs.js'

// Concurrent disputes against one defender. Each dispute's first defender
// message (the commit) needs a tape: a re-run of up to checkpoint_every steps,
// for which the chain grants a tape allowance: at the rate the task's own
// solve_timeout allows per step, or at the program's cost at the reference
// speed if less (here: 5 blocks, the submitter's pace giving 10 per step). Before, that allowance was per dispute: a
// griefer opening N disputes at once, and forcing every commit in the next
// block, asked for N tapes in the time of one. An honest solver, however fast,
// timed out on all but the first few, was slashed (the griefer's share capped
// at its bond, its bond back) and the task failed: the submitter got the
// trained checkpoints and its escrow back. Now the defender's tapes are queued
// on chain: each dispute's commit is due its own allowance after the tapes
// queued before it, and its deadline moves with it.

const STEPS = 100
const EVERY = 50
const SOLVE_TIMEOUT = 1000
const DISPUTES = 6
const BOND = 100n * UNIT

async function committedTask (): Promise<Harness> {
  const h = await Harness.create({ reference })
  expect(h.run('Bob', 'Arbitration', 'register_node', h.registerArgs('Bob', 2, STAKE)).error).toBeUndefined()
  // Dave, the griefer, only challenges: not drawn as a verifier (whose silence would cost it too)
  for (const v of ['Dave', 'Eve', 'Ferdie']) expect(h.run(v, 'Arbitration', 'register_node', h.registerArgs(v, v === 'Dave' ? 8 : 4 | 8, STAKE)).error).toBeUndefined()
  const program = newProgram({ model: 'mlp', dataset: datasetRef(syntheticDataset(7, 64, 8)), steps: STEPS, optimizer: 'sgd', batchSize: 4, seed: 11, checkpointEvery: EVERY })
  const bytes = programBytes(program)
  const r = h.run('Alice', 'Arbitration', 'submit_task', {
    programHash: '0x' + toHex(sha256(bytes)),
    program: u8aToHex(bytes),
    datasetRoot: u8aToHex(h32(1)),
    skeletonRoot: u8aToHex(h32(2)),
    steps: STEPS,
    checkpointEvery: EVERY,
    escrow: 1000n * UNIT,
    solverReward: 600n * UNIT,
    verifierReward: 100n * UNIT,
    verifierCount: 2,
    challengeWindow: 50,
    solveTimeout: SOLVE_TIMEOUT
  })
  expect(r.error).toBeUndefined()
  h.advance(1)
  expect(h.read<{ solver: string }>('Arbitration', 'Tasks', 0)!.solver).toBe(h.accounts.Bob)
  expect(h.run('Bob', 'Arbitration', 'commit_proof', { taskId: 0, proofRoot: u8aToHex(h32(3)), finalStateRoot: u8aToHex(h32(4)), stepCount: STEPS, checkpoints: [] }).error).toBeUndefined()
  return h
}

const dispute = (h: Harness, id: number): DisputeInfo => h.read<DisputeInfo>('Arbitration', 'Disputes', id)!
const worth = (h: Harness, name: string): bigint => h.free(name) + h.reserved(name)

/**
 * The griefer opens DISPUTES disputes at the steps with the longest tapes and
 * forces every commit; the honest defender tapes them one after the other at
 * `speed` times the rate its allowance assumes, from the block each is opened
 * (what a node does on DisputeOpened), answers each force the block its tape is done if it still may,
 * then forces its own commit on chain (the griefer never plays on) and claims
 * the timeouts. Returns how each dispute ended.
 */
function attack (h: Harness, speed: number): { statuses: string[], blocks: number } {
  const t = { steps: STEPS, checkpointEvery: EVERY, solveTimeout: SOLVE_TIMEOUT }
  const cost = referenceCostOn(h)
  const steps = Array.from({ length: DISPUTES }, (_, i) => EVERY - 1 - i)
  for (const s of steps) expect(h.run('Dave', 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: s }).error).toBeUndefined()
  for (let id = 0; id < DISPUTES; id++) expect(h.run('Dave', 'Arbitration', 'force_move', { disputeId: id, theirs: '0x', mine: '0x' }).error).toBeUndefined()
  const start = h.number
  // the defender tapes each dispute as it sees it opened, one at a time, in the order they were opened
  const ready = new Map<number, number>()
  let clock = 0
  for (const [id, s] of steps.entries()) {
    clock = Math.max(clock, dispute(h, id).openedAt) + Math.ceil(tapeAllowance(t, s, cost) / speed)
    ready.set(id, clock)
  }
  const commits = steps.map((s, id) => signed('Bob', contextOn(h, id), { t: 'commit', d: id, step: s, traceRoot: h32(9), depth: 3 }))
  const open = new Set(steps.keys())
  for (let n = 0; n < 200_000 && open.size > 0; n++) {
    for (const id of [...open]) {
      const d = dispute(h, id)
      if (d.status !== 'Open') { open.delete(id); continue }
      const f = d.force
      if (f !== null && f.to === 'Defender' && h.number + 1 >= ready.get(id)! && h.number + 1 <= f.due) {
        expect(h.run('Bob', 'Arbitration', 'answer_move', { disputeId: id, answer: hex(commits[id]) }).error).toBeUndefined()
        // the griefer stays silent: the defender forces on with its commit, already on chain
        expect(h.run('Bob', 'Arbitration', 'force_move', { disputeId: id, theirs: '0x', mine: hex(commits[id]) }).error).toBeUndefined()
      } else if (f !== null && h.number + 1 > f.due) {
        expect(h.run('Eve', 'Arbitration', 'claim_timeout', { disputeId: id }).error).toBeUndefined()
      }
    }
    if (open.size > 0) h.advance(1)
  }
  expect(open.size).toBe(0)
  return { statuses: steps.map((_, id) => dispute(h, id).status), blocks: h.number - start }
}

describe('a griefer opens many disputes at once against an honest solver', () => {
  let fresh: () => Promise<Harness>
  beforeAll(() => { fresh = committedTask })

  for (const speed of [1, 4]) {
    it(`a defender taping at ${speed}× the rate its allowance assumes answers every one: the griefer loses every bond, the solver is not slashed`, async () => {
      const h = await fresh()
      const before = { dave: worth(h, 'Dave'), bob: worth(h, 'Bob'), bobStake: nodeOf(h, 'Bob').stake }
      const { statuses } = attack(h, speed)
      expect({ daveGain: worth(h, 'Dave') - before.dave, bobSlashed: before.bobStake - nodeOf(h, 'Bob').stake })
        .toEqual({ daveGain: -BigInt(DISPUTES) * BOND, bobSlashed: 0n })
      expect(statuses).toEqual(Array(DISPUTES).fill('DefenderWon'))
      expect(worth(h, 'Bob')).toBe(before.bob + BigInt(DISPUTES) * BOND / 2n)
      expect(h.read<{ solverFailed: boolean }>('Arbitration', 'Tasks', 0)!.solverFailed).toBe(false)
    }, 60_000)
  }

  it('each queued commit is due its own allowance after those queued before it, and the dispute deadline moves with it', async () => {
    const h = await fresh()
    const t = { steps: STEPS, checkpointEvery: EVERY, solveTimeout: SOLVE_TIMEOUT }
    const cost = referenceCostOn(h)
    // steps 0..49 and 0..48: 500 and 490 blocks at the submitter's pace, 5 each at the program's reference cost
    expect([tapeAllowance(t, 49), tapeAllowance(t, 48), tapeAllowance(t, 49, cost), tapeAllowance(t, 48, cost)]).toEqual([500, 490, 5, 5])
    const opens = h.block([49, 48].map(s => ['Dave', 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: s }]))
    expect(opens.results.map(r => r.error)).toEqual([undefined, undefined])
    const [a, b] = [dispute(h, 0), dispute(h, 1)]
    expect(b.openedAt).toBe(a.openedAt)
    expect(b.deadline - a.deadline).toBe(tapeAllowance(t, 48, cost))
    expect(h.run('Dave', 'Arbitration', 'force_move', { disputeId: 1, theirs: '0x', mine: '0x' }).error).toBeUndefined()
    expect(dispute(h, 1).force!.due).toBe(a.openedAt + tapeAllowance(t, 49, cost) + tapeAllowance(t, 48, cost) + 20)
  }, 60_000)
})
