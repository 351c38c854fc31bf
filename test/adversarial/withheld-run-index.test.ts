import { beforeEach, describe, expect, it } from 'vitest'
import { hexToU8a } from '@polkadot/util'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import type { TaskInfo } from '../../devnet/chain/runtime/arbitration.js'
import type { AvailabilityChallenge } from '../../devnet/chain/runtime/availability.js'
import { assembleServe } from '../../protocols/availability/index.js'
import { toHex } from '../../protocols/commit/merkle.js'
import { stateRoot } from '../../protocols/commit/state.js'
import * as reference from '../../protocols/reference/index.js'
import { proofFromChain, withheldRunCheckpoints } from '../../protocols/verification/chain-run.js'
import { PROGRAM, PROOF_ROOT, ROOTS, STAKE, STATE, commitAvailabilityProof, serveOnChain, serveParts, submitAvailabilityTask } from '../helpers/availability-task.js'
import { assignedNames, harnessAssignments, harnessSample } from '../helpers/verdict-sample.js'
import { Harness } from '../unit/chain/harness.js'

// A withheld run index or proof.json (docs/disputes.md "Withheld checkpoints").
// The solver is its submitter's puppet and publishes its run index and
// proof.json to a puppet verifier only (or to nobody): an honest drawn verifier
// can fetch nothing, not even which checkpoints exist or the roots to compare
// against. Before, its node challenged the first checkpoint its sample needed
// only; the solver served it, the verifier's reject was withdrawn, and its node
// still could not replay without the run index: it could not challenge the
// other checkpoints past challenge_end, never voted, and lapsed, −(B + R). Now
// the node challenges at once every checkpoint its replay loads, and 0
// (withheldRunCheckpoints: what a replay from the chain needs), and once they
// are served rebuilds the run from the chain alone: the served states, and the
// committed roots every serve's first part carries (proofFromChain). Each test
// fails if an honest verifier loses anything.

const V = 100n * UNIT

let h: Harness
const task = (): TaskInfo => h.read<TaskInfo>('Arbitration', 'Tasks', 0)!
const worth = (n: string): bigint => h.free(n) + h.reserved(n)
const HONEST = ['Eve', 'Ferdie', 'Peer1']
const coalition = (): bigint => ['Alice', 'Bob', 'Dave'].reduce((s, n) => s + worth(n), 0n)
const challenge = (id: bigint): AvailabilityChallenge => h.read<AvailabilityChallenge>('Arbitration', 'AvailabilityChallenges', id)!
const openChallenges = (): Array<[number, bigint]> => h.read<Array<[number, bigint]>>('Arbitration', 'OpenAvailability', 0) ?? []
const served = (): Set<number> => new Set((h.read<bigint[]>('Arbitration', 'AnsweredAvailability', 0) ?? []).map(id => challenge(id).checkpointStep))
const hasVerdict = (n: string): boolean => task().verdicts.some(v => v.verifier === h.accounts[n])
/** what the node challenges when it can fetch nothing the solver published (its sample: 0-based units → 1-based steps) */
const toChallenge = (n: string): number[] => withheldRunCheckpoints(harnessSample(h, n).map(u => u + 1), { stepCount: 10, checkpointEvery: 5, diverged: false })

/** the serves' parts as the chain emitted them, by checkpoint: all a withheld run's verifier has */
let emitted: Map<number, Uint8Array[]>

/**
 * The verifier's run rebuilt from the chain's events alone, as the node does
 * (node/roles/verifier-chain-run.ts): undefined while a checkpoint it needs is not served.
 */
function runFromEvents (n: string): { roots: string[], states: Map<number, Uint8Array[]> } | undefined {
  const needed = toChallenge(n)
  if (!needed.every(s => emitted.has(s))) return undefined
  const states = new Map<number, Uint8Array[]>()
  let roots: string[] = []
  for (const step of needed) {
    const s = assembleServe({ proofRoot: hexToU8a(PROOF_ROOT), step, stepCount: 10 }, emitted.get(step)!)
    if (roots.length === 0) roots = s.roots.map(toHex)
    // the served state is the committed one, bit for bit
    expect(toHex(stateRoot(s.tensors, step))).toBe(toHex(ROOTS[step]))
    states.set(step, s.tensors.map(t => new Uint8Array(t.values.buffer)))
  }
  const proof = proofFromChain({ programHash: PROGRAM.programHash, runtime: 'tfjs-wasm@4.22.0-simd', proofRoot: PROOF_ROOT, stepCount: 10, rootEvery: 1, roots, checkpoints: needed.map(step => ({ step, manifestHash: toHex(ROOTS[step]) })) })
  return { roots: proof.stateRoots, states }
}

