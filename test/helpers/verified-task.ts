import { expect } from 'vitest'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import * as reference from '../../protocols/reference/index.js'
import { minWindow, taskProgram } from './program.js'
import { harnessSample } from './verdict-sample.js'
import { Harness } from '../unit/chain/harness.js'
import { taskOf } from '../unit/dispute/fixture.js'

// A task verified on the in-process runtime, its challenge window still
// running: Alice submitted it, Bob solved it and committed a proof the chain
// cannot tell from one with a forced error, Dave (its one verifier) accepted.

const H = (b: number): string => '0x' + b.toString(16).padStart(2, '0').repeat(32)
export const VERIFIED_STAKE = 2000n * UNIT
export const VERIFIED_REWARD = 600n * UNIT
const program = taskProgram({ steps: 100, checkpointEvery: 10 })
/** its challenge window: the shortest the chain takes for one verifier */
export const VERIFIED_WINDOW = minWindow(program, 1)

/** `divergedAt`: Bob commits a diverged proof of that many steps instead (chosen once he is selected, e.g. from his draw). */
export async function verifiedTask (forcedErrorPpm: number, o: { divergedAt?: (h: Harness) => number } = {}): Promise<Harness> {
  const h = await Harness.create({ reference, forcedErrorPpm })
  expect(h.run('Alice', 'Arbitration', 'register_node', h.registerArgs('Alice', 1, VERIFIED_STAKE)).error).toBeUndefined()
  expect(h.run('Bob', 'Arbitration', 'register_node', h.registerArgs('Bob', 2, VERIFIED_STAKE)).error).toBeUndefined()
  expect(h.run('Dave', 'Arbitration', 'register_node', h.registerArgs('Dave', 4, VERIFIED_STAKE)).error).toBeUndefined()
  expect(h.run('Alice', 'Arbitration', 'submit_task', {
    programHash: program.programHash, program: program.programHex, datasetRoot: H(2), skeletonRoot: H(3), steps: 100, checkpointEvery: 10,
    escrow: 1000n * UNIT, solverReward: VERIFIED_REWARD, verifierReward: 100n * UNIT, verifierCount: 1, challengeWindow: VERIFIED_WINDOW, solveTimeout: 20
  }).error).toBeUndefined()
  h.advance(1)
  expect(taskOf(h).solver).toBe(h.accounts.Bob)
  const k = o.divergedAt?.(h)
  if (k === undefined) expect(h.run('Bob', 'Arbitration', 'commit_proof', { taskId: 0, proofRoot: H(9), finalStateRoot: H(8), stepCount: 100, checkpoints: [] }).error).toBeUndefined()
  else expect(h.run('Bob', 'Arbitration', 'commit_diverged', { taskId: 0, proofRoot: H(9), finalStateRoot: H(8), stepCount: k, checkpoints: [], entry: 0, flat: 0 }).error).toBeUndefined()
  // the randomness block, then the block that draws the verifier from its hash
  h.advance(2)
  // an accept of a diverged proof lists its last step (unit k) besides the sample
  const checked = [...new Set([...harnessSample(h, 'Dave'), ...(k === undefined ? [] : [k])])]
  expect(h.run('Dave', 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: checked }).error).toBeUndefined()
  return h
}
