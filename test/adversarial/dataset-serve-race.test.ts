import { beforeEach, describe, expect, it } from 'vitest'
import { hexToU8a, u8aToHex } from '@polkadot/util'
import { decode, encode } from 'cborg'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import type { TaskInfo } from '../../devnet/chain/runtime/arbitration.js'
import { groupSize } from '../../protocols/commit/tensor.js'
import type { DatasetChallenge } from '../../protocols/pallet-types.js'
import * as reference from '../../protocols/reference/index.js'
import { commitAvailabilityProof, STAKE } from '../helpers/availability-task.js'
import { CUSTOM_PROGRAM, DATASET_FACTS, DATASET_SERVER } from '../helpers/custom-dataset.js'
import { assignedNames, harnessSample } from '../helpers/verdict-sample.js'
import { Harness } from '../unit/chain/harness.js'

// Anyone may serve a challenged dataset (respond_dataset checks the rows, not
// the sender), so the challenger may too, if it holds the dataset after all.
// Two plays of a verifier that could replay and would rather not:
// - the race: one row of its own lands before each of the submitter's parts.
//   Each part had to start exactly at the rows served, so the submitter's
//   parts, built from what the chain held when it read it, were all refused;
//   the challenge timed out and the challenger's reject stood: V for no
//   replay, counted toward the quorum (and the submitter's node gave up at its
//   first refused part). Now a part may start at or before the next row.
// - the dribble: it serves its own challenge itself, a renewing part (256 KiB
//   of rows) at each deadline: every part renewed the whole answer window, so
//   a serve of n parts held the task n windows (about 5,000 blocks for the
//   devnet's 45–63 MB serve), the solver's pay and every stake bound with it,
//   the rent capped at the submitter's deposit. Now a serve is held open one
//   block per DATASET_PACE_BYTES of rows past the answer window, at most.

const V = 100n * UNIT
const R = 600n * UNIT
/** the harness chain's dispute_clock, the answer window of this task (challenge_window 12) */
const ANSWER_WINDOW = 20
/** the pace a serve may hold its challenge open at: a block per 128 KiB of rows */
const PACE_BYTES = 128 * 1024
/** bytes of `rows` served rows: each row's input leaf and label leaf, whole */
const serveBytes = (rows: number): number => rows * [DATASET_FACTS.rowSize, DATASET_FACTS.classes].reduce((a, w) => a + groupSize(4 * w) * 4 * w, 0)

let h: Harness
const task = (): TaskInfo => h.read<TaskInfo>('Arbitration', 'Tasks', 0)!
const worth = (n: string): bigint => h.free(n) + h.reserved(n)
const challenge = (id: bigint): DatasetChallenge => h.read<DatasetChallenge>('Arbitration', 'DatasetChallenges', id)!
const part = (p: Uint8Array): { challengeId: number, part: string } => ({ challengeId: 0, part: u8aToHex(p) })
/** A part of exactly `n` rows of challenge 0's serve from row `from`. */
function rowsPart (from: number, n: number): Uint8Array {
  const p = decode(DATASET_SERVER.parts(challenge(0n).steps, { from, maxBytes: 1 << 30 })[0]) as { rows: unknown[] }
  p.rows = p.rows.slice(0, n)
  return encode(p)
}
type Call = [string, string, string, Record<string, unknown>]

beforeEach(async () => {
  h = await Harness.create({ reference })
  for (const [n, roles] of [['Bob', 2], ['Dave', 4], ['Eve', 4]] as const) expect(h.run(n, 'Arbitration', 'register_node', h.registerArgs(n, roles, STAKE)).error).toBeUndefined()
  expect(h.run('Alice', 'Arbitration', 'submit_task', {
    programHash: CUSTOM_PROGRAM.programHash, program: CUSTOM_PROGRAM.programHex, datasetRoot: u8aToHex(DATASET_SERVER.root), skeletonRoot: '0x' + '03'.repeat(32),
    steps: 10, checkpointEvery: 5, escrow: 1000n * UNIT, solverReward: R, verifierReward: V, verifierCount: 2, challengeWindow: 12, solveTimeout: 20
  }).error).toBeUndefined()
  h.advance(1)
  commitAvailabilityProof(h, 'Bob')
  h.advance(2)
  expect(assignedNames(h).sort()).toEqual(['Dave', 'Eve'])
  // Dave replays and accepts; Eve rejects and challenges the dataset she holds
  expect(h.run('Dave', 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: harnessSample(h, 'Dave') }).error).toBeUndefined()
  expect(h.run('Eve', 'Arbitration', 'submit_verdict', { taskId: 0, accept: false, checkedSteps: [] }).error).toBeUndefined()
  expect(h.run('Eve', 'Arbitration', 'challenge_dataset', { taskId: 0, program: CUSTOM_PROGRAM.programHex }).error).toBeUndefined()
})

