import { beforeEach, describe, expect, it } from 'vitest'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import type { TaskInfo } from '../../protocols/pallet-types.js'
import * as reference from '../../protocols/reference/index.js'
import { taskProgram } from '../helpers/program.js'
import { Harness } from '../unit/chain/harness.js'

// Block numbers are u32 in every stored deadline (a solver's, a challenge
// window's end, a verifier's). submit_task took any u32 solve_timeout and
// challenge_window, and the runtime adds them to the current block: a task
// with solve_timeout = 2^32 − 1 stored fine, then the next block's
// on_initialize selected its solver, computed a deadline past 2^32 and failed
// to store it — on_initialize is not a call that can fail alone, so block
// production stopped for good: the whole chain halted for one submission
// (and a rent deposit the submitter could afford). A challenge_window near
// 2^32 made the selected solver's commit_proof fail ('Other') instead, so an
// honest solver was slashed for missing its deadline. Both are now refused at
// submission (InvalidTaskParams above MaxTaskPeriod). Each test plays the
// submission to its end and fails if the chain stops or the solver cannot commit.

const H = (b: number): string => '0x' + b.toString(16).padStart(2, '0').repeat(32)
const U32_MAX = 0xffff_ffff
let h: Harness

const task = (solveTimeout: number, challengeWindow: number): Record<string, unknown> => {
  const p = taskProgram({ steps: 10, checkpointEvery: 5 })
  return {
    programHash: p.programHash, program: p.programHex, datasetRoot: H(2), skeletonRoot: H(3), steps: 10, checkpointEvery: 5,
    escrow: 100n * UNIT, solverReward: 60n * UNIT, verifierReward: 10n * UNIT, verifierCount: 2, challengeWindow, solveTimeout
  }
}

beforeEach(async () => {
  h = await Harness.create({ reference })
  for (const [who, roles] of [['Bob', 2], ['Dave', 4], ['Eve', 4]] as const) {
    expect(h.run(who, 'Arbitration', 'register_node', h.registerArgs(who, roles, 2000n * UNIT)).error).toBeUndefined()
  }
})

/** Submits, lets the chain select Bob, has him commit; returns whether the submission was taken and whether the commit was. */
function playTo (t: Record<string, unknown>): { submitted: boolean, committed: boolean } {
  const submitted = h.run('Alice', 'Arbitration', 'submit_task', t).error === undefined
  // the chain must go on producing blocks whatever was submitted
  expect(() => h.advance(2)).not.toThrow()
  if (!submitted) return { submitted, committed: false }
  expect(h.read<TaskInfo>('Arbitration', 'Tasks', 0)?.solver).toBe(h.accounts.Bob)
  const r = h.run('Bob', 'Arbitration', 'commit_proof', { taskId: 0, proofRoot: H(7), finalStateRoot: H(8), stepCount: 10, checkpoints: [] })
  expect(() => h.advance(2)).not.toThrow()
  return { submitted, committed: r.error === undefined }
}

describe('a task whose deadlines would pass the last u32 block', () => {
  it('a solve timeout of 2^32 − 1 is refused: the chain does not halt at the selection', () => {
    expect(playTo(task(U32_MAX, 5))).toEqual({ submitted: false, committed: false })
    expect(h.run('Alice', 'Arbitration', 'submit_task', task(U32_MAX, 5)).error).toBe('Arbitration.InvalidTaskParams')
  })

  it('a challenge window of 2^32 − 4 is refused: no selected solver is left unable to commit', () => {
    const r = playTo(task(1000, U32_MAX - 3))
    expect(r.submitted === r.committed).toBe(true)
    expect(r.submitted).toBe(false)
  })

  it('long honest parameters are still accepted, and the task runs', () => {
    expect(playTo(task(1_000_000, 1_000_000))).toEqual({ submitted: true, committed: true })
  })
})
