import { beforeEach, describe, expect, it } from 'vitest'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import type { Params, TaskInfo } from '../../protocols/pallet-types.js'
import { validateProgram } from '../../protocols/program/program.js'
import * as reference from '../../protocols/reference/index.js'
import { programSize, stepFlops } from '../../protocols/scheduling/estimate.js'
import { minWindow, taskProgram, type ProgramArgs } from '../helpers/program.js'
import { harnessAssignments, harnessSample } from '../helpers/verdict-sample.js'
import { Harness } from '../unit/chain/harness.js'

// A challenge window no drawn verifier can meet, posted to get a task trained
// for nothing: every verifier drawn for it lapses (the silence penalty) round
// after round, the task ends Unverified, the escrow comes back, the solver is
// not paid and its checkpoints are public. The attack is played to its end
// here, whatever the chain does with the task, with honest verifiers that each
// give their verdict as soon as their replay at the network's reference speed
// is done: none of them may lose stake, and the honest solver must be paid.

const H = (b: number): string => '0x' + b.toString(16).padStart(2, '0').repeat(32)
const STAKE = 2000n * UNIT
const REWARD = 600n * UNIT
const VERIFIERS = ['Charlie', 'Dave', 'Eve', 'Ferdie'] as const
let h: Harness

const task = (p: ProgramArgs, challengeWindow: number, verifierCount = 1): Record<string, unknown> => ({
  programHash: p.programHash, program: p.programHex, datasetRoot: H(2), skeletonRoot: H(3), steps: p.program.steps, checkpointEvery: p.program.checkpointEvery,
  escrow: 1000n * UNIT, solverReward: REWARD, verifierReward: 100n * UNIT, verifierCount, challengeWindow, solveTimeout: 1000
})

const worth = (who: string): bigint => h.free(who) + h.reserved(who)
const flopsPerBlock = (): number => Number((h.read<Params>('Arbitration', 'Params') as Params).referenceFlopsPerBlock)
const chainMin = (p: ProgramArgs, verifierCount = 1): number => minWindow(p, verifierCount, flopsPerBlock())

interface Outcome { submitted: string | undefined, phase?: string, verifiersLost: bigint, solverPaid: bigint, submitterLost: bigint }

/**
 * Bob solves honestly; each drawn verifier replays the whole run at the reference
 * speed (at least its sample) and posts its accept in the block that replay ends.
 */
function playWith (p: ProgramArgs, challengeWindow: number): Outcome {
  expect(h.run('Bob', 'Arbitration', 'register_node', h.registerArgs('Bob', 2, STAKE)).error).toBeUndefined()
  for (const v of VERIFIERS) expect(h.run(v, 'Arbitration', 'register_node', h.registerArgs(v, 4, STAKE)).error).toBeUndefined()
  const before = new Map(['Alice', 'Bob', ...VERIFIERS].map(w => [w, worth(w)]))
  const submitted = h.run('Alice', 'Arbitration', 'submit_task', task(p, challengeWindow)).error
  const lost = (): Outcome => ({
    submitted,
    phase: h.read<TaskInfo>('Arbitration', 'Tasks', 0)?.phase,
    verifiersLost: VERIFIERS.reduce((s, v) => s + before.get(v)! - worth(v), 0n),
    solverPaid: worth('Bob') - before.get('Bob')!,
    submitterLost: before.get('Alice')! - worth('Alice')
  })
  if (submitted !== undefined) return lost()
  h.advance(1)
  expect((h.read<TaskInfo>('Arbitration', 'Tasks', 0) as TaskInfo).solver).toBe(h.accounts.Bob)
  expect(h.run('Bob', 'Arbitration', 'commit_proof', { taskId: 0, proofRoot: H(9), finalStateRoot: H(8), stepCount: p.program.steps, checkpoints: [] }).error).toBeUndefined()
  const replayBlocks = Math.ceil(stepFlops(programSize(validateProgram(p.program))) * p.program.steps / flopsPerBlock())
  const done = new Set<string>()
  for (let i = 0; i < 400 && (h.read<TaskInfo>('Arbitration', 'Tasks', 0) as TaskInfo).phase === 'Verifying'; i++) {
    const calls: Array<[string, string, string, Record<string, unknown>]> = []
    for (const x of harnessAssignments(h)?.verifiers ?? []) {
      const name = Object.entries(h.accounts).find(([, a]) => a === x.verifier)![0]
      // drawn in the block after its seed block; its verdict goes into the block its replay ends in
      if (x.status !== 'Active' || done.has(name) || h.number + 1 < x.seedBlock + 1 + replayBlocks) continue
      done.add(name)
      calls.push([name, 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: harnessSample(h, name) }])
    }
    h.block(calls)
  }
  return lost()
}

beforeEach(async () => { h = await Harness.create({ reference }) })

describe('a challenge window too short to verify', () => {
  it('a one-block window: refused, so no honest verifier lapses and the honest solver is not left unpaid', () => {
    const p = taskProgram({ steps: 100, checkpointEvery: 10 })
    const r = playWith(p, 1)
    // the attack as it played before the rule: every drawn verifier lapsed, the task ended Unverified, the solver unpaid
    expect(r.verifiersLost).toBe(0n)
    expect(r.phase === undefined || r.phase === 'Settled').toBe(true)
    expect(r.submitted).toBe('Arbitration.ChallengeWindowTooShort')
  })

  it('the bound: one block less is refused, exactly the minimum is verified in time and paid', () => {
    const p = taskProgram({ steps: 100, checkpointEvery: 10 })
    const min = chainMin(p)
    expect(min).toBeGreaterThan(2)
    expect(h.run('Alice', 'Arbitration', 'submit_task', task(p, min - 1)).error).toBe('Arbitration.ChallengeWindowTooShort')
    const r = playWith(p, min)
    expect(r.submitted).toBeUndefined()
    expect(r.phase).toBe('Settled')
    expect(r.solverPaid).toBe(REWARD)
    expect(r.verifiersLost).toBeLessThan(0n)
  })

  it('at a root every m steps the bound counts the segments: one block less is refused, the minimum accepted', () => {
    const p = taskProgram({ steps: 2000, checkpointEvery: 24, rootEvery: 8 })
    const min = chainMin(p, 2)
    expect(min).toBeGreaterThan(chainMin(taskProgram({ steps: 2000, checkpointEvery: 24 }), 2))
    expect(h.run('Alice', 'Arbitration', 'submit_task', task(p, min - 1, 2)).error).toBe('Arbitration.ChallengeWindowTooShort')
    expect(h.run('Alice', 'Arbitration', 'submit_task', task(p, min, 2)).error).toBeUndefined()
  })
})
