import { beforeEach, describe, expect, it } from 'vitest'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import type { TaskInfo } from '../../devnet/chain/runtime/arbitration.js'
import { TREASURY } from '../../devnet/chain/runtime/balances.js'
import { CHALLENGE_POT } from '../../devnet/chain/runtime/challenge-shares.js'
import * as reference from '../../protocols/reference/index.js'
import { PROGRAM, PROOF_ROOT, ROOTS, STAKE } from '../helpers/availability-task.js'
import { assignedNames } from '../helpers/verdict-sample.js'
import { Harness } from '../unit/chain/harness.js'
import { u8aToHex } from '@polkadot/util'

// Stake that answers for an assigned slot, dumped to a puppet before the slot
// fails (docs/economics.md "Verifier assignment", "Stake bound to a slot").
// A failed slot must cost its verifier B + R, more than the reward R its
// submitter keeps when the task ends Unverified; the draw takes a verifier
// only while its free stake covers that. But the same stake also answers for
// whatever else its node does: here the submitter's puppet Bob is the verifier
// drawn for the submitter's big task A (trained by the honest Eve), and at
// the same time the solver of another task T of the submitter's, whose
// checkpoints it withholds. Two more puppets, Dave and Ferdie, challenge them (availability
// challenges, or chunk-sample requests whose shares the challenge pot holds);
// each unanswered one slashes Bob half its stake, half of that to the challenger. Bob
// is left with an eighth of the stake that answered for A when its slot
// lapses: before, the coalition lost 1,125 for keeping R = 1,900 of Eve's work
// unpaid. Now a slash that cuts into stake bound to other tasks' slots pays no
// challenger share from that part: the coalition pays B + R whatever it does,
// and the pot holds for a fact only what the slash passed to it.

const B = 100n * UNIT
const R_A = 1900n * UNIT
/** the minimum stake: enough for T's slot (B + 600), never for A's (B + R_A) */
const DAVE_STAKE = 1000n * UNIT
const H = (b: number): string => '0x' + b.toString(16).padStart(2, '0').repeat(32)

let h: Harness
const task = (id: number): TaskInfo => h.read<TaskInfo>('Arbitration', 'Tasks', id)!
const worth = (n: string): bigint => h.free(n) + h.reserved(n)
const NAMES = ['Alice', 'Bob', 'Charlie', 'Dave', 'Eve', 'Ferdie', 'Peer1', 'Peer2']
/** every balance the scenario can move: the named accounts, the treasury and the challenge pot */
const everything = (): bigint => [...NAMES, TREASURY, CHALLENGE_POT].reduce((s, n) => s + worth(n), 0n)
const coalition = (): bigint => ['Alice', 'Bob', 'Dave', 'Ferdie'].reduce((s, n) => s + worth(n), 0n)
const submit = (solverReward: bigint): void => {
  expect(h.run('Alice', 'Arbitration', 'submit_task', {
    programHash: PROGRAM.programHash, program: PROGRAM.programHex, datasetRoot: H(2), skeletonRoot: H(3), steps: 10, checkpointEvery: 5,
    escrow: solverReward + 100n * UNIT, solverReward, verifierReward: 100n * UNIT, verifierCount: 1, challengeWindow: 30, solveTimeout: 20
  }).error).toBeUndefined()
  h.advance(1)
}
const commit = (who: string, taskId: number): void => {
  expect(h.run(who, 'Arbitration', 'commit_proof', { taskId, proofRoot: PROOF_ROOT, finalStateRoot: u8aToHex(ROOTS[10]), stepCount: 10, checkpoints: ['0x01'] }).error).toBeUndefined()
}

beforeEach(async () => {
  h = await Harness.create({ reference })
})

/** ShareHeld and SharePaid amounts of the block just run (the challenge pot's books) */
const shareEvents = (): { held: bigint, paid: bigint } => {
  let held = 0n
  let paid = 0n
  for (const e of h.lastEvents) {
    const a = (e.event as { Arbitration?: { ShareHeld?: { amount: bigint }, SharePaid?: { amount: bigint } } }).Arbitration
    held += BigInt(a?.ShareHeld?.amount ?? 0n)
    paid += BigInt(a?.SharePaid?.amount ?? 0n)
  }
  return { held, paid }
}

/**
 * The coalition's play, through `route`: Dave challenges T's three
 * checkpoints (availability challenges: the share to Dave; chunk-sample
 * requests: the share held in the challenge pot for the checkpoint's
 * requesters), Bob answers none and each timeout slashes half its stake.
 * Returns the coalition's loss.
 */
