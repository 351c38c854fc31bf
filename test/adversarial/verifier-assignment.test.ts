import { randomBytes } from 'node:crypto'
import { Keyring } from '@polkadot/keyring'
import { u8aToHex } from '@polkadot/util'
import { beforeEach, describe, expect, it } from 'vitest'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import type { TaskInfo } from '../../devnet/chain/runtime/arbitration.js'
import { drawWeighted } from '../../devnet/chain/runtime/randomness.js'
import { MAX_VERIFY_EXTENSIONS } from '../../devnet/chain/runtime/spec.js'
import { silencePenalty } from '../../devnet/chain/runtime/verifier-stake.js'
import { sampleSteps } from '../../protocols/verification/sample.js'
import { requiredSampleCount } from '../../protocols/verification/verdict.js'
import * as reference from '../../protocols/reference/index.js'
import { minWindow, taskProgram } from '../helpers/program.js'
import { assignedNames, harnessAssignments, harnessSample } from '../helpers/verdict-sample.js'
import { Harness } from '../unit/chain/harness.js'

// Who verifies a task is the chain's draw, not the first to come (attack 4
// of the economics review: a solver's puppets squatting the verifier slots
// with accounts whose samples miss its faked steps). Each test fails if the
// attacker ends up ahead: a squatter, an unassigned verifier, a submitter or
// solver vouching for itself, a silent or bare-rejecting verifier, and a
// verifier going silent to steer the re-draw.

const H = (b: number): string => '0x' + b.toString(16).padStart(2, '0').repeat(32)
const STAKE = 2000n * UNIT
const REWARD = 600n * UNIT
const VREWARD = 100n * UNIT
const BOND = 100n * UNIT
const PROGRAM = taskProgram({ steps: 100, checkpointEvery: 10 })
// the shortest window the chain takes for it (the whole run is every verifier's sample here, whatever their count)
const WINDOW = minWindow(PROGRAM, 1)
const kr = new Keyring({ type: 'sr25519' })

let h: Harness
const worth = (w: string): bigint => h.free(w) + h.reserved(w)
const task = (id = 0): TaskInfo => h.read<TaskInfo>('Arbitration', 'Tasks', id)!
const register = (who: string, roles: number, stake = STAKE): void => { expect(h.run(who, 'Arbitration', 'register_node', h.registerArgs(who, roles, stake)).error).toBeUndefined() }
const verdict = (w: string, accept = true, id = 0): string | undefined => h.run(w, 'Arbitration', 'submit_verdict', { taskId: id, accept, checkedSteps: accept ? harnessSample(h, w, id) : [] }).error
const toTheEnd = (id = 0): string[] => {
  const ev: string[] = []
  for (let i = 0; i < 200 && task(id).phase === 'Verifying'; i++) ev.push(...h.advance(1))
  return ev
}

/** Alice submits a task of `verifierCount` verifiers; Bob (the only solver) commits; returns once the verifiers are drawn. */
function committed (verifierCount: number, challengeWindow = WINDOW): void {
  const id = Number(h.read<bigint>('Arbitration', 'NextTaskId') ?? 0n)
  expect(h.run('Alice', 'Arbitration', 'submit_task', { programHash: PROGRAM.programHash, program: PROGRAM.programHex, datasetRoot: H(2), skeletonRoot: H(3), steps: 100, checkpointEvery: 10, escrow: REWARD + VREWARD * BigInt(verifierCount), solverReward: REWARD, verifierReward: VREWARD, verifierCount, challengeWindow, solveTimeout: 20 }).error).toBeUndefined()
  h.advance(1)
  expect(task(id).solver).toBe(h.accounts.Bob)
  expect(h.run('Bob', 'Arbitration', 'commit_proof', { taskId: id, proofRoot: H(9), finalStateRoot: H(8), stepCount: 100, checkpoints: [] }).error).toBeUndefined()
  // the randomness block committed_at + 1, then the block that draws from its randomness
  h.advance(2)
}

beforeEach(async () => {
  h = await Harness.create({ reference })
  for (const n of ['Peer3', 'Peer4']) h.accounts[n] = u8aToHex(kr.addFromUri(`//${n}`).publicKey)
})

