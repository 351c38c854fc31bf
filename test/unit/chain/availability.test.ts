import { beforeEach, describe, expect, it } from 'vitest'
import { hexToU8a, u8aToHex } from '@polkadot/util'
import { UNIT } from '../../../devnet/chain/dev-spec.js'
import { merkleRoot, sha256, stateRoot } from '../../../protocols/commit/index.js'
import { decode, encode } from 'cborg'
import { ROOTS, STAKE, STATE, STEP, availabilityAnswer, commitAvailabilityProof, serveOnChain, serveParts, servedState, submitAvailabilityTask, tensor } from '../../helpers/availability-task.js'
import type { AvailabilityChallenge } from '../../../devnet/chain/runtime/availability.js'
import type { NodeInfo, TaskInfo } from '../../../devnet/chain/runtime/arbitration.js'
import { MAX_SERVE_PART_BYTES, SAMPLE_COUNT, assembleServedState, buildServeParts, checkServePart, headersHash, AvailabilityRejected, type ServePart } from '../../../protocols/availability/index.js'
import { MAX_RESPONSE_BYTES, availabilitySeed, buildAvailabilityResponse, checkAvailabilityResponse, encodeAvailabilityResponse } from '../../helpers/availability-v1.js'
import { harnessSample } from '../../helpers/verdict-sample.js'
import { Harness } from './harness.js'
import * as reference from '../../../protocols/reference/index.js'

// The data-availability challenge on the pure runtime: a solver answers by
// serving the whole checkpoint on chain, in parts checked against its
// proof_root, in time; too late, with a wrong proof, too big, with possession
// alone (sampled rows), or not at all (slashed, task Failed).

let h: Harness
let solver: string
const getTask = (): TaskInfo => h.read<TaskInfo>('Arbitration', 'Tasks', 0) as TaskInfo
const challenge = (id = 0): AvailabilityChallenge => h.read<AvailabilityChallenge>('Arbitration', 'AvailabilityChallenges', id) as AvailabilityChallenge
const stake = (who: string): bigint => (h.read<NodeInfo>('Arbitration', 'Nodes', h.accounts[who]) as NodeInfo).stake
/** the seed of a challenge opened in the last block: that block's hash, which the harness hands to the next block */
const seedNow = (id = 0): Uint8Array => availabilitySeed(hexToU8a(h.randomness()), id)
const respond = (bytes: Uint8Array, from = solver, id = 0): string | undefined => h.run(from, 'Arbitration', 'respond_availability', { challengeId: id, response: u8aToHex(bytes) }).error
/** a serve part re-encoded after `edit` */
const edited = (bytes: Uint8Array, edit: (p: ServePart) => void): Uint8Array => { const p = decode(bytes) as ServePart; edit(p); return encode(p) }

beforeEach(async () => {
  h = await Harness.create({ reference })
  for (const [n, roles] of [['Bob', 2], ['Charlie', 2], ['Dave', 4 | 8], ['Eve', 4 | 8]] as const) {
    expect(h.run(n, 'Arbitration', 'register_node', h.registerArgs(n, roles, STAKE)).error).toBeUndefined()
  }
  solver = submitAvailabilityTask(h)
  commitAvailabilityProof(h, solver)
})

