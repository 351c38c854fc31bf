import { beforeEach, describe, expect, it } from 'vitest'
import { hexToU8a, u8aToHex } from '@polkadot/util'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import type { TaskInfo } from '../../devnet/chain/runtime/arbitration.js'
import type { AvailabilityChallenge } from '../../devnet/chain/runtime/availability.js'
import { assembleServe } from '../../protocols/availability/index.js'
import { toHex } from '../../protocols/commit/merkle.js'
import { stateRoot } from '../../protocols/commit/state.js'
import * as reference from '../../protocols/reference/index.js'
import { withheldRunCheckpoints } from '../../protocols/verification/chain-run.js'
import { challengeableCheckpoints, publishedCheckpointsError } from '../../protocols/verification/checkpoint-steps.js'
import { checkpointLoads } from '../../protocols/verification/sample.js'
import { buildServeParts } from '../../protocols/availability/index.js'
import { merkleRoot, sha256 } from '../../protocols/commit/merkle.js'
import { STAKE, STATE, serveOnChain } from '../helpers/availability-task.js'
import { minWindow, taskProgram } from '../helpers/program.js'
import { assignedNames, harnessAssignments, harnessSample } from '../helpers/verdict-sample.js'
import { Harness } from '../unit/chain/harness.js'

// A run index (and proof.json) whose checkpoint list is not the task's. The
// verifier's replay loads the latest *listed* checkpoint before each sampled
// step (checkpointLoads), but the chain lets an assigned verifier challenge
// only the task's checkpoints its required sample needs (every
// checkpoint_every steps and the last: NotCheckpointStep, CheckpointNotNeeded).
// A puppet solver (the submitter's) publishes its run with an extra checkpoint
// at a step that is no checkpoint step, just before the honest verifier's first
// sampled step, and withholds it. Before, the honest verifier's node fetched
// that checkpoint, could not, and challenged it; the chain refused the
// challenge, its reject rested on nothing and it lapsed, −(B + R), while the
// coalition lost nothing (the task ended for its submitter with the escrow
// back). A list leaving out the task's checkpoints (only 0 and the last) made
// the replay run from 0, past what the challenge window allows for. Now a
// published list other than the task's makes the run unusable: the verifier
// replays from the chain (withheldRunCheckpoints), challenging the task's own
// checkpoints its replay loads, which the solver must serve or be slashed.

const V = 100n * UNIT
const STEPS = 40
const EVERY = 10
const TASK = { stepCount: STEPS, checkpointEvery: EVERY, diverged: false }
const PROGRAM = taskProgram({ steps: STEPS, checkpointEvery: EVERY })
/** the committed roots: a state the solver can serve at every checkpoint of the task, stand-ins elsewhere */
const ROOTS = Array.from({ length: STEPS + 1 }, (_, s) => s % EVERY === 0 ? stateRoot(STATE, s) : sha256(Uint8Array.of(s)))
const H = (b: number): string => '0x' + b.toString(16).padStart(2, '0').repeat(32)

let h: Harness
const task = (): TaskInfo => h.read<TaskInfo>('Arbitration', 'Tasks', 0)!
const worth = (n: string): bigint => h.free(n) + h.reserved(n)
const HONEST = ['Eve', 'Ferdie', 'Peer1']
const challenge = (id: bigint): AvailabilityChallenge => h.read<AvailabilityChallenge>('Arbitration', 'AvailabilityChallenges', id)!
const openChallenges = (): Array<[number, bigint]> => h.read<Array<[number, bigint]>>('Arbitration', 'OpenAvailability', 0) ?? []
const served = (): Set<number> => new Set((h.read<bigint[]>('Arbitration', 'AnsweredAvailability', 0) ?? []).map(id => challenge(id).checkpointStep))
const hasVerdict = (n: string): boolean => task().verdicts.some(v => v.verifier === h.accounts[n])
const sampled = (n: string): number[] => harnessSample(h, n).map(u => u + 1)

/** the checkpoints the puppet lists in its run index and proof.json, and the one it withholds */
let published: number[]
let withheld: number

/**
 * What the honest verifier's node (node/roles/verifier-ports.ts) challenges: the published
 * run's unfetchable checkpoints its replay loads, or, when the published list is not the
 * task's, what a replay from the chain needs.
 */
function toChallenge (n: string): number[] {
  if (publishedCheckpointsError(published, TASK) !== undefined) return withheldRunCheckpoints(sampled(n), TASK)
  return checkpointLoads(sampled(n), published, 1, STEPS).filter(s => s === withheld)
}

/** the serves' parts as the chain emitted them, by checkpoint */
let emitted: Map<number, Uint8Array[]>

/** Whether the verifier can replay: from the chain once what it needs is served (its published run it cannot use). */
function canReplay (n: string): boolean {
  if (publishedCheckpointsError(published, TASK) === undefined) return false
  const needed = withheldRunCheckpoints(sampled(n), TASK)
  if (!needed.every(s => emitted.has(s))) return false
  for (const step of needed) {
    const s = assembleServe({ proofRoot: hexToU8a(task().proofRoot), step, stepCount: STEPS }, emitted.get(step)!)
    expect(toHex(stateRoot(s.tensors, step))).toBe(toHex(ROOTS[step]))
  }
  return true
}

