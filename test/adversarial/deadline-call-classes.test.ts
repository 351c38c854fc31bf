import { u8aToHex } from '@polkadot/util'
import { beforeEach, describe, expect, it } from 'vitest'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import type { TaskInfo } from '../../devnet/chain/runtime/arbitration.js'
import { Overlay } from '../../devnet/chain/runtime/state.js'
import { classify } from '../../devnet/chain/runtime/tx-class.js'
import type { PlainCall, ValidTx } from '../../devnet/chain/runtime/transaction.js'
import type { DatasetChallenge } from '../../protocols/pallet-types.js'
import * as reference from '../../protocols/reference/index.js'
import { challengeableCheckpoints } from '../../protocols/verification/checkpoint-steps.js'
import { commitAvailabilityProof, STAKE } from '../helpers/availability-task.js'
import { CUSTOM_PROGRAM, DATASET_SERVER } from '../helpers/custom-dataset.js'
import { assignedNames, harnessSample } from '../helpers/verdict-sample.js'
import { Harness } from '../unit/chain/harness.js'

// Block stuffing against the calls added after the pool's deadline rule
// (docs/pallet-interface.md "Pool and block space: deadline calls first").
// Without fees anyone can keep the pool full; only an operational call makes
// room in it and goes first in a block (test/adversarial/block-stuffing.test.ts
// shows the flood and the rule). challenge_dataset, respond_dataset,
// dataset_timeout, challenge_availability_many and the commit-reveal calls
// were classed normal: a flood kept up until a deadline kept them out. A
// solver's puppet drawn as verifier challenges the dataset and floods until
// the answer window ends: the honest submitter's serve never lands, the
// puppet's reject stands unreplayed and counts toward the quorum; a flood in
// an honest verifier's backing grace keeps its challenge_dataset (or its
// challenge_availability_many) out: its reject is bare, it lapses, −(B + R).
// The test fails if any of these calls, about to succeed, is classed normal,
// or if a serve part of rows already in (which succeeds and does nothing, so
// any number of them would be free) is classed operational.

let h: Harness
const task = (): TaskInfo => h.read<TaskInfo>('Arbitration', 'Tasks', 0)!
const challenge = (id: bigint): DatasetChallenge => h.read<DatasetChallenge>('Arbitration', 'DatasetChallenges', id)!

/** The class the pool gives `who`'s call in the next block (its nonce the next: nothing of its own queued before it). */
function classOf (who: string, name: string, args: Record<string, unknown>): string {
  const call: PlainCall = { pallet: 'Arbitration', name, args: args as PlainCall['args'] }
  const tx: ValidTx = { hash: '0x', sender: h.accounts[who], nonce: 0, bytes: new Uint8Array(), call }
  return classify(h.rt, new Overlay({ get: k => h.state.get(k) }), [], tx, { number: h.number + 1, genesisHash: h.genesisHash, blockHash: () => h.genesisHash })
}

beforeEach(async () => {
  h = await Harness.create({ reference })
  for (const [n, roles] of [['Bob', 2], ['Dave', 4], ['Eve', 4], ['Ferdie', 8]] as const) expect(h.run(n, 'Arbitration', 'register_node', h.registerArgs(n, roles, STAKE)).error).toBeUndefined()
  expect(h.run('Alice', 'Arbitration', 'submit_task', {
    programHash: CUSTOM_PROGRAM.programHash, program: CUSTOM_PROGRAM.programHex, datasetRoot: u8aToHex(DATASET_SERVER.root), skeletonRoot: '0x' + '03'.repeat(32),
    steps: 10, checkpointEvery: 5, escrow: 1000n * UNIT, solverReward: 600n * UNIT, verifierReward: 100n * UNIT,
    verifierCount: 2, challengeWindow: 12, solveTimeout: 20
  }).error).toBeUndefined()
  h.advance(1)
  commitAvailabilityProof(h, 'Bob')
  h.advance(2)
  expect(assignedNames(h).sort()).toEqual(['Dave', 'Eve'])
})

describe('deadline calls added since the pool rule are operational when they would succeed', () => {
  it('a dataset challenge, its serve (a part with new rows only) and its timeout', () => {
    for (const n of ['Dave', 'Eve']) expect(h.run(n, 'Arbitration', 'submit_verdict', { taskId: 0, accept: false, checkedSteps: [] }).error).toBeUndefined()
    // the verifiers' evidence for their rejects, against their backing grace
    expect(classOf('Dave', 'challenge_dataset', { taskId: 0, program: CUSTOM_PROGRAM.programHex })).toBe('operational')
    for (const n of ['Dave', 'Eve']) expect(h.run(n, 'Arbitration', 'challenge_dataset', { taskId: 0, program: CUSTOM_PROGRAM.programHex }).error).toBeUndefined()
    // the submitter's serve of Dave's rows, against the answer window
    const parts = [...DATASET_SERVER.parts(challenge(0n).steps, { maxBytes: 300_000 })].map(p => u8aToHex(p))
    expect(parts.length).toBeGreaterThan(1)
    expect(classOf('Alice', 'respond_dataset', { challengeId: 0n, part: parts[0] })).toBe('operational')
    expect(h.run('Alice', 'Arbitration', 'respond_dataset', { challengeId: 0n, part: parts[0] }).error).toBeUndefined()
    // the same part again succeeds and adds nothing: it must not go ahead of anyone, nor make room in a full pool
    expect(h.run('Alice', 'Arbitration', 'respond_dataset', { challengeId: 0n, part: parts[0] }).error).toBeUndefined()
    expect(classOf('Alice', 'respond_dataset', { challengeId: 0n, part: parts[0] })).toBe('normal')
    expect(classOf('Alice', 'respond_dataset', { challengeId: 0n, part: parts[1] })).toBe('operational')
    // Eve's challenge unanswered past its deadline: anyone's timeout (her reject's standing rides on it)
    for (let i = 0; i < 200 && h.number <= challenge(1n).deadline; i++) h.advance(1)
    expect(challenge(1n).status).toBe('Open')
    expect(classOf('Ferdie', 'dataset_timeout', { challengeId: 1n })).toBe('operational')
    expect(task().phase).toBe('Verifying')
  })

  it('the checkpoints a rejecting verifier\'s sample needs, challenged at once; a challenge commitment', () => {
    expect(h.run('Dave', 'Arbitration', 'submit_verdict', { taskId: 0, accept: false, checkedSteps: [] }).error).toBeUndefined()
    const needed = challengeableCheckpoints(harnessSample(h, 'Dave').map(u => u + 1), 10, 5)
    expect(classOf('Dave', 'challenge_availability_many', { taskId: 0, checkpointSteps: needed })).toBe('operational')
    expect(classOf('Ferdie', 'commit_challenge', { taskId: 0, hash: '0x' + '42'.repeat(32) })).toBe('operational')
    // a call that would fail stays normal: it cannot jump the queue
    expect(classOf('Bob', 'challenge_dataset', { taskId: 0, program: CUSTOM_PROGRAM.programHex })).toBe('normal')
  })
})
