import { beforeEach, describe, expect, it } from 'vitest'
import { hexToU8a, u8aToHex } from '@polkadot/util'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import type { TaskInfo } from '../../devnet/chain/runtime/arbitration.js'
import { DatasetServer, datasetServeSteps, servedBatches } from '../../protocols/availability/index.js'
import { batchIndices } from '../../protocols/data/order.js'
import type { DatasetChallenge } from '../../protocols/pallet-types.js'
import * as reference from '../../protocols/reference/index.js'
import { commitAvailabilityProof, STAKE } from '../helpers/availability-task.js'
import { CUSTOM_PROGRAM, DATASET_FACTS, DATASET_ROWS, DATASET_SERVER } from '../helpers/custom-dataset.js'
import { taskProgram } from '../helpers/program.js'
import { assignedNames, harnessAssignments, harnessSample } from '../helpers/verdict-sample.js'
import { Harness } from '../unit/chain/harness.js'

// A withheld dataset (docs/economics.md "A withheld dataset"). The submitter
// posts a task on a custom IDX dataset, commits its true dataset_root, and
// hands the dataset to its solver only (an honest solver it wants trained for
// free, or its puppet): a drawn verifier fetches the dataset from the
// submitter's announcement, gets nothing, and cannot replay. Before, it had no
// evidence to back a reject with: silent or a bare reject, its slot lapsed,
// −(B + R), and the task ended Unverified (the escrow back: the honest solver
// trained for nothing) or on a puppet's accept. Now it rejects and challenges
// the submitter to serve, on chain, the rows of the batches its sample replays
// (challenge_dataset): served, it replays from the chain's rows and votes;
// unserved, its reject stands (V), it never lapses, and the solver is paid
// when the task is verified. Each test fails if an honest party loses.

const V = 100n * UNIT
const R = 600n * UNIT
const TRAIN = DATASET_FACTS.trainSize
const FACTS = DATASET_FACTS
const ROWS = DATASET_ROWS
const SERVER = DATASET_SERVER
const PROGRAM = CUSTOM_PROGRAM

let h: Harness
const task = (): TaskInfo => h.read<TaskInfo>('Arbitration', 'Tasks', 0)!
const worth = (n: string): bigint => h.free(n) + h.reserved(n)
const challenge = (id: bigint): DatasetChallenge => h.read<DatasetChallenge>('Arbitration', 'DatasetChallenges', id)!
const openChallenges = (): bigint[] => h.read<bigint[]>('Arbitration', 'OpenDatasetChallenges', 0) ?? []
const hasVerdict = (n: string): boolean => task().verdicts.some(v => v.verifier === h.accounts[n])
const lapsed = (): number => harnessAssignments(h)!.verifiers.filter(v => v.status === 'Lapsed').length
/** the 0-based steps whose batches `n`'s required sample replays (its units: 0-based → 1-based steps) */
const neededSteps = (n: string): number[] => datasetServeSteps(harnessSample(h, n).map(u => u + 1), 10, 5)

beforeEach(async () => {
  h = await Harness.create({ reference })
  for (const [n, roles] of [['Bob', 2], ['Dave', 4], ['Eve', 4]] as const) expect(h.run(n, 'Arbitration', 'register_node', h.registerArgs(n, roles, STAKE)).error).toBeUndefined()
  // Alice's task on her custom dataset, with its true root: the chain can check every row she serves
  expect(h.run('Alice', 'Arbitration', 'submit_task', {
    programHash: PROGRAM.programHash, program: PROGRAM.programHex, datasetRoot: u8aToHex(SERVER.root), skeletonRoot: '0x' + '03'.repeat(32), steps: 10, checkpointEvery: 5,
    escrow: 1000n * UNIT, solverReward: R, verifierReward: V, verifierCount: 2, challengeWindow: 12, solveTimeout: 20
  }).error).toBeUndefined()
  h.advance(1)
  expect(task().solver).toBe(h.accounts.Bob)
  commitAvailabilityProof(h, 'Bob')
  h.advance(2)
  expect(assignedNames(h).sort()).toEqual(['Dave', 'Eve'])
})

/** `n` challenges the dataset; the error, if refused (a chain without the call: its message, so the play goes on as it did there) */
function tryChallenge (n: string): string | undefined {
  try { return h.run(n, 'Arbitration', 'challenge_dataset', { taskId: 0, program: PROGRAM.programHex }).error } catch (e) { return (e as Error).message }
}