beforeEach(async () => {
  h = await Harness.create({ reference })
  emitted = new Map()
  // Bob solves (Alice's puppet), Dave is Alice's puppet verifier, Eve is honest; both drawn in round 0
  for (const [n, roles] of [['Bob', 2], ['Dave', 4], ['Eve', 4]] as const) expect(h.run(n, 'Arbitration', 'register_node', h.registerArgs(n, roles, STAKE)).error).toBeUndefined()
  expect(h.run('Alice', 'Arbitration', 'submit_task', {
    programHash: PROGRAM.programHash, program: PROGRAM.programHex, datasetRoot: H(2), skeletonRoot: H(3),
    steps: STEPS, checkpointEvery: EVERY, escrow: 1000n * UNIT,
    solverReward: 600n * UNIT, verifierReward: V, verifierCount: 2, challengeWindow: Math.max(12, minWindow(PROGRAM, 2)), solveTimeout: 40
  }).error).toBeUndefined()
  h.advance(1)
  expect(task().solver).toBe(h.accounts.Bob)
  expect(h.run('Bob', 'Arbitration', 'commit_proof', { taskId: 0, proofRoot: u8aToHex(merkleRoot(ROOTS)), finalStateRoot: u8aToHex(ROOTS[STEPS]), stepCount: STEPS, checkpoints: ['0x01'] }).error).toBeUndefined()
  h.advance(2)
  expect(assignedNames(h).sort()).toEqual(['Dave', 'Eve'])
  // the extra checkpoint: the step before Eve's first sampled one, no checkpoint step of the task
  const mine = sampled('Eve')
  const grid = [0, 10, 20, 30, 40]
  // the extra checkpoint: the step before one of Eve's sampled steps that follows a gap in her sample
  withheld = mine.filter(s => !mine.includes(s - 1) && (s - 1) % EVERY !== 0).map(s => s - 1)[0]
  expect(withheld).toBeGreaterThan(0)
  published = [...grid, withheld].sort((a, b) => a - b)
  // the premise: Eve's replay of the published run loads it, and the chain does not let her challenge it
  expect(checkpointLoads(mine, published, 1, STEPS)).toContain(withheld)
  expect(challengeableCheckpoints(mine, STEPS, EVERY)).not.toContain(withheld)
  for (const n of ['Ferdie', 'Peer1']) expect(h.run(n, 'Arbitration', 'register_node', h.registerArgs(n, 4, STAKE)).error).toBeUndefined()
})

/**
 * Plays the task to its end. Dave accepts; an honest verifier drawn rejects and challenges what
 * its node challenges; reopened, it accepts once it can replay. Bob serves what is in `serve`.
 */
function play (serve: number[]): { ev: string[], refused: string[] } {
  const ev: string[] = []
  const refused: string[] = []
  expect(h.run('Dave', 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: harnessSample(h, 'Dave') }).error).toBeUndefined()
  for (let i = 0; i < 300 && task().phase === 'Verifying'; i++) {
    for (const n of HONEST) {
      if (!assignedNames(h).includes(n) || hasVerdict(n)) continue
      if (canReplay(n)) {
        expect(h.run(n, 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: harnessSample(h, n) }).error).toBeUndefined()
        continue
      }
      const missing = toChallenge(n).filter(s => !served().has(s))
      expect(h.run(n, 'Arbitration', 'submit_verdict', { taskId: 0, accept: false, checkedSteps: [] }).error).toBeUndefined()
      const r = h.run(n, 'Arbitration', 'challenge_availability_many', { taskId: 0, checkpointSteps: missing })
      if (r.error !== undefined) refused.push(r.error)
    }
    for (const [step, id] of openChallenges()) {
      const c = challenge(id)
      if (serve.includes(step) && h.number + 1 >= c.deadline - 1 && h.number + 1 <= c.deadline) {
        const r = serveOnChain(h, 'Bob', id, buildServeParts(STATE, step, ROOTS))
        expect(r.error).toBeUndefined()
        emitted.set(step, r.emitted)
      } else if (h.number + 1 > c.deadline) h.run('Eve', 'Arbitration', 'availability_timeout', { challengeId: id })
    }
    ev.push(...h.advance(1))
  }
  return { ev, refused }
}

describe('a puppet solver publishes a run whose checkpoint list is not the task\'s', () => {
  it('the list is refused: the verifier challenges the task\'s checkpoints its replay loads; served, it replays from the chain and is paid', () => {
    const before = worth('Eve')
    const { ev, refused } = play([0, 10, 20, 30, 40])
    expect(worth('Eve') - before).toBe(V)
    expect(refused).toEqual([])
    expect(ev).not.toContain('Arbitration.AssignmentLapsed')
    expect(task().phase).toBe('Settled')
    expect(publishedCheckpointsError(published, TASK)).toMatch(/not checkpoint steps/)
    expect(harnessAssignments(h)!.verifiers.filter(v => v.status === 'Lapsed')).toHaveLength(0)
  })

  it('the solver serves nothing: the challenge times out, the solver is slashed and no honest verifier loses', () => {
    const before = Object.fromEntries(HONEST.map(n => [n, worth(n)]))
    const bob = worth('Bob')
    const { ev, refused } = play([])
    for (const n of HONEST) expect(worth(n) - before[n]).toBeGreaterThanOrEqual(0n)
    expect(refused).toEqual([])
    expect(ev).not.toContain('Arbitration.AssignmentLapsed')
    expect(task().phase).toBe('Failed')
    expect(worth('Bob') - bob).toBeLessThan(-(STAKE / 4n))
  })

  it('a list without the task\'s intermediate checkpoints is refused too, and an honest run\'s list is not', () => {
    expect(publishedCheckpointsError([0, 40], TASK)).toMatch(/without 10, 20, 30/)
    expect(publishedCheckpointsError([0, 10, 20, 30, 40], TASK)).toBeUndefined()
    // a diverged run of 7 steps checkpoints 0, 5 and its last state 7
    expect(publishedCheckpointsError([0, 5, 7], { stepCount: 7, checkpointEvery: 5 })).toBeUndefined()
  })
})