describe('availability challenge: rules', () => {
  it('opening: a checkpoint step, once at a time, not by the solver, within the window, with a deposit', () => {
    const bond = (h.read<{ disputeBond: bigint }>('Arbitration', 'Params') as { disputeBond: bigint }).disputeBond
    const reserved = h.reserved('Dave')
    expect(h.run('Dave', 'Arbitration', 'challenge_availability', { taskId: 0, checkpointStep: 3 }).error).toBe('Arbitration.NotCheckpointStep')
    expect(h.run('Dave', 'Arbitration', 'challenge_availability', { taskId: 0, checkpointStep: 11 }).error).toBe('Arbitration.NotCheckpointStep')
    expect(h.run(solver, 'Arbitration', 'challenge_availability', { taskId: 0, checkpointStep: STEP }).error).toBe('Arbitration.SolverCannotVerify')
    expect(h.run('Ferdie', 'Arbitration', 'challenge_availability', { taskId: 0, checkpointStep: STEP }).error).toBe('Arbitration.NotRegistered')
    expect(h.run('Dave', 'Arbitration', 'challenge_availability', { taskId: 7, checkpointStep: STEP }).error).toBe('Arbitration.TaskNotFound')
    const r = h.run('Dave', 'Arbitration', 'challenge_availability', { taskId: 0, checkpointStep: STEP })
    expect(r.error).toBeUndefined()
    expect(r.events).toContain('Arbitration.AvailabilityChallenged')
    expect(h.reserved('Dave')).toBe(reserved + bond)
    expect(challenge().status).toBe('Open')
    expect(challenge().samples).toBe(SAMPLE_COUNT)
    expect(getTask().openDisputes).toBe(1)
    // a node the chain did not draw (an assigned verifier may open its own: test/adversarial/availability-copies.test.ts)
    const other = solver === 'Bob' ? 'Charlie' : 'Bob'
    expect(h.run(other, 'Arbitration', 'challenge_availability', { taskId: 0, checkpointStep: STEP }).error).toBe('Arbitration.AvailabilityAlreadyOpen')
    // another checkpoint (the last step is one too) can be challenged at the same time; by an assigned
    // verifier only if its sample needs it (test/adversarial/needless-serves.test.ts): every sample here replays from 0 and 5
    expect(h.run('Eve', 'Arbitration', 'challenge_availability', { taskId: 0, checkpointStep: 10 }).error).toBe('Arbitration.CheckpointNotNeeded')
    expect(h.run(other, 'Arbitration', 'challenge_availability', { taskId: 0, checkpointStep: 10 }).error).toBeUndefined()
    expect(getTask().openDisputes).toBe(2)
    h.advance(12)
    expect(h.run('Eve', 'Arbitration', 'challenge_availability', { taskId: 0, checkpointStep: 0 }).error).toBe('Arbitration.ChallengeWindowClosed')
  })

  it('a serve in time, in parts: the challenge is answered; the challenger rebuilds the state; the task settles on its verdicts', () => {
    expect(h.run('Dave', 'Arbitration', 'challenge_availability', { taskId: 0, checkpointStep: STEP }).error).toBeUndefined()
    // small parts: the serve takes several calls, each starting where the last stopped
    const parts = serveParts(STATE, 600)
    expect(parts.length).toBeGreaterThan(2)
    const daveReserved = h.reserved('Dave')
    const daveWorth = h.free('Dave') + h.reserved('Dave')
    const solverFree = h.free(solver)
    // only the solver serves; possession alone (sampled rows) no longer answers; parts come in order
    expect(respond(parts[0], 'Eve')).toBe('Arbitration.NotSelectedSolver')
    expect(respond(availabilityAnswer(seedNow()))).toBe('Arbitration.InvalidAvailabilityResponse')
    expect(respond(parts[1])).toBe('Arbitration.InvalidAvailabilityResponse')
    h.advance(1)
    expect(h.run('Eve', 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: harnessSample(h, 'Eve') }).error).toBeUndefined()
    const first = h.run(solver, 'Arbitration', 'respond_availability', { challengeId: 0, response: u8aToHex(parts[0]) })
    expect(first.events?.filter(e => e.startsWith('Arbitration.Availability'))).toEqual(['Arbitration.AvailabilityServed'])
    expect(challenge().status).toBe('Open')
    expect(respond(parts[0])).toBe('Arbitration.InvalidAvailabilityResponse')
    const { error, emitted } = serveOnChain(h, solver, 0, parts.slice(1))
    expect(error).toBeUndefined()
    expect(challenge().status).toBe('Answered')
    expect(challenge().responseHash).toBe(u8aToHex(headersHash((decode(parts[0]) as ServePart).tensors)))
    // what the chain emitted is the committed state, bit for bit
    const back = servedState([parts[0], ...emitted])
    expect(back.map(t => Array.from(t.values))).toEqual(STATE.map(t => Array.from(t.values)))
    const progress = h.read<{ served: number, total: number, parts: number[] }>('Arbitration', 'AvailabilityServes', 0)!
    expect(progress.served).toBe(progress.total)
    expect(progress.parts).toHaveLength(parts.length)
    // the deposit waits for the task's end
    expect(h.free(solver)).toBe(solverFree)
    expect(h.reserved('Dave')).toBe(daveReserved)
    expect(getTask().openDisputes).toBe(0)
    expect(stake(solver)).toBe(STAKE)
    expect(respond(parts[0])).toBe('Arbitration.AvailabilityClosed')
    expect(h.run('Dave', 'Arbitration', 'availability_timeout', { challengeId: 0 }).error).toBe('Arbitration.AvailabilityClosed')
    // the checkpoint is on chain: nobody challenges it again (Eve, who accepted, challenges nothing)
    expect(h.run(solver === 'Bob' ? 'Charlie' : 'Bob', 'Arbitration', 'challenge_availability', { taskId: 0, checkpointStep: STEP }).error).toBe('Arbitration.CheckpointServed')
    expect(h.run('Eve', 'Arbitration', 'challenge_availability', { taskId: 0, checkpointStep: 0 }).error).toBe('Arbitration.ChallengeAfterAccept')
    // a served challenge does not fail the task: it settles on its verdicts
    // (Eve voted in the window; Dave, served past it, in his served grace)
    expect(h.run('Dave', 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: harnessSample(h, 'Dave') }).error).toBeUndefined()
    expect(h.advance(12)).toContain('Arbitration.AvailabilityDepositSettled')
    expect(getTask().phase).toBe('Settled')
    // Dave, drawn, was served and voted: his deposit comes back
    expect(h.free(solver) - solverFree).toBe(600n * UNIT)
    const dave = h.free('Dave') + h.reserved('Dave')
    expect(h.reserved('Dave')).toBe(daveReserved - challenge().deposit)
    expect(dave).toBe(daveWorth + 100n * UNIT)
  })

  it('a substantial part renews the answer window (every open challenge of the task); tiny parts do not', () => {
    // a state of ~600 KiB: parts of at least SERVE_EXTEND_BYTES of leaves extend, a part of a few leaves does not
    const big = [tensor([300, 256], 5), tensor([256], 6), tensor([256, 300], 7)]
    h.write('Arbitration', 'Tasks', 0, { ...getTask(), proofRoot: u8aToHex(merkleRoot(ROOTS.map((r, s) => s === STEP ? stateRoot(big, STEP) : r))) })
    const roots = ROOTS.map((r, s) => s === STEP ? stateRoot(big, STEP) : r)
    // checkpoints 5 and 0 challenged together: the solver serves 5 first
    expect(h.run('Dave', 'Arbitration', 'challenge_availability_many', { taskId: 0, checkpointSteps: [STEP, 0] }).error).toBeUndefined()
    const clock = (h.read<{ disputeClock: number }>('Arbitration', 'Params') as { disputeClock: number }).disputeClock
    const first = challenge().deadline
    expect(challenge(1).deadline).toBe(first)
    const tiny = buildServeParts(big, STEP, roots, undefined, { maxBytes: 40 * 1024 })
    // the first part carries the roots and a few leaves: no extension
    h.advance(5)
    expect(respond(tiny[0])).toBeUndefined()
    expect(challenge().deadline).toBe(first)
    const served = h.read<{ served: number }>('Arbitration', 'AvailabilityServes', 0)!.served
    const [chunk] = buildServeParts(big, STEP, roots, undefined, { from: served, maxBytes: 300 * 1024 })
    h.advance(first - h.number - 2)
    expect(respond(chunk)).toBeUndefined()
    // the answer window renewed: max(dispute_clock, challenge_window / 4) = dispute_clock for this task's 12-block window
    expect(challenge().deadline).toBe(h.number + 1 + Math.max(clock, 3))
    expect(challenge().deadline).toBeGreaterThan(first)
    // the other checkpoint's challenge too: a solver serving one state is not timed out on the next
    expect(challenge(1).deadline).toBe(challenge().deadline)
    const rest = buildServeParts(big, STEP, roots, undefined, { from: h.read<{ served: number }>('Arbitration', 'AvailabilityServes', 0)!.served })
    h.advance(first - h.number + 3)
    for (const p of rest) expect(respond(p)).toBeUndefined()
    expect(challenge().status).toBe('Answered')
  })

  it('no serve after the deadline', () => {
    expect(h.run('Dave', 'Arbitration', 'challenge_availability', { taskId: 0, checkpointStep: STEP }).error).toBeUndefined()
    const c = challenge()
    expect(c.deadline).toBeGreaterThan(c.openedAt + 1)
    h.advance(c.deadline - h.number) // the next block is past the deadline
    expect(respond(serveParts()[0])).toBe('Arbitration.ResponseTooLate')
  })

  it('wrong proofs, parts out of order, other headers, garbage and oversized parts are refused', () => {
    expect(h.run('Dave', 'Arbitration', 'challenge_availability', { taskId: 0, checkpointStep: STEP }).error).toBeUndefined()
    const [good, second] = serveParts(STATE, 600)
    // one flipped byte in a served leaf
    expect(respond(edited(good, p => { p.leaves[0].bytes[0] ^= 1 }))).toBe('Arbitration.AvailabilityProofInvalid')
    // a state root that is not leaf STEP of proof_root
    expect(respond(edited(good, p => { p.statePath.reverse() }))).toBe('Arbitration.AvailabilityProofInvalid')
    // fewer state tensors (a smaller state to serve): the state root no longer matches
    expect(respond(edited(good, p => { p.tensors = p.tensors.slice(0, 2) }))).toBe('Arbitration.AvailabilityProofInvalid')
    // starting past the next leaf, or a leaf short of what the part claims
    expect(respond(edited(good, p => { p.from = 1 }))).toBe('Arbitration.InvalidAvailabilityResponse')
    expect(respond(second)).toBe('Arbitration.InvalidAvailabilityResponse')
    expect(respond(Uint8Array.of(1, 2, 3))).toBe('Arbitration.InvalidAvailabilityResponse')
    expect(respond(new Uint8Array(MAX_SERVE_PART_BYTES + 1))).toBe('Arbitration.ResponseTooLarge')
    // a solver whose bytes differ from the committed state cannot even build a serve
    const bad = STATE.map(t => ({ ...t, values: Float32Array.from(t.values) }))
    ;(bad[2].values as Float32Array)[0] += 1
    expect(() => buildServeParts(bad, STEP, ROOTS)).toThrow(/does not hash to the committed state root/)
    expect(challenge().status).toBe('Open')
    expect(respond(good)).toBeUndefined()
    expect(respond(second)).toBeUndefined()
  })

  it('no valid answer by the deadline: anyone times it out, the solver is slashed, the task fails', () => {
    const daveFree = h.free('Dave')
    expect(h.run('Dave', 'Arbitration', 'challenge_availability', { taskId: 0, checkpointStep: STEP }).error).toBeUndefined()
    const c = challenge()
    expect(h.run('Eve', 'Arbitration', 'availability_timeout', { challengeId: 0 }).error).toBe('Arbitration.DeadlineNotReached')
    expect(h.run('Eve', 'Arbitration', 'availability_timeout', { challengeId: 9 }).error).toBe('Arbitration.AvailabilityNotFound')
    h.advance(c.deadline - h.number)
    // the challenge window is long over, but the open challenge holds settlement
    expect(getTask().phase).toBe('Verifying')
    const r = h.run('Eve', 'Arbitration', 'availability_timeout', { challengeId: 0 })
    expect(r.error).toBeUndefined()
    expect(r.events).toContain('Arbitration.AvailabilityTimedOut')
    expect(r.events).toContain('Arbitration.Slashed')
    expect(challenge().status).toBe('TimedOut')
    expect(stake(solver)).toBe(STAKE / 2n) // slash_ppm 50 %
    // the challenger gets its deposit back and winner_share_ppm of the slash
    expect(h.free('Dave')).toBe(daveFree + STAKE / 4n)
    expect(getTask().solverFailed).toBe(true)
    h.advance(1)
    expect(getTask().phase).toBe('Failed')
  })
})