/** Draws over `n` random block hashes: how often `pred` holds of the drawn set. */
function frequency (n: number, count: number, candidates: Array<{ account: string, stake: bigint }>, pred: (drawn: string[], seed: string) => boolean): number {
  let hits = 0
  for (let i = 0; i < n; i++) {
    const seed = u8aToHex(randomBytes(32))
    if (pred(drawWeighted(seed, 7n, 0, count, candidates), seed)) hits++
  }
  return hits / n
}
const acc = (i: number): string => '0x' + (i + 1).toString(16).padStart(64, '0')
/** two puppets with 500 each, honest verifiers with 1000 and 2000: the puppets hold a quarter of the verifier stake */
const POOL = [{ account: acc(0), stake: 500n }, { account: acc(1), stake: 500n }, { account: acc(2), stake: 1000n }, { account: acc(3), stake: 2000n }]
const PUPPETS = new Set([acc(0), acc(1)])
const N = 4000
/** 4σ of a frequency p over N draws */
const tol = (p: number): number => 4 * Math.sqrt(p * (1 - p) / N)

describe('slot squatting', () => {
  it('a squatter verdict right after the commit is refused; only the drawn verifiers give verdicts, and only they are paid', () => {
    register('Bob', 2)
    // Charlie is Bob's puppet, Dave and Eve are honest: all three verifiers with equal stakes
    for (const n of ['Charlie', 'Dave', 'Eve']) register(n, 4)
    expect(h.run('Alice', 'Arbitration', 'submit_task', { programHash: PROGRAM.programHash, program: PROGRAM.programHex, datasetRoot: H(2), skeletonRoot: H(3), steps: 100, checkpointEvery: 10, escrow: 800n * UNIT, solverReward: REWARD, verifierReward: VREWARD, verifierCount: 2, challengeWindow: WINDOW, solveTimeout: 20 }).error).toBeUndefined()
    h.advance(1)
    expect(h.run('Bob', 'Arbitration', 'commit_proof', { taskId: 0, proofRoot: H(9), finalStateRoot: H(8), stepCount: 100, checkpoints: [] }).error).toBeUndefined()
    // first come is over: in the block right after the commit nobody is assigned, the puppet's accept included
    expect(h.run('Charlie', 'Arbitration', 'submit_verdict', { taskId: 0, accept: false, checkedSteps: [] }).error).toBe('Arbitration.NotAssigned')
    h.advance(1)
    const drawn = assignedNames(h)
    expect(drawn).toHaveLength(2)
    const a = harnessAssignments(h)!
    // drawn from the randomness of committed_at + 1, which nobody could compute when the solver committed
    expect(a.verifiers.every(v => v.seedBlock === task().committedAt + 1)).toBe(true)
    const out = ['Charlie', 'Dave', 'Eve'].filter(n => !drawn.includes(n))
    const before = Object.fromEntries(['Charlie', 'Dave', 'Eve'].map(n => [n, worth(n)]))
    for (const n of out) expect(verdict(n)).toBe('Arbitration.NotAssigned')
    for (const n of drawn) expect(verdict(n)).toBeUndefined()
    expect(toTheEnd()).toContain('Arbitration.TaskSettled')
    for (const n of drawn) expect(worth(n) - before[n]).toBe(VREWARD)
    for (const n of out) expect(worth(n)).toBe(before[n])
  })

  it('puppets holding s_p of the verifier stake S are drawn with probability s_p / S, never more', () => {
    // one slot: a puppet gets it with probability 1000/4000
    const one = frequency(N, 1, POOL, d => PUPPETS.has(d[0]))
    expect(Math.abs(one - 0.25)).toBeLessThan(tol(0.25))
    // both slots of two (what a solver needs to pass a faked step unreplayed): without replacement
    const both = (500 / 4000) * (500 / 3500) * 2
    const all = frequency(N, 2, POOL, d => d.every(x => PUPPETS.has(x)))
    expect(Math.abs(all - both)).toBeLessThan(tol(both))
    expect(all).toBeLessThan(0.25 * 0.25 + tol(both))
  })

  it('a drawn puppet cannot choose its sample: it is fixed by the randomness block and its account', () => {
    register('Bob', 2)
    for (const n of ['Charlie', 'Dave']) register(n, 4)
    committed(2)
    const seedBlock = harnessAssignments(h)!.verifiers[0].seedBlock
    const hash = h.read<string>('Randomness', 'ByBlock', seedBlock as never)!
    for (const n of ['Charlie', 'Dave']) {
      const mine = sampleSteps(hash, h.accounts[n], 100, requiredSampleCount(2)).map(s => s - 1)
      expect(harnessSample(h, n)).toEqual(mine)
    }
    // the other's sample (steps that miss a faked one, say) does not do
    expect(h.run('Charlie', 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: harnessSample(h, 'Dave') }).error).toBe('Arbitration.SampleNotChecked')
  })
})