/** Plays blocks until the task ends, Eve silent (she never replays); times the challenge out when due. */
function finish (): void {
  for (let i = 0; i < 300 && task().phase === 'Verifying'; i++) {
    const c = challenge(0n)
    if (c.status === 'Open' && h.number + 1 > c.deadline) expect(h.run('Dave', 'Arbitration', 'dataset_timeout', { challengeId: 0 }).error).toBeUndefined()
    else h.advance(1)
  }
  expect(task().phase).not.toBe('Verifying')
}

describe('the challenger holds the dataset and serves its own challenge', () => {
  it('one row of its own before each of the submitter\'s parts: the submitter\'s serve is still taken, and the silent challenger is not paid', () => {
    const eve = worth('Eve')
    const total = challenge(0n).total
    // the premise: enough rows for one a block through the whole answer window
    expect(total).toBeGreaterThan(ANSWER_WINDOW + 2)
    // each block: Eve's next row first, then Alice's parts, built from the rows served when she last read the challenge
    let seen = challenge(0n).served
    for (let i = 0; i < 100 && challenge(0n).status === 'Open' && h.number < challenge(0n).deadline; i++) {
      const c = challenge(0n)
      const alices: Call[] = DATASET_SERVER.parts(c.steps, { from: seen, maxBytes: 300_000 }).map(p => ['Alice', 'Arbitration', 'respond_dataset', part(p)])
      const mine: Call[] = c.served + 1 < c.total ? [['Eve', 'Arbitration', 'respond_dataset', part(rowsPart(c.served, 1))]] : []
      h.block([...mine, ...alices])
      seen = challenge(0n).served
    }
    expect(challenge(0n).status).toBe('Answered')
    finish()
    // served, she had the rows and gave no verdict: she lapses, her deposit to Alice (before: +V for nothing)
    expect(h.read<string[]>('Arbitration', 'DatasetWithheld', 0 as never) ?? []).toEqual([])
    expect(worth('Eve') - eve).toBeLessThan(0n)
  })

  it('a part repeating rows already in counts its new rows only; a part of nothing new does nothing; a part past the next row is refused', () => {
    const c = challenge(0n)
    const all = DATASET_SERVER.parts(c.steps, { maxBytes: 300_000 })
    expect(h.run('Eve', 'Arbitration', 'respond_dataset', part(rowsPart(0, 1))).error).toBeUndefined()
    expect(challenge(0n).served).toBe(1)
    expect(h.run('Alice', 'Arbitration', 'respond_dataset', part(all[0])).error).toBeUndefined()
    const after = challenge(0n).served
    expect(after).toBeGreaterThan(1)
    // the event holds the new rows only, from row 1: a part repeating rows puts no more in an event than it adds
    type Served = { Arbitration?: { DatasetServed?: { from: number, rows: number, part: string } } }
    const served = h.lastEvents.map(e => (e.event as Served).Arbitration?.DatasetServed).find(x => x !== undefined)!
    const emitted = decode(hexToU8a(served.part)) as { from: number, rows: unknown[] }
    expect([Number(served.from), emitted.from, emitted.rows.length]).toEqual([1, 1, after - 1])
    // the same part again: nothing new, nothing recorded
    const r = h.run('Alice', 'Arbitration', 'respond_dataset', part(all[0]))
    expect(r.error).toBeUndefined()
    expect(r.events).not.toContain('Arbitration.DatasetServed')
    expect(challenge(0n).served).toBe(after)
    // a gap is refused
    expect(h.run('Alice', 'Arbitration', 'respond_dataset', part(rowsPart(after + 1, 4))).error).toBe('Arbitration.InvalidDatasetServe')
    for (const p of all.slice(1)) expect(h.run('Alice', 'Arbitration', 'respond_dataset', part(p)).error).toBeUndefined()
    expect(challenge(0n).status).toBe('Answered')
  })

  it('dribbled a renewing part at each deadline: the task is held the answer window and a block per 128 KiB of rows at most', () => {
    const c0 = challenge(0n)
    /** rows of 256 KiB: a part that renewed the whole answer window */
    const renewing = Math.ceil(256 * 1024 / serveBytes(1)) + 1
    // the premise: a serve of several such parts
    expect(c0.total).toBeGreaterThan(2 * renewing)
    for (let i = 0; i < 500 && challenge(0n).status === 'Open'; i++) {
      const c = challenge(0n)
      if (h.number + 1 < c.deadline) { h.advance(1); continue }
      expect(h.run('Eve', 'Arbitration', 'respond_dataset', part(rowsPart(c.served, Math.min(renewing, c.total - c.served)))).error).toBeUndefined()
    }
    expect(challenge(0n).status).toBe('Answered')
    const bound = c0.openedAt + 1 + ANSWER_WINDOW + Math.ceil(serveBytes(c0.total) / PACE_BYTES)
    // before: a window per part, 21 blocks × 4 parts
    expect(h.number).toBeLessThanOrEqual(bound)
  })
})
