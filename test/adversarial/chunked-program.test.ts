import { beforeEach, describe, expect, it } from 'vitest'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import type { TaskInfo } from '../../devnet/chain/runtime/arbitration.js'
import { admissibility, stateIsChunked, validateProgram } from '../../protocols/program/index.js'
import * as reference from '../../protocols/reference/index.js'
import { minWindow, taskProgram, type ProgramArgs } from '../helpers/program.js'
import { Harness } from '../unit/chain/harness.js'

// A chunked-state program on a chain that judges chunked roots (docs/training.md
// "Chunked roots: design"): it is posted, and submit_task records its scheme
// (TaskStateCommitment), which respond_availability checks a serve under. Attack:
// a solver of a chunked task serving row + column parts, or of a row + column
// task chunked ones, as if the part chose the scheme; the chain takes it from
// the task (test/adversarial/chunked-serve.test.ts). A build whose chain does
// not judge the scheme refuses the program (admissibility's switch,
// CHUNKED_STATE_JUDGED): a solver would commit chunked roots no challenger
// could open on chain, and win every dispute by the challenger's timeout.

const H = (b: number): string => '0x' + b.toString(16).padStart(2, '0').repeat(32)

let h: Harness
const submit = (p: ProgramArgs): string | undefined => h.run('Alice', 'Arbitration', 'submit_task', {
  programHash: p.programHash, program: p.programHex, datasetRoot: H(2), skeletonRoot: H(3), steps: 100, checkpointEvery: 10,
  escrow: 1000n * UNIT, solverReward: 600n * UNIT, verifierReward: 100n * UNIT, verifierCount: 2, challengeWindow: minWindow(p, 2), solveTimeout: 1000
}).error

describe('a chunked-state program on a chain that judges chunked roots', () => {
  beforeEach(async () => {
    h = await Harness.create({ reference })
    expect(h.run('Bob', 'Arbitration', 'register_node', h.registerArgs('Bob', 2, 2000n * UNIT)).error).toBeUndefined()
    for (const n of ['Dave', 'Eve']) expect(h.run(n, 'Arbitration', 'register_node', h.registerArgs(n, 4, 2000n * UNIT)).error).toBeUndefined()
  })

  for (const optimizer of ['sgd', 'adam'] as const) {
    it(`is posted and its scheme recorded (${optimizer}); the same program without the field records none`, () => {
      const chunked = taskProgram({ optimizer, stateCommitment: 'chunked' })
      expect(stateIsChunked(chunked.program)).toBe(true)
      // a chain that did not judge the scheme would refuse it (the switch, tested off)
      expect(admissibility(validateProgram(chunked.program), reference.supportsElement, false).ok).toBe(false)
      expect(submit(chunked)).toBeUndefined()
      expect(h.read('Arbitration', 'TaskStateCommitment', 0)).toBe(1)
      expect(h.advance(1)).toContain('Arbitration.SolverSelected')
      const plain = taskProgram({ optimizer })
      expect(stateIsChunked(plain.program)).toBe(false)
      expect(submit(plain)).toBeUndefined()
      expect((h.read<TaskInfo>('Arbitration', 'Tasks', 1) as TaskInfo).programHash).toBe(plain.programHash)
      expect(h.read('Arbitration', 'TaskStateCommitment', 1)).toBeUndefined()
    })
  }
})