describe('who can be drawn', () => {
  it('the submitter and the solver are never drawn, however much verifier stake they hold, nor anyone twice', () => {
    // Alice (submitter) and Bob (solver) hold 50 times the honest verifiers' stake, with the verifier role
    // (the honest ones never vote here: their stakes cover the silence penalties of every task)
    register('Alice', 1 | 4, 1_000_000n * UNIT)
    register('Bob', 2 | 4, 1_000_000n * UNIT)
    register('Dave', 4, 20_000n * UNIT)
    register('Eve', 4, 20_000n * UNIT)
    for (let i = 0; i < 6; i++) {
      committed(2)
      expect(assignedNames(h, i).sort()).toEqual(['Dave', 'Eve'])
      expect(verdict('Alice', true, i)).toBe('Arbitration.SubmitterCannotVerify')
      expect(verdict('Bob', true, i)).toBe('Arbitration.SolverCannotVerify')
    }
    // three slots with two eligible accounts: the task is not handed to a solver, whose work could not be verified
    const id = Number(h.read<bigint>('Arbitration', 'NextTaskId') ?? 0n)
    expect(h.run('Alice', 'Arbitration', 'submit_task', { programHash: PROGRAM.programHash, program: PROGRAM.programHex, datasetRoot: H(2), skeletonRoot: H(3), steps: 100, checkpointEvery: 10, escrow: REWARD + VREWARD * 3n, solverReward: REWARD, verifierReward: VREWARD, verifierCount: 3, challengeWindow: WINDOW, solveTimeout: 20 }).error).toBeUndefined()
    expect(h.advance(1)).toContain('Arbitration.AwaitingVerifierStake')
    expect(task(id).phase).toBe('Unassigned')
  })
})

describe('silence and bare rejects', () => {
  it('a silent assigned verifier earns nothing, pays the silence penalty and is replaced from randomness drawn after its deadline', () => {
    register('Bob', 2)
    register('Dave', 4)
    committed(1)
    expect(assignedNames(h)).toEqual(['Dave'])
    // Eve registers after the draw: she can only be a replacement
    register('Eve', 4)
    const [dave, eve, bob] = [worth('Dave'), worth('Eve'), worth('Bob')]
    const deadline = harnessAssignments(h)!.verifiers[0].deadline
    const ev = toTheEnd()
    expect(ev).toContain('Arbitration.AssignmentLapsed')
    // Dave never voted: no reward, the penalty instead
    expect(worth('Dave') - dave).toBe(-silencePenalty({ disputeBond: BOND } as never, { solverReward: REWARD }))
    const a = harnessAssignments(h)!
    const eves = a.verifiers.find(v => v.verifier === h.accounts.Eve)!
    // the replacement's randomness is that of a block after Dave's deadline: Dave could not know who would replace him
    expect(eves.seedBlock).toBeGreaterThan(deadline)
    expect(eves.round).toBe(1)
    expect(worth('Eve') - eve).toBeLessThan(0n) // in this run the replacement stayed silent too, and lapsed in her round
    expect(worth('Bob')).toBe(bob) // no quorum: not paid, not slashed
    expect(task().phase).toBe('Unverified')
  })

  it('a replacement\'s verdict completes the quorum: the silent one loses the penalty, the replacement earns the reward', () => {
    register('Bob', 2)
    register('Dave', 4)
    committed(1)
    register('Eve', 4)
    const [dave, eve, bob] = [worth('Dave'), worth('Eve'), worth('Bob')]
    for (let i = 0; i < 2 * WINDOW && !assignedNames(h).includes('Eve'); i++) h.advance(1)
    expect(assignedNames(h)).toEqual(['Eve'])
    expect(verdict('Dave')).toBe('Arbitration.NotAssigned')
    expect(verdict('Eve')).toBeUndefined()
    expect(toTheEnd()).toContain('Arbitration.TaskSettled')
    expect(worth('Dave') - dave).toBe(-(BOND + REWARD))
    expect(worth('Eve') - eve).toBe(VREWARD)
    expect(worth('Bob') - bob).toBe(REWARD)
  })

  it('a bare reject (no dispute, no availability challenge) neither blocks the payment nor earns: its verifier counts as silent and is replaced', () => {
    register('Bob', 2)
    register('Dave', 4)
    register('Eve', 4)
    committed(2)
    expect(assignedNames(h).sort()).toEqual(['Dave', 'Eve'])
    register('Ferdie', 4)
    const [dave, eve, ferdie, bob] = [worth('Dave'), worth('Eve'), worth('Ferdie'), worth('Bob')]
    expect(verdict('Dave', false)).toBeUndefined()
    expect(verdict('Eve')).toBeUndefined()
    // the round closes once Dave's backing grace (late-backing.ts) is over, past the window
    for (let i = 0; i < 2 * WINDOW + 40 && !assignedNames(h).includes('Ferdie'); i++) h.advance(1)
    expect(harnessAssignments(h)!.verifiers.find(v => v.verifier === h.accounts.Dave)!.status).toBe('Lapsed')
    expect(verdict('Ferdie')).toBeUndefined()
    expect(toTheEnd()).toContain('Arbitration.TaskSettled')
    expect(task().phase).toBe('Settled')
    expect(worth('Bob') - bob).toBe(REWARD)
    expect(worth('Eve') - eve).toBe(VREWARD)
    expect(worth('Ferdie') - ferdie).toBe(VREWARD)
    expect(worth('Dave') - dave).toBeLessThan(0n)
    expect(task().verdicts.find(v => v.verifier === h.accounts.Dave)!.void).toBe(true)
  })
})