beforeEach(async () => {
  h = await Harness.create({ reference })
  emitted = new Map()
  // Bob solves (Alice's puppet), Dave is Alice's puppet verifier, Eve is honest; both drawn in round 0
  for (const [n, roles] of [['Bob', 2], ['Dave', 4], ['Eve', 4]] as const) expect(h.run(n, 'Arbitration', 'register_node', h.registerArgs(n, roles, STAKE)).error).toBeUndefined()
  expect(submitAvailabilityTask(h, { solverReward: 600n * UNIT })).toBe('Bob')
  commitAvailabilityProof(h, 'Bob')
  h.advance(2)
  expect(assignedNames(h).sort()).toEqual(['Dave', 'Eve'])
  // the premise: Eve's replay runs on from checkpoint 0 through its sample (its units follow one another
  // across step 5), so it loads 0 only: what the node challenged before too. What it could not do is replay
  // after the serve (test/integration/withheld-run-client.test.ts: a sample loading five checkpoints)
  expect(toChallenge('Eve')).toEqual([0])
  for (const n of ['Ferdie', 'Peer1']) expect(h.run(n, 'Arbitration', 'register_node', h.registerArgs(n, 4, STAKE)).error).toBeUndefined()
})

/**
 * Plays the task to its end. Dave accepts; an honest verifier drawn rejects (at the window's
 * last block if `late`) and challenges what its node challenges; when its verdict is reopened
 * it accepts if it can rebuild its run from the chain's events, else it can only challenge
 * again (the chain may refuse). Bob serves the checkpoints in `serve` at the end of their answer window.
 */
function play (o: { late: boolean, serve: number[] }): string[] {
  const ev: string[] = []
  expect(h.run('Dave', 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: harnessSample(h, 'Dave') }).error).toBeUndefined()
  if (o.late) h.advance(task().challengeEnd - h.number - 1)
  for (let i = 0; i < 300 && task().phase === 'Verifying'; i++) {
    for (const n of HONEST) {
      if (!assignedNames(h).includes(n) || hasVerdict(n)) continue
      const run = runFromEvents(n)
      if (run !== undefined) {
        // every root of the proof, from the chain: the replay compares against these
        expect(run.roots).toEqual(ROOTS.map(toHex))
        expect(h.run(n, 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: harnessSample(h, n) }).error).toBeUndefined()
        continue
      }
      const missing = toChallenge(n).filter(s => !served().has(s))
      expect(h.run(n, 'Arbitration', 'submit_verdict', { taskId: 0, accept: false, checkedSteps: [] }).error).toBeUndefined()
      if (o.late && n === 'Eve') h.advance(2)
      h.run(n, 'Arbitration', 'challenge_availability_many', { taskId: 0, checkpointSteps: missing })
    }
    for (const [step, id] of openChallenges()) {
      const c = challenge(id)
      if (o.serve.includes(step) && h.number + 1 >= c.deadline - 1 && h.number + 1 <= c.deadline) {
        const r = serveOnChain(h, 'Bob', id, serveParts(STATE, undefined, step))
        expect(r.error).toBeUndefined()
        emitted.set(step, r.emitted)
        if (h.lastEvents.some(e => (e.event as { Arbitration?: { VerdictReopened?: unknown } }).Arbitration?.VerdictReopened !== undefined)) ev.push(`reopened after ${[...served()].sort((a, b) => a - b).join(',')}`)
      } else if (h.number + 1 > c.deadline) h.run('Eve', 'Arbitration', 'availability_timeout', { challengeId: id })
    }
    ev.push(...h.advance(1))
  }
  return ev
}

describe('a puppet solver withholds its run index and proof.json from an honest verifier', () => {
  for (const late of [false, true]) {
    const when = late ? 'rejecting at the window\'s end' : 'rejecting in the window'
    it(`${when}: it challenges every checkpoint its replay loads at once; served, it replays from the chain alone, accepts and is paid`, () => {
      const before = Object.fromEntries(HONEST.map(n => [n, worth(n)]))
      const ev = play({ late, serve: [0] })
      expect(ev).not.toContain('Arbitration.AssignmentLapsed')
      expect(ev.filter(e => e.startsWith('reopened'))).toEqual(['reopened after 0'])
      expect(task().phase).toBe('Settled')
      expect(worth('Eve') - before.Eve).toBe(V)
      expect(harnessAssignments(h)!.verifiers.filter(v => v.status === 'Lapsed')).toHaveLength(0)
    })

    it(`${when}: the solver serves nothing: the challenge times out, the solver is slashed and the verifier loses nothing`, () => {
      const before = Object.fromEntries(HONEST.map(n => [n, worth(n)]))
      const start = coalition()
      const ev = play({ late, serve: [] })
      expect(ev).not.toContain('Arbitration.AssignmentLapsed')
      expect(task().phase).toBe('Failed')
      for (const n of HONEST) expect(worth(n)).toBeGreaterThanOrEqual(before[n])
      expect(coalition() - start).toBeLessThan(-(STAKE / 4n))
    })
  }
})
