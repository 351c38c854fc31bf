import { beforeEach, describe, expect, it } from 'vitest'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import type { Params, TaskInfo } from '../../protocols/pallet-types.js'
import * as reference from '../../protocols/reference/index.js'
import { minRewards, minWindow, taskProgram, type ProgramArgs } from '../helpers/program.js'
import { harnessAssignments, harnessSample } from '../helpers/verdict-sample.js'
import { Harness } from '../unit/chain/harness.js'

// Work at no price: a task whose rewards are zero (escrow 0), posted to get a
// program trained and verified for the capacity rent alone. The selected
// solver trains it or pays the release fee B to hand it back; each drawn
// verifier replays its sample or lapses for B + R = B. The attack is played to
// its end here, whatever the chain does with the task, with a solver and
// verifiers that do the work: each must be paid at least the price of its work
// at the network's reference_block_price (the training, one verifier's
// replays), or the task must never reach them. Before the rule the 100-step
// task settled, trained and verified, its solver and both verifiers paid 0 and
// its submitter out 0.038 units, its capacity rent (the floor: 0.08 and 0.1).

const H = (b: number): string => '0x' + b.toString(16).padStart(2, '0').repeat(32)
const STAKE = 2000n * UNIT
const VERIFIERS = ['Charlie', 'Dave', 'Eve', 'Ferdie'] as const
const COUNT = 2
let h: Harness

interface Rewards { solverReward: bigint, verifierReward: bigint }

const submit = (p: ProgramArgs, r: Rewards): string | undefined => h.run('Alice', 'Arbitration', 'submit_task', {
  programHash: p.programHash, program: p.programHex, datasetRoot: H(2), skeletonRoot: H(3), steps: p.program.steps, checkpointEvery: p.program.checkpointEvery,
  escrow: r.solverReward + r.verifierReward * BigInt(COUNT), ...r, verifierCount: COUNT, challengeWindow: minWindow(p, COUNT), solveTimeout: 1000
}).error

const worth = (who: string): bigint => h.free(who) + h.reserved(who)
/** The floor on this chain: its own reference speed and price. */
const chainFloor = (p: ProgramArgs): Rewards => minRewards(p, COUNT, h.read<Params>('Arbitration', 'Params')!)

interface Outcome { submitted: string | undefined, phase?: string, solverPaid: bigint, verifiersPaid: bigint, submitterPaid: bigint, rent: bigint }

/** Bob trains the task honestly; each drawn verifier accepts with its sample as soon as it may. */
function play (p: ProgramArgs, r: Rewards): Outcome {
  expect(h.run('Bob', 'Arbitration', 'register_node', h.registerArgs('Bob', 2, STAKE)).error).toBeUndefined()
  for (const v of VERIFIERS) expect(h.run(v, 'Arbitration', 'register_node', h.registerArgs(v, 4, STAKE)).error).toBeUndefined()
  const before = new Map(['Alice', 'Bob', ...VERIFIERS].map(w => [w, worth(w)]))
  const submitted = submit(p, r)
  const outcome = (): Outcome => ({
    submitted,
    phase: h.read<TaskInfo>('Arbitration', 'Tasks', 0)?.phase,
    solverPaid: worth('Bob') - before.get('Bob')!,
    verifiersPaid: VERIFIERS.reduce((s, v) => s + worth(v) - before.get(v)!, 0n),
    submitterPaid: before.get('Alice')! - worth('Alice'),
    rent: h.rentPaid('Alice')
  })
  if (submitted !== undefined) return outcome()
  h.advance(1)
  expect((h.read<TaskInfo>('Arbitration', 'Tasks', 0) as TaskInfo).solver).toBe(h.accounts.Bob)
  expect(h.run('Bob', 'Arbitration', 'commit_proof', { taskId: 0, proofRoot: H(9), finalStateRoot: H(8), stepCount: p.program.steps, checkpoints: [] }).error).toBeUndefined()
  const done = new Set<string>()
  for (let i = 0; i < 200 && (h.read<TaskInfo>('Arbitration', 'Tasks', 0) as TaskInfo).phase === 'Verifying'; i++) {
    const calls: Array<[string, string, string, Record<string, unknown>]> = []
    for (const x of harnessAssignments(h)?.verifiers ?? []) {
      const name = Object.entries(h.accounts).find(([, a]) => a === x.verifier)![0]
      if (x.status !== 'Active' || done.has(name) || h.number < x.seedBlock) continue
      done.add(name)
      calls.push([name, 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: harnessSample(h, name) }])
    }
    h.block(calls)
  }
  return outcome()
}

beforeEach(async () => { h = await Harness.create({ reference }) })

describe('rewards below the price of the work', () => {
  it('R = V = 0: refused, so no solver trains and no verifier replays the task for nothing', () => {
    const p = taskProgram({ steps: 100, checkpointEvery: 10 })
    const floor = chainFloor(p)
    const r = play(p, { solverReward: 0n, verifierReward: 0n })
    // the attack as it played before the rule: Settled, the training and both replays done, paid nothing, the submitter out its rent alone
    expect(r.phase === undefined || r.solverPaid >= floor.solverReward).toBe(true)
    expect(r.phase === undefined || r.verifiersPaid >= BigInt(COUNT) * floor.verifierReward).toBe(true)
    expect(r.submitted).toBe('Arbitration.SolverRewardBelowFloor')
    expect(r.submitterPaid).toBe(0n)
  })

  it('one planck below either floor is refused, naming which; a solver reward alone does not buy free verification', () => {
    const p = taskProgram({ steps: 100, checkpointEvery: 10 })
    const floor = chainFloor(p)
    expect(floor.solverReward).toBeGreaterThan(0n)
    expect(floor.verifierReward).toBeGreaterThan(0n)
    expect(submit(p, { ...floor, solverReward: floor.solverReward - 1n })).toBe('Arbitration.SolverRewardBelowFloor')
    expect(submit(p, { ...floor, verifierReward: floor.verifierReward - 1n })).toBe('Arbitration.VerifierRewardBelowFloor')
    expect(submit(p, { solverReward: 600n * UNIT, verifierReward: 0n })).toBe('Arbitration.VerifierRewardBelowFloor')
  })

  it('exactly the floor: accepted, trained, verified, and each party paid the price of its work', () => {
    const p = taskProgram({ steps: 100, checkpointEvery: 10 })
    const floor = chainFloor(p)
    const r = play(p, floor)
    expect(r.submitted).toBeUndefined()
    expect(r.phase).toBe('Settled')
    expect(r.solverPaid).toBe(floor.solverReward)
    expect(r.verifiersPaid).toBe(BigInt(COUNT) * floor.verifierReward)
    expect(r.submitterPaid).toBe(floor.solverReward + BigInt(COUNT) * floor.verifierReward + r.rent)
  })

  it('the floor follows the work: ten times the steps is ten times the training\'s price, and the old floor is refused', () => {
    const short = taskProgram({ steps: 100, checkpointEvery: 10 })
    const long = taskProgram({ steps: 1000, checkpointEvery: 10 })
    const [a, b] = [chainFloor(short), chainFloor(long)]
    expect(b.solverReward).toBeGreaterThanOrEqual(9n * a.solverReward)
    expect(b.verifierReward).toBeGreaterThan(a.verifierReward)
    expect(submit(long, a)).toBe('Arbitration.SolverRewardBelowFloor')
    expect(submit(long, b)).toBeUndefined()
  })
})