describe('re-drawing cannot be steered', () => {
  it('a puppet going silent whenever it is drawn lowers its coalition\'s odds of the slot below its stake share, and pays for it', () => {
    // one slot; the coalition is two puppets (1000 of 4000). Strategy: the puppet acc(0) goes silent when drawn,
    // hoping its replacement is acc(1); the replacement is drawn from a later block's randomness without acc(0)
    let honest = 0; let strategic = 0; let silences = 0
    for (let i = 0; i < N; i++) {
      const first = drawWeighted(u8aToHex(randomBytes(32)), 7n, 0, 1, POOL)[0]
      if (PUPPETS.has(first)) honest++
      if (first !== acc(0)) { if (PUPPETS.has(first)) strategic++; continue }
      silences++
      const second = drawWeighted(u8aToHex(randomBytes(32)), 7n, 1, 1, POOL.filter(x => x.account !== first))[0]
      if (PUPPETS.has(second)) strategic++
    }
    expect(Math.abs(honest / N - 0.25)).toBeLessThan(tol(0.25))
    // 1/8 + 1/8 · 500/3500 ≈ 0.143 < 0.25
    expect(strategic / N).toBeLessThan(0.25)
    expect(Math.abs(strategic / N - (0.125 + 0.125 * 500 / 3500))).toBeLessThan(tol(0.143))
    expect(silences).toBeGreaterThan(0)
  })

  it('a submitter whose puppets stay silent in every round to keep its escrow loses more than the reward it withholds', () => {
    // the only verifiers are Alice's puppets: whoever is drawn stays silent, round after round
    register('Bob', 2)
    for (const n of ['Peer1', 'Peer2', 'Peer3', 'Peer4']) register(n, 4)
    const coalition = (): bigint => ['Alice', 'Peer1', 'Peer2', 'Peer3', 'Peer4'].reduce((s, n) => s + worth(n), 0n)
    const start = coalition()
    committed(1)
    const ev = toTheEnd()
    expect(ev.filter(e => e === 'Arbitration.AssignmentLapsed')).toHaveLength(MAX_VERIFY_EXTENSIONS + 1)
    expect(task().phase).toBe('Unverified')
    // honest play: Alice pays R + V and her puppet earns V back: the coalition is down R
    expect(coalition() - start).toBeLessThan(-REWARD)
  })
})