describe('availability response (pure)', () => {
  it('serving the devnet\'s MLP state takes two parts of at most 1 MiB, and rebuilds it bit for bit', () => {
    // 784-128-10 MLP with Adam slots and a step counter: 1,221,248 bytes, the devnet's checkpoint
    const big = [...[[784, 128], [128], [128, 10], [10]].flatMap((s, i) => [tensor(s, 10 + i), tensor(s, 20 + i), tensor(s, 30 + i)]), { dtype: 'int32' as const, shape: [2], values: Int32Array.of(1, 2) }]
    const raw = big.reduce((a, t) => a + t.values.byteLength, 0)
    expect(raw).toBe(1_221_248)
    const roots = [sha256(Uint8Array.of(1)), stateRoot(big, 1)]
    const parts = buildServeParts(big, 1, roots)
    const bytes = parts.reduce((a, p) => a + p.length, 0)
    expect(parts).toHaveLength(2)
    expect(Math.max(...parts.map(p => p.length))).toBeLessThanOrEqual(MAX_SERVE_PART_BYTES)
    // paths and headers: about 15 % over the state itself
    expect(bytes / raw).toBeLessThan(1.2)
    const ctx = { proofRoot: merkleRoot(roots), step: 1, stepCount: 1 }
    const first = checkServePart({ ...ctx, served: 0 }, parts[0])
    expect(() => checkServePart({ ...ctx, served: 0 }, parts[1])).toThrow(AvailabilityRejected)
    const back = assembleServedState(ctx, parts)
    expect(back.every((t, i) => Buffer.from(t.values.buffer).equals(Buffer.from(big[i].values.buffer)))).toBe(true)
    process.stdout.write(`SERVE-FIGURES ${JSON.stringify({ stateBytes: raw, parts: parts.map(p => p.length), servedBytes: bytes, leaves: first.total })}\n`)
  })

  // the sampled answer the chain refuses (above) is a valid proof of possession, and far smaller than a serve
  it('an MLP-sized sampled answer fits well under 64 KiB and names only drawn positions', () => {
    // 784-128-10 MLP with Adam slots: 12 tensors, rows up to 128 floats
    const big = [[784, 128], [128], [128, 10], [10]].flatMap((s, i) => [tensor(s, 10 + i), tensor(s, 20 + i), tensor(s, 30 + i)])
    const roots = [sha256(Uint8Array.of(1)), stateRoot(big, 1)]
    const seed = sha256(Uint8Array.of(7))
    const bytes = encodeAvailabilityResponse(buildAvailabilityResponse(big, 1, roots, seed))
    // each sample carries its row-tree leaf (≤ LEAF_BYTES here: rows ≤ 512 bytes): 16 × 2 KiB + paths + headers
    expect(bytes.length).toBeLessThan(40 * 1024)
    expect(bytes.length).toBeLessThan(MAX_RESPONSE_BYTES)
    const r = checkAvailabilityResponse({ proofRoot: merkleRoot(roots), step: 1, stepCount: 1, seed }, bytes)
    expect(r.tensors).toHaveLength(12)
    expect(new Set(r.samples.map(s => `${s.tensor}/${s.index}`)).size).toBeGreaterThan(1)
    expect(() => checkAvailabilityResponse({ proofRoot: merkleRoot(roots), step: 1, stepCount: 1, seed: sha256(seed) }, bytes)).toThrow(AvailabilityRejected)
    process.stdout.write(`AVAILABILITY-FIGURES ${JSON.stringify({ tensors: 12, samples: SAMPLE_COUNT, responseBytes: bytes.length })}\n`)
  })
})

