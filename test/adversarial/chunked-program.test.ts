import { beforeEach, describe, expect, it } from 'vitest'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import type { TaskInfo } from '../../devnet/chain/runtime/arbitration.js'
import { admissibility, stateIsChunked, validateProgram } from '../../protocols/program/index.js'
import * as reference from '../../protocols/reference/index.js'
import { minWindow, taskProgram, type ProgramArgs } from '../helpers/program.js'
import { Harness } from '../unit/chain/harness.js'

// Attack: a submitter (or a solver colluding with one) posts a task whose
// program asks for chunked state roots before the chain and its nodes can
// judge a dispute over them (the chunks answer, the chunk-tree walk, the chunk
// serve: docs/training.md "Chunked roots: design", steps 3–5). A solver then
// commits chunked roots no honest challenger can open on chain, and wins every
// dispute by the challenger's timeout. The chain must refuse the program at
// submit_task while this build does not judge the scheme; the same program
// without the field is posted.

const H = (b: number): string => '0x' + b.toString(16).padStart(2, '0').repeat(32)

let h: Harness
const submit = (p: ProgramArgs): string | undefined => h.run('Alice', 'Arbitration', 'submit_task', {
  programHash: p.programHash, program: p.programHex, datasetRoot: H(2), skeletonRoot: H(3), steps: 100, checkpointEvery: 10,
  escrow: 1000n * UNIT, solverReward: 600n * UNIT, verifierReward: 100n * UNIT, verifierCount: 2, challengeWindow: minWindow(p, 2), solveTimeout: 1000
}).error

describe('a chunked-state program on a chain that does not judge chunked roots', () => {
  beforeEach(async () => {
    h = await Harness.create({ reference })
    expect(h.run('Bob', 'Arbitration', 'register_node', h.registerArgs('Bob', 2, 2000n * UNIT)).error).toBeUndefined()
    for (const n of ['Dave', 'Eve']) expect(h.run(n, 'Arbitration', 'register_node', h.registerArgs(n, 4, 2000n * UNIT)).error).toBeUndefined()
  })

  for (const optimizer of ['sgd', 'adam'] as const) {
    it(`is refused at submit_task (${optimizer}): no task, no escrow, no solver`, () => {
      const chunked = taskProgram({ optimizer, stateCommitment: 'chunked' })
      expect(stateIsChunked(chunked.program)).toBe(true)
      // a valid program, otherwise admissible: only the scheme keeps it off this chain
      expect(admissibility(validateProgram(chunked.program), reference.supportsElement, true).ok).toBe(true)
      expect(submit(chunked)).toBe('Arbitration.ProgramNotVerifiable')
      expect(h.read<TaskInfo>('Arbitration', 'Tasks', 0)).toBeUndefined()
      expect(h.reserved('Alice')).toBe(0n)
      expect(h.advance(3)).not.toContain('Arbitration.SolverSelected')
      // the control: the same program under row + column roots is posted and a solver selected
      const plain = taskProgram({ optimizer })
      expect(stateIsChunked(plain.program)).toBe(false)
      expect(submit(plain)).toBeUndefined()
      expect(h.advance(1)).toContain('Arbitration.SolverSelected')
    })
  }
})