describe('stake that answers for the penalty', () => {
  it('a verifier is drawn only while its stake not bound to its other assignments covers the task\'s penalty', () => {
    register('Bob', 2)
    // Dave holds the minimum stake, 1000: a task of R = 600 binds B + R = 700 of it
    const min = h.read<{ minStake: bigint }>('Arbitration', 'Params')!.minStake
    register('Dave', 4, min)
    committed(1)
    expect(assignedNames(h, 0)).toEqual(['Dave'])
    // a second task while the first is open: 700 + 700 > 1000, so Dave cannot answer for both;
    // Eve, with the stake for it, is drawn instead, however small her share of the stake
    register('Eve', 4, min)
    committed(1)
    expect(assignedNames(h, 1)).toEqual(['Eve'])
    expect(silencePenalty(h.read('Arbitration', 'Params')!, task(1))).toBeGreaterThan(min - silencePenalty(h.read('Arbitration', 'Params')!, task(0)))
  })

  // A submitter asking a reward R above what any verifier's stake can answer for: before, the task went to a
  // solver anyway, the draw fell back to every eligible verifier, and the submitter's minimum-stake puppet,
  // drawn and silent, lost its whole stake (< R) while the task ended Unverified and the escrow came back:
  // the solver's work for less than R. Each test fails if the solver worked and the coalition paid less than R.
  const HUGE = 5000n * UNIT
  const hugeTask = (): string | undefined => h.run('Alice', 'Arbitration', 'submit_task', { programHash: PROGRAM.programHash, program: PROGRAM.programHex, datasetRoot: H(2), skeletonRoot: H(3), steps: 100, checkpointEvery: 10, escrow: HUGE + VREWARD, solverReward: HUGE, verifierReward: VREWARD, verifierCount: 1, challengeWindow: WINDOW, solveTimeout: 20 }).error
  /** Bob commits (honestly) whenever he is selected; every drawn verifier (Alice's puppets) stays silent; returns whether Bob worked. */
  const playOut = (): boolean => {
    let worked = false
    for (let i = 0; i < 5000 && !['Settled', 'Failed', 'Unverified', 'Expired'].includes(task().phase); i++) {
      if (task().phase === 'Solving' && task().solver === h.accounts.Bob && !worked) {
        expect(h.run('Bob', 'Arbitration', 'commit_proof', { taskId: 0, proofRoot: H(9), finalStateRoot: H(8), stepCount: 100, checkpoints: [] }).error).toBeUndefined()
        worked = true
      }
      h.advance(1)
    }
    return worked
  }

  it('a reward larger than any verifier\'s stake: the task never reaches a solver, and expires with the escrow refunded', () => {
    register('Bob', 2)
    const min = h.read<{ minStake: bigint }>('Arbitration', 'Params')!.minStake
    // Dave is Alice's puppet, with the minimum stake: it cannot answer for B + R
    register('Dave', 4, min)
    expect(silencePenalty(h.read('Arbitration', 'Params')!, { solverReward: HUGE })).toBeGreaterThan(min)
    const coalition = (): bigint => worth('Alice') + worth('Dave')
    const [start, bob] = [coalition(), worth('Bob')]
    expect(hugeTask()).toBeUndefined()
    expect(h.advance(1)).toContain('Arbitration.AwaitingVerifierStake')
    const worked = playOut()
    // the payoff first: had the solver worked, the coalition must have paid more than R
    if (worked) expect(coalition() - start).toBeLessThan(-HUGE)
    expect(worked).toBe(false)
    expect(task().phase).toBe('Expired')
    expect(worth('Bob')).toBe(bob)
    expect(coalition()).toBe(start)
    expect(h.reserved('Alice')).toBe(0n)
  })

  it('stake that answered at the selection cannot leave before the draw: the reserved puppet is drawn and pays more than R', () => {
    register('Bob', 2)
    const min = h.read<{ minStake: bigint }>('Arbitration', 'Params')!.minStake
    // Alice's puppets: Ferdie with the stake to answer for the task (it lets the task reach Bob), Dave with the minimum
    register('Ferdie', 4, 10_000n * UNIT)
    register('Dave', 4, min)
    const coalition = (): bigint => worth('Alice') + worth('Dave') + worth('Ferdie')
    const start = coalition()
    expect(hugeTask()).toBeUndefined()
    h.advance(1)
    expect(task().solver).toBe(h.accounts.Bob)
    // once Bob works, Ferdie tries to leave the pool so that only the minimum-stake puppet can be drawn
    const left = h.run('Ferdie', 'Arbitration', 'unregister', {}).error
    // or, failing that, to stop being a verifier
    if (left !== undefined) expect(h.run('Ferdie', 'Arbitration', 'set_roles', { roles: 2 }).error).toBeUndefined()
    const worked = playOut()
    expect(worked).toBe(true)
    // honest play costs the coalition R; the stall must cost more
    expect(coalition() - start).toBeLessThan(-HUGE)
    expect(left).toBe('Arbitration.HasActiveTasks')
    expect(task().phase).toBe('Unverified')
    const drawn = harnessAssignments(h)!.verifiers.map(v => v.verifier)
    expect(drawn).toEqual([h.accounts.Ferdie])
    expect(harnessAssignments(h)!.verifiers[0].status).toBe('Lapsed')
  })
})
