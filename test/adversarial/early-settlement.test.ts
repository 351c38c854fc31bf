import { beforeEach, describe, expect, it } from 'vitest'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import * as reference from '../../protocols/reference/index.js'
import { harnessSample } from '../helpers/verdict-sample.js'
import { minWindow, taskProgram } from '../helpers/program.js'
import { Harness } from '../unit/chain/harness.js'
import { taskOf } from '../unit/dispute/fixture.js'

// A solver with colluding verifiers wants its task paid before anyone can
// finish replaying it: the accepts of a full quorum arrive the block after
// the commitment. The challenge window is the whistleblower's time (docs/
// operators-guide.md, "Timing parameters"): the task must not settle before
// it ends, and a dispute opened in its last block must still be heard. This
// fails if a quorum of verdicts alone settles the task early.

const H = (b: number): string => '0x' + b.toString(16).padStart(2, '0').repeat(32)
const STAKE = 2000n * UNIT
const WINDOW = minWindow(taskProgram({ steps: 100, checkpointEvery: 10 }), 2)

describe('a verdict quorum does not cut the whistleblower\'s window short', () => {
  let h: Harness
  const program = taskProgram({ steps: 100, checkpointEvery: 10 })

  beforeEach(async () => {
    h = await Harness.create({ reference })
    expect(h.run('Alice', 'Arbitration', 'register_node', h.registerArgs('Alice', 1, STAKE, 'Alice')).error).toBeUndefined()
    expect(h.run('Bob', 'Arbitration', 'register_node', h.registerArgs('Bob', 2, STAKE, 'Bob')).error).toBeUndefined()
    for (const v of ['Charlie', 'Dave']) expect(h.run(v, 'Arbitration', 'register_node', h.registerArgs(v, 4, STAKE, v)).error).toBeUndefined()
    expect(h.run('Ferdie', 'Arbitration', 'register_node', h.registerArgs('Ferdie', 8, STAKE, 'Ferdie')).error).toBeUndefined()
    expect(h.run('Alice', 'Arbitration', 'submit_task', { programHash: program.programHash, program: program.programHex, datasetRoot: H(2), skeletonRoot: H(3), steps: 100, checkpointEvery: 10, escrow: 1000n * UNIT, solverReward: 600n * UNIT, verifierReward: 100n * UNIT, verifierCount: 2, challengeWindow: WINDOW, solveTimeout: 20 }).error).toBeUndefined()
    h.advance(1)
    expect(taskOf(h).solver).toBe(h.accounts.Bob)
    expect(h.run('Bob', 'Arbitration', 'commit_proof', { taskId: 0, proofRoot: H(9), finalStateRoot: H(8), stepCount: 100, checkpoints: [] }).error).toBeUndefined()
    h.advance(1)
    // the colluders' quorum, at once
    for (const v of ['Charlie', 'Dave']) expect(h.run(v, 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: harnessSample(h, v) }).error).toBeUndefined()
  })

  it('the task stays open until the window ends, and pays nothing before', () => {
    const end = taskOf(h).challengeEnd
    const bob = h.free('Bob')
    const events: string[] = []
    while (h.number < end) events.push(...h.advance(1))
    expect(taskOf(h).phase).toBe('Verifying')
    expect(events).not.toContain('Arbitration.TaskSettled')
    expect(h.free('Bob')).toBe(bob)
  })

  it('a whistleblower disputing in the window\'s last block is heard: the task waits for the dispute', () => {
    const end = taskOf(h).challengeEnd
    while (h.number < end - 1) h.advance(1)
    // the next block is the window's last: the dispute goes in it
    expect(h.run('Ferdie', 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: 42 }).error).toBeUndefined()
    expect(h.number).toBe(end)
    const events: string[] = []
    for (let i = 0; i < 5; i++) events.push(...h.advance(1))
    expect(taskOf(h).openDisputes).toBe(1)
    expect(taskOf(h).phase).toBe('Verifying')
    expect(events).not.toContain('Arbitration.TaskSettled')
  })
})
