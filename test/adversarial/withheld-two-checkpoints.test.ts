import { beforeEach, describe, expect, it } from 'vitest'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import type { TaskInfo } from '../../devnet/chain/runtime/arbitration.js'
import type { AvailabilityChallenge } from '../../devnet/chain/runtime/availability.js'
import * as reference from '../../protocols/reference/index.js'
import { STAKE, STATE, commitAvailabilityProof, serveOnChain, serveParts, submitAvailabilityTask } from '../helpers/availability-task.js'
import { assignedNames, harnessAssignments, harnessSample } from '../helpers/verdict-sample.js'
import { Harness } from '../unit/chain/harness.js'

// Selective serving of two checkpoints (docs/economics.md "Selective serving").
// The solver is its submitter's puppet and serves its checkpoints off chain to
// a puppet verifier only; an honest drawn verifier's sample needs both
// checkpoints 0 and 5, and it can fetch neither. Before, its node challenged
// the first missing checkpoint only; served (at the deadline, past
// challenge_end), it met the second, could not challenge it any more (a served
// verifier's evidence past the window is a dispute or a claim), its reject was
// unbacked and it lapsed: −(B + R). And a reject decided at the window's end
// could be backed by one challenge only (its backing grace is spent by the
// first). Now the verifier challenges every missing checkpoint its sample
// needs at once, and the chain takes them all while its reject rests on
// challenges of its own still open; its verdict reopens only once every one is
// served. Each test fails if an honest verifier loses anything.

const V = 100n * UNIT

let h: Harness
const task = (): TaskInfo => h.read<TaskInfo>('Arbitration', 'Tasks', 0)!
const worth = (n: string): bigint => h.free(n) + h.reserved(n)
const HONEST = ['Eve', 'Ferdie', 'Peer1']
const coalition = (): bigint => ['Alice', 'Bob', 'Dave'].reduce((s, n) => s + worth(n), 0n)
const challenge = (id: bigint): AvailabilityChallenge => h.read<AvailabilityChallenge>('Arbitration', 'AvailabilityChallenges', id)!
const openChallenges = (): Array<[number, bigint]> => h.read<Array<[number, bigint]>>('Arbitration', 'OpenAvailability', 0) ?? []
/** checkpoints served on chain (answered challenges) */
const served = (): Set<number> => new Set((h.read<bigint[]>('Arbitration', 'AnsweredAvailability', 0) ?? []).map(id => challenge(id).checkpointStep))
/** the checkpoints `n`'s sample replays from: unit i (0-based) starts at state i, checkpoints every 5 */
const needs = (n: string): number[] => [...new Set(harnessSample(h, n).map(u => u - (u % 5)))].sort((a, b) => a - b)
const hasVerdict = (n: string): boolean => task().verdicts.some(v => v.verifier === h.accounts[n])

beforeEach(async () => {
  h = await Harness.create({ reference })
  // Bob solves (Alice's puppet), Dave is Alice's puppet verifier, Eve is honest; both drawn in round 0
  for (const [n, roles] of [['Bob', 2], ['Dave', 4], ['Eve', 4]] as const) expect(h.run(n, 'Arbitration', 'register_node', h.registerArgs(n, roles, STAKE)).error).toBeUndefined()
  expect(submitAvailabilityTask(h, { solverReward: 600n * UNIT })).toBe('Bob')
  commitAvailabilityProof(h, 'Bob')
  h.advance(2)
  expect(assignedNames(h).sort()).toEqual(['Dave', 'Eve'])
  // the premise: Eve's sample replays from both checkpoints the solver withholds
  expect(needs('Eve')).toEqual([0, 5])
  for (const n of ['Ferdie', 'Peer1']) expect(h.run(n, 'Arbitration', 'register_node', h.registerArgs(n, 4, STAKE)).error).toBeUndefined()
})

/**
 * Plays the task to its end. Dave accepts; an honest verifier drawn rejects
 * (at the window's last block if `late`) and challenges every checkpoint its
 * sample needs that is not on chain, at once (the node's rule); when its
 * verdict is reopened it accepts if all it needs is served, else challenges
 * what is missing (the chain may refuse: then it can only stay silent). Bob
 * serves checkpoint 5 at the end of its challenge's answer window (the block
 * after the challenge if `atOnce`), and 0 too if `serveZero`.
 */
