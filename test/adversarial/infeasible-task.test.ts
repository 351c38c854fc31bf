import { beforeEach, describe, expect, it } from 'vitest'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import type { Params, TaskInfo } from '../../protocols/pallet-types.js'
import { jobMemory, minSolveBlocks, programSize } from '../../protocols/scheduling/estimate.js'
import { validateProgram } from '../../protocols/program/program.js'
import * as reference from '../../protocols/reference/index.js'
import { TEST_TEXT, minWindow, taskProgram, type ProgramArgs } from '../helpers/program.js'
import { Harness } from '../unit/chain/harness.js'

// A task no solver can train, posted to make solvers pay: a solve timeout far
// too short for the program's training, or a model whose training job needs more
// memory than any solver has. Each selected solver's scheduler sees it cannot
// finish and hands the task back (release_task: the bond-sized fee, which stays so
// that a release is never a free re-roll of the forced-error draw), the next
// solver does the same, and the task expires with the submitter's escrow back.
// The attack is played to its end here, whatever the chain does with the task:
// the honest solvers must not lose more than the griefer pays.

const H = (b: number): string => '0x' + b.toString(16).padStart(2, '0').repeat(32)
const STAKE = 2000n * UNIT
let h: Harness

const task = (p: ProgramArgs, solveTimeout: number): Record<string, unknown> => ({
  programHash: p.programHash, program: p.programHex, datasetRoot: H(2), skeletonRoot: H(3), steps: p.program.steps, checkpointEvery: p.program.checkpointEvery,
  escrow: 100n * UNIT, solverReward: 60n * UNIT, verifierReward: 10n * UNIT, verifierCount: 2, challengeWindow: minWindow(p, 2), solveTimeout
})

const wealth = (who: string): bigint => h.free(who) + h.reserved(who)

/** Registers two solvers and two verifiers, submits as Alice, and plays every selected solver's hand-back; returns what each side lost. */
function griefWith (t: Record<string, unknown>): { submitted: boolean, solversLost: bigint, submitterLost: bigint } {
  for (const [who, roles] of [['Bob', 2], ['Charlie', 2], ['Dave', 4], ['Eve', 4]] as const) {
    expect(h.run(who, 'Arbitration', 'register_node', h.registerArgs(who, roles, STAKE)).error).toBeUndefined()
  }
  const before = { Alice: wealth('Alice'), Bob: wealth('Bob'), Charlie: wealth('Charlie') }
  const submitted = h.run('Alice', 'Arbitration', 'submit_task', t).error === undefined
  for (let round = 0; round < 4 && submitted; round++) {
    h.advance(1)
    const info = h.read<TaskInfo>('Arbitration', 'Tasks', 0) as TaskInfo
    const solver = Object.entries(h.accounts).find(([, a]) => a === info.solver)?.[0]
    if (info.phase !== 'Solving' || solver === undefined) break
    // what the solver's job scheduler does with a task it cannot finish in time or hold in memory (too late
    // if the deadline already passed: then it was slashed for missing it)
    h.run(solver, 'Arbitration', 'release_task', { taskId: 0 })
  }
  const solversLost = before.Bob - wealth('Bob') + before.Charlie - wealth('Charlie')
  return { submitted, solversLost, submitterLost: before.Alice - wealth('Alice') }
}

beforeEach(async () => { h = await Harness.create({ reference }) })

describe('a task no solver can train', () => {
  it('a solve timeout far shorter than the training: refused, so no solver pays for handing it back', () => {
    const p = taskProgram({ steps: 100, checkpointEvery: 10 })
    const params = h.read<Params>('Arbitration', 'Params') as Params
    const min = minSolveBlocks(programSize(validateProgram(p.program)), Number(params.referenceFlopsPerBlock))
    expect(min).toBeGreaterThan(2)
    const r = griefWith(task(p, 1))
    expect(r.solversLost).toBeLessThanOrEqual(r.submitterLost)
    expect(r.submitted).toBe(false)
    expect(h.run('Alice', 'Arbitration', 'submit_task', task(p, min - 1)).error).toBe('Arbitration.SolveTimeoutTooShort')
    // the bound itself is accepted: an honest task is not refused
    expect(h.run('Alice', 'Arbitration', 'submit_task', task(p, min)).error).toBeUndefined()
  })

  it('a training job larger than max_task_memory: refused', async () => {
    // a chain admitting 300 MiB per job, and a GPT whose disputes fit on chain but whose job needs ~380 MiB
    h = await Harness.create({ reference, maxTaskMemory: 300n * 1024n ** 2n })
    const p = taskProgram({ model: 'gpt', dataset: TEST_TEXT, steps: 2, checkpointEvery: 1, batchSize: 32, gpt: { mlp: 1024 } })
    const params = h.read<Params>('Arbitration', 'Params') as Params
    expect(jobMemory(programSize(validateProgram(p.program)))).toBeGreaterThan(Number(params.maxTaskMemory))
    const r = griefWith(task(p, 1_000_000))
    expect(r.solversLost).toBeLessThanOrEqual(r.submitterLost)
    expect(r.submitted).toBe(false)
    expect(h.run('Alice', 'Arbitration', 'submit_task', task(p, 1_000_000)).error).toBe('Arbitration.TaskTooLarge')
    // the same model at a batch that fits is accepted
    const small = taskProgram({ model: 'gpt', dataset: TEST_TEXT, steps: 2, checkpointEvery: 1, batchSize: 16 })
    expect(h.run('Alice', 'Arbitration', 'submit_task', task(small, 1_000_000)).error).toBeUndefined()
  })
})