/** Rows from the chain's events: the batches `n` replays, each the dataset's rows of that step's batch, bit for bit. */
function checkServedRows (n: string, parts: Uint8Array[]): void {
  const steps = neededSteps(n)
  const batches = servedBatches({ datasetRoot: SERVER.root, facts: FACTS, steps }, parts)
  for (const s of steps) {
    const rows = batchIndices(FACTS.seed, TRAIN, FACTS.batchSize, s)
    const want = new Float32Array(FACTS.batchSize * 784)
    rows.forEach((r, i) => want.set(ROWS.x.subarray(r * 784, (r + 1) * 784), i * 784))
    expect(batches.get(s)!.x).toEqual(want)
  }
}

/**
 * Plays the task to its end. The verifiers in `withheldFrom` cannot fetch the dataset: each rejects
 * and challenges it (challenge_dataset); once served (its verdict reopened) it replays from the rows
 * on chain and accepts, unless `silentAfterServe`. The others accept. Alice serves each challenge
 * in its answer window's last block if `serve`, else anyone times it out.
 */
function play (o: { withheldFrom: string[], serve: boolean, silentAfterServe?: boolean }): { events: string[], challengeErrors: Array<string | undefined> } {
  const events: string[] = []
  const challengeErrors: Array<string | undefined> = []
  const parts = new Map<string, Uint8Array[]>()
  /** the challenges opened (ids from 0; a chain without the call opens none) */
  const ids: bigint[] = []
  for (const n of ['Dave', 'Eve']) {
    if (o.withheldFrom.includes(n)) {
      expect(h.run(n, 'Arbitration', 'submit_verdict', { taskId: 0, accept: false, checkedSteps: [] }).error).toBeUndefined()
      const error = tryChallenge(n)
      challengeErrors.push(error)
      if (error === undefined) ids.push(BigInt(ids.length))
    } else expect(h.run(n, 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: harnessSample(h, n) }).error).toBeUndefined()
  }
  for (let i = 0; i < 200 && task().phase === 'Verifying'; i++) {
    for (const id of ids.filter(i => challenge(i).status === 'Open')) {
      const c = challenge(id)
      const name = Object.entries(h.accounts).find(([, a]) => a === c.challenger)![0]
      if (o.serve && h.number + 1 === c.deadline) {
        const emitted: Uint8Array[] = []
        for (const p of SERVER.parts(c.steps, { maxBytes: 300_000 })) {
          expect(h.run('Alice', 'Arbitration', 'respond_dataset', { challengeId: id, part: u8aToHex(p) }).error).toBeUndefined()
          for (const e of h.lastEvents) {
            const s = (e.event as { Arbitration?: { DatasetServed?: { part: string } } }).Arbitration?.DatasetServed
            if (s !== undefined) emitted.push(hexToU8a(s.part))
          }
        }
        parts.set(name, emitted)
      } else if (h.number + 1 > c.deadline) expect(h.run('Eve', 'Arbitration', 'dataset_timeout', { challengeId: id }).error).toBeUndefined()
    }
    for (const [n, p] of parts) {
      if (hasVerdict(n) || o.silentAfterServe === true || !assignedNames(h).includes(n)) continue
      checkServedRows(n, p)
      expect(h.run(n, 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: harnessSample(h, n) }).error).toBeUndefined()
    }
    events.push(...h.advance(1))
  }
  return { events, challengeErrors }
}

describe('a submitter withholds its custom dataset from the drawn verifiers', () => {
  it('from both, the solver honest: unserved, both rejects stand; the solver is paid R, each verifier V, nobody lapses', () => {
    const before = { Bob: worth('Bob'), Dave: worth('Dave'), Eve: worth('Eve'), Alice: worth('Alice') }
    const { events, challengeErrors } = play({ withheldFrom: ['Dave', 'Eve'], serve: false })
    expect(events).not.toContain('Arbitration.AssignmentLapsed')
    expect(new Set(h.read<string[]>('Arbitration', 'DatasetWithheld', 0 as never))).toEqual(new Set([h.accounts.Dave, h.accounts.Eve]))
    expect(task().phase).toBe('Settled')
    expect(worth('Bob') - before.Bob).toBe(R)
    expect(worth('Dave') - before.Dave).toBe(V)
    expect(worth('Eve') - before.Eve).toBe(V)
    // the submitter paid what a verified task pays (and the rent): no free training
    expect(before.Alice - worth('Alice')).toBeGreaterThanOrEqual(R + 2n * V)
    expect(h.reserved('Eve')).toBe(STAKE)
    expect(challengeErrors).toEqual([undefined, undefined])
  })

  it('from the honest verifier only, the solver and Dave its puppets: unserved, Eve\'s reject stands and is paid V, the coalition gains nothing', () => {
    const coalition = (): bigint => ['Alice', 'Bob', 'Dave'].reduce((s, n) => s + worth(n), 0n)
    const start = coalition()
    const eve = worth('Eve')
    const { events } = play({ withheldFrom: ['Eve'], serve: false })
    expect(events).not.toContain('Arbitration.AssignmentLapsed')
    expect(task().phase).toBe('Settled')
    expect(worth('Eve') - eve).toBe(V)
    expect(coalition() - start).toBeLessThanOrEqual(-V)
    expect(lapsed()).toBe(0)
  })

  it('served in the answer window\'s last block: the verifier replays from the rows on chain, accepts and is paid V, its deposit back', () => {
    const eve = worth('Eve')
    const { events } = play({ withheldFrom: ['Eve'], serve: true })
    expect(events).not.toContain('Arbitration.AssignmentLapsed')
    expect(events).toContain('Arbitration.DatasetDepositSettled')
    expect(task().phase).toBe('Settled')
    expect(worth('Eve') - eve).toBe(V)
    expect(h.reserved('Eve')).toBe(STAKE)
  })

  it('a verifier that challenges, is served, and stays silent loses B + R and its deposit to the submitter', () => {
    const eve = worth('Eve')
    const { events } = play({ withheldFrom: ['Eve'], serve: true, silentAfterServe: true })
    expect(events).toContain('Arbitration.AssignmentLapsed')
    expect(eve - worth('Eve')).toBe(100n * UNIT + R + 100n * UNIT)
  })
})