describe('availability challenge: the answer window', () => {
  // On the task-throughput bench (challenge window 600 blocks, dispute_clock 20) honest solvers under
  // load missed the 21-block window and were slashed; the window is now a quarter of the task's
  // challenge window when that is longer than dispute_clock.
  it('a task with a long challenge window gives the solver a quarter of it; past that it is too late', async () => {
    h = await Harness.create({ reference })
    for (const [n, roles] of [['Bob', 2], ['Dave', 4], ['Eve', 4]] as const) expect(h.run(n, 'Arbitration', 'register_node', h.registerArgs(n, roles, STAKE)).error).toBeUndefined()
    solver = submitAvailabilityTask(h, { challengeWindow: 600 })
    commitAvailabilityProof(h, solver)
    const clock = (h.read<{ disputeClock: number }>('Arbitration', 'Params') as { disputeClock: number }).disputeClock
    for (const id of [0, 1]) {
      expect(h.run('Dave', 'Arbitration', 'challenge_availability', { taskId: 0, checkpointStep: id === 0 ? STEP : 0 }).error).toBeUndefined()
      expect(challenge(id).deadline).toBe(challenge(id).openedAt + 1 + 150)
      expect(150).toBeGreaterThan(clock)
    }
    const bytes = serveParts()[0]
    // the old deadline (opened_at + 1 + dispute_clock) has passed: the answer still counts, and nobody can time it out
    h.advance(challenge(0).openedAt + 1 + clock + 5 - h.number)
    expect(h.run('Eve', 'Arbitration', 'availability_timeout', { challengeId: 0 }).error).toBe('Arbitration.DeadlineNotReached')
    expect(respond(bytes)).toBeUndefined()
    expect(challenge(0).status).toBe('Answered')
    // challenge 1 (checkpoint 0) goes unanswered: too late after its deadline
    h.advance(challenge(1).deadline - h.number)
    expect(respond(bytes, solver, 1)).toBe('Arbitration.ResponseTooLate')
    expect(h.run('Eve', 'Arbitration', 'availability_timeout', { challengeId: 1 }).error).toBeUndefined()
  })
})