function play (o: { late: boolean, serveZero: boolean, atOnce?: boolean }): string[] {
  const ev: string[] = []
  expect(h.run('Dave', 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: harnessSample(h, 'Dave') }).error).toBeUndefined()
  if (o.late) h.advance(task().challengeEnd - h.number - 1)
  for (let i = 0; i < 300 && task().phase === 'Verifying'; i++) {
    for (const n of HONEST) {
      if (!assignedNames(h).includes(n) || hasVerdict(n)) continue
      const missing = needs(n).filter(s => !served().has(s))
      if (missing.length === 0) {
        expect(h.run(n, 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: harnessSample(h, n) }).error).toBeUndefined()
        continue
      }
      expect(h.run(n, 'Arbitration', 'submit_verdict', { taskId: 0, accept: false, checkedSteps: [] }).error).toBeUndefined()
      // the evidence follows the reject a few blocks later (a late reject's comes past challenge_end, in its grace)
      if (o.late && n === 'Eve') h.advance(2)
      // in one call: opened one per block, a solver serving at once would reopen the verdict before the next was in
      expect(h.run(n, 'Arbitration', 'challenge_availability_many', { taskId: 0, checkpointSteps: missing }).error).toBeUndefined()
    }
    for (const [step, id] of openChallenges()) {
      const c = challenge(id)
      // the puppet solver serves at the last block it may
      // (both challenges share a deadline: the first is served a block before it)
      if ((step === 5 || o.serveZero) && h.number + 1 >= (o.atOnce === true ? c.openedAt + 1 : c.deadline - 1) && h.number + 1 <= c.deadline) {
        expect(serveOnChain(h, 'Bob', id, serveParts(STATE, undefined, step)).error).toBeUndefined()
        // a verifier's verdict reopens once every challenge of its own is served
        if (h.lastEvents.some(e => (e.event as { Arbitration?: { VerdictReopened?: unknown } }).Arbitration?.VerdictReopened !== undefined)) ev.push(`reopened after ${[...served()].sort((a, b) => a - b).join(',')}`)
      } else if (h.number + 1 > c.deadline) h.run('Eve', 'Arbitration', 'availability_timeout', { challengeId: id })
    }
    ev.push(...h.advance(1))
  }
  return ev
}

describe('a puppet solver withholds two checkpoints an honest verifier needs', () => {
  for (const late of [false, true]) {
    const when = late ? 'rejecting at the window\'s end' : 'rejecting in the window'
    it(`${when}, it challenges both at once; the solver serves one: the other times out, the solver is slashed and the verifier loses nothing`, () => {
      const before = Object.fromEntries(HONEST.map(n => [n, worth(n)]))
      const start = coalition()
      const ev = play({ late, serveZero: false })
      expect(ev).not.toContain('Arbitration.AssignmentLapsed')
      expect(task().phase).toBe('Failed')
      for (const n of HONEST) expect(worth(n)).toBeGreaterThanOrEqual(before[n])
      expect(coalition() - start).toBeLessThan(-(STAKE / 4n))
    })

    it(`${when}, it challenges both at once; the solver serves both: the verifier replays, accepts and is paid`, () => {
      const before = Object.fromEntries(HONEST.map(n => [n, worth(n)]))
      const ev = play({ late, serveZero: true })
      expect(ev).not.toContain('Arbitration.AssignmentLapsed')
      expect(ev.filter(e => e.startsWith('reopened'))).toEqual(['reopened after 0,5'])
      expect(task().phase).toBe('Settled')
      expect(worth('Eve') - before.Eve).toBe(V)
      expect(harnessAssignments(h)!.verifiers.filter(v => v.status === 'Lapsed')).toHaveLength(0)
    })
  }

  it('the solver serves the first checkpoint in the very next block and withholds the other: both were challenged in one call, the other times out', () => {
    const before = Object.fromEntries(HONEST.map(n => [n, worth(n)]))
    const ev = play({ late: true, serveZero: false, atOnce: true })
    expect(ev.filter(e => e.startsWith('reopened'))).toEqual([])
    expect(ev).not.toContain('Arbitration.AssignmentLapsed')
    expect(task().phase).toBe('Failed')
    for (const n of HONEST) expect(worth(n)).toBeGreaterThanOrEqual(before[n])
  })

  it('an empty list of checkpoints is refused, and one bad step refuses them all', () => {
    expect(h.run('Eve', 'Arbitration', 'submit_verdict', { taskId: 0, accept: false, checkedSteps: [] }).error).toBeUndefined()
    expect(h.run('Eve', 'Arbitration', 'challenge_availability_many', { taskId: 0, checkpointSteps: [] }).error).toBe('Arbitration.NotCheckpointStep')
    expect(h.run('Eve', 'Arbitration', 'challenge_availability_many', { taskId: 0, checkpointSteps: [5, 3] }).error).toBe('Arbitration.NotCheckpointStep')
    expect(openChallenges()).toEqual([])
  })
})