describe('what the chain takes', () => {
  it('an accepting verifier, an unassigned account, other program bytes, a second challenge: refused', () => {
    expect(h.run('Dave', 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: harnessSample(h, 'Dave') }).error).toBeUndefined()
    expect(h.run('Dave', 'Arbitration', 'challenge_dataset', { taskId: 0, program: PROGRAM.programHex }).error).toBe('Arbitration.ChallengeAfterAccept')
    expect(h.run('Ferdie', 'Arbitration', 'register_node', h.registerArgs('Ferdie', 4, STAKE)).error).toBeUndefined()
    expect(h.run('Ferdie', 'Arbitration', 'challenge_dataset', { taskId: 0, program: PROGRAM.programHex }).error).toBe('Arbitration.NotAssigned')
    expect(h.run('Eve', 'Arbitration', 'submit_verdict', { taskId: 0, accept: false, checkedSteps: [] }).error).toBeUndefined()
    expect(h.run('Eve', 'Arbitration', 'challenge_dataset', { taskId: 0, program: taskProgram({ steps: 10, checkpointEvery: 5 }).programHex }).error).toBe('Arbitration.ProgramHashMismatch')
    expect(h.run('Eve', 'Arbitration', 'challenge_dataset', { taskId: 0, program: PROGRAM.programHex }).error).toBeUndefined()
    expect(h.run('Eve', 'Arbitration', 'challenge_dataset', { taskId: 0, program: PROGRAM.programHex }).error).toBe('Arbitration.DatasetAlreadyChallenged')
  })

  it('the serve is bounded by the sample and checked row by row: other rows are refused, whoever posts them', () => {
    expect(h.run('Eve', 'Arbitration', 'submit_verdict', { taskId: 0, accept: false, checkedSteps: [] }).error).toBeUndefined()
    expect(h.run('Eve', 'Arbitration', 'challenge_dataset', { taskId: 0, program: PROGRAM.programHex }).error).toBeUndefined()
    const c = challenge(openChallenges()[0])
    expect(c.steps).toEqual(neededSteps('Eve'))
    expect(c.total).toBe(c.steps.length * FACTS.batchSize)
    // a part for other steps (the rows of another batch) does not verify at the rows the sample names
    const other = c.steps.map(s => s + 1)
    expect(h.run('Alice', 'Arbitration', 'respond_dataset', { challengeId: 0, part: u8aToHex(SERVER.parts(other)[0]) }).error).toBe('Arbitration.DatasetProofInvalid')
    // rows of another dataset: its roots do not open dataset_root
    const fake = new DatasetServer(FACTS, ROWS.x.map(v => 1 - v), ROWS.y)
    expect(h.run('Alice', 'Arbitration', 'respond_dataset', { challengeId: 0, part: u8aToHex(fake.parts(c.steps)[0]) }).error).toBe('Arbitration.DatasetProofInvalid')
    // a part that does not start at the next row
    expect(h.run('Alice', 'Arbitration', 'respond_dataset', { challengeId: 0, part: u8aToHex(SERVER.parts(c.steps, { from: FACTS.batchSize })[0]) }).error).toBe('Arbitration.InvalidDatasetServe')
    // the rows are checked, not who posts them: the solver, which trained on them, may serve for the submitter
    expect(h.run('Bob', 'Arbitration', 'respond_dataset', { challengeId: 0, part: u8aToHex(SERVER.parts(c.steps)[0]) }).error).toBeUndefined()
    expect(challenge(0n).status).toBe('Answered')
  })
})