function stall (route: 'availability' | 'chunks'): bigint {
  const total = everything()
  // Bob: the coalition's solver (for now) with exactly B + R_A of stake; Dave its whistleblower and T's verifier
  expect(h.run('Bob', 'Arbitration', 'register_node', h.registerArgs('Bob', 2, B + R_A)).error).toBeUndefined()
  expect(h.run('Dave', 'Arbitration', 'register_node', h.registerArgs('Dave', 4, DAVE_STAKE)).error).toBeUndefined()
  // Ferdie: a whistleblower only (never drawn as a verifier)
  expect(h.run('Ferdie', 'Arbitration', 'register_node', h.registerArgs('Ferdie', 8, DAVE_STAKE)).error).toBeUndefined()
  const start = coalition()
  // task T (id 0): Bob, the only solver, is selected and commits; it will never serve a checkpoint
  submit(600n * UNIT)
  expect(task(0).solver).toBe(h.accounts.Bob)
  commit('Bob', 0)
  // Bob becomes a verifier only; Eve, honest, is the only solver left
  expect(h.run('Bob', 'Arbitration', 'set_roles', { roles: 4 }).error).toBeUndefined()
  expect(h.run('Eve', 'Arbitration', 'register_node', h.registerArgs('Eve', 2, STAKE)).error).toBeUndefined()
  const eve = worth('Eve')
  // task A (id 1), R_A = 1,900: only Bob's free stake covers B + R_A (Dave's is bound to T), so it is reserved, then drawn
  submit(R_A)
  expect(task(1).solver).toBe(h.accounts.Eve)
  commit('Eve', 1)
  h.advance(2)
  expect(assignedNames(h, 1)).toEqual(['Bob'])
  expect(assignedNames(h, 0)).toEqual(['Dave'])
  const [open, timeout, arg] = route === 'availability'
    ? ['OpenAvailability', 'availability_timeout', 'challengeId']
    : ['OpenChunkRequests', 'chunks_timeout', 'requestId']
  // Dave, assigned to T, may challenge only the checkpoints its sample replays from (0 and 5);
  // Ferdie, a puppet not assigned, the last one
  for (const [who, step] of [['Dave', 0], ['Dave', 5], ['Ferdie', 10]] as const) {
    const call = route === 'availability' ? 'challenge_availability' : 'sample_chunks'
    expect(h.run(who, 'Arbitration', call, { taskId: 0, checkpointStep: step }).error).toBeUndefined()
  }
  expect(h.run('Dave', 'Arbitration', 'submit_verdict', { taskId: 0, accept: false, checkedSteps: [] }).error).toBeUndefined()
  const pending = (): bigint[] => (h.read<Array<[number, bigint]>>('Arbitration', open, 0) ?? []).map(([, id]) => id)
  const pot = { held: 0n, paid: 0n }
  const book = (): void => { const e = shareEvents(); pot.held += e.held; pot.paid += e.paid }
  for (let i = 0; i < 60 && pending().length > 0; i++) {
    h.advance(1)
    book()
    for (const id of pending()) { h.run('Peer1', 'Arbitration', timeout, { [arg]: id }); book() }
  }
  expect(pending()).toEqual([])
  // Bob stays silent on A; no verifier is left to replace it: A ends Unverified, Eve unpaid
  for (let i = 0; i < 400 && (task(0).phase === 'Verifying' || task(1).phase === 'Verifying'); i++) { h.advance(1); book() }
  expect(task(0).phase).toBe('Failed')
  expect(task(1).phase).toBe('Unverified')
  expect(worth('Eve')).toBe(eve)
  // nothing created or destroyed; the pot paid out what it held for the checkpoints, and holds nothing
  expect(everything()).toBe(total)
  expect(pot.paid).toBe(pot.held)
  expect(worth(CHALLENGE_POT)).toBe(0n)
  return start - coalition()
}

describe('stake bound to an assigned slot is dumped to a puppet before the slot fails', () => {
  // honest play: Alice pays R_A + V for A. The stall must cost the coalition its failed slot's B + R_A at least
  it('through unanswered availability challenges: the coalition still pays B + R for the slot that kept an honest solver unpaid', () => {
    expect(stall('availability')).toBeGreaterThanOrEqual(B + R_A)
  })

  it('through unanswered chunk-sample requests (shares held in the challenge pot): the same, and the pot holds no share it was not paid', () => {
    expect(stall('chunks')).toBeGreaterThanOrEqual(B + R_A)
  })
})
