import { describe, expect, it } from 'vitest'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import type { Params, TaskInfo } from '../../devnet/chain/runtime/arbitration.js'
import { TREASURY } from '../../devnet/chain/runtime/balances.js'
import { rentFor } from '../../devnet/chain/runtime/capacity-rent.js'
import * as reference from '../../protocols/reference/index.js'
import { minRewards, minWindow, taskProgram } from '../helpers/program.js'
import { harnessAssignments, harnessSample } from '../helpers/verdict-sample.js'
import { Harness } from '../unit/chain/harness.js'

// Capacity griefing (docs/economics.md): a task binds dispute_bond +
// solver_reward of verifier_count verifiers' stake from its solver's selection
// to its end, and other tasks wait for free stake (AwaitingVerifierStake). A
// submitter filling that capacity with tasks of its own used to pay only their
// rewards, which it chooses (zero), or a release fee whatever the time held.
// Each test fails if the griefer holds the capacity while others' tasks wait
// at no cost, or at a cost that does not grow with the time held.

const H = (b: number): string => '0x' + b.toString(16).padStart(2, '0').repeat(32)
const PROGRAM = taskProgram({ steps: 100, checkpointEvery: 10 })
const BOND = 100n * UNIT
const MIN_STAKE = 1000n * UNIT
const FINAL = ['Settled', 'Failed', 'Unverified', 'Expired']

interface Offer { reward: bigint, vreward: bigint, count: number, window: number, solveTimeout: number }
// the shortest challenge window the chain takes for the program (2 verifiers), and the least rewards
const WINDOW = minWindow(PROGRAM, 2)
const FLOOR = minRewards(PROGRAM, 2)
const HONEST: Offer = { reward: 100n * UNIT, vreward: 10n * UNIT, count: 2, window: WINDOW, solveTimeout: 20 }

interface Chain {
  h: Harness
  task: (id: number) => TaskInfo
  worth: (w: string) => bigint
  register: (who: string, roles: number, stake: bigint) => void
  submit: (who: string, o: Offer) => number
  submitMany: (who: string, o: Offer, n: number) => number[]
  /** the verifier stake the tasks `ids` hold bound now */
  bound: (ids: number[]) => bigint
  rate: () => number
}

async function chain (): Promise<Chain> {
  const h = await Harness.create({ reference })
  const task = (id: number): TaskInfo => h.read<TaskInfo>('Arbitration', 'Tasks', id as never)!
  const worth = (w: string): bigint => h.free(w) + h.reserved(w)
  const register = (who: string, roles: number, stake: bigint): void => { expect(h.run(who, 'Arbitration', 'register_node', h.registerArgs(who, roles, stake)).error).toBeUndefined() }
  /** `n` tasks of `who` in one block; returns their ids */
  const submitMany = (who: string, o: Offer, n: number): number[] => {
    const first = Number(h.read<bigint>('Arbitration', 'NextTaskId') ?? 0n)
    const args = {
      programHash: PROGRAM.programHash, program: PROGRAM.programHex, datasetRoot: H(2), skeletonRoot: H(3), steps: 100, checkpointEvery: 10,
      escrow: o.reward + o.vreward * BigInt(o.count),
      solverReward: o.reward, verifierReward: o.vreward, verifierCount: o.count, challengeWindow: o.window, solveTimeout: o.solveTimeout
    }
    for (const r of h.block(Array.from({ length: n }, () => [who, 'Arbitration', 'submit_task', args])).results) expect(r.error).toBeUndefined()
    return Array.from({ length: n }, (_, i) => first + i)
  }
  const submit = (who: string, o: Offer): number => submitMany(who, o, 1)[0]
  // measured here, not read from the runtime's books: B + R of every verifier reserved for, or assigned to, each open task now
  const bound = (ids: number[]): bigint => ids.filter(id => !FINAL.includes(task(id).phase)).reduce((sum, id) => {
    const slots = (h.read<string[]>('Arbitration', 'VerifierReservations', id as never) ?? []).length +
      (harnessAssignments(h, id)?.verifiers.filter(v => v.status === 'Active').length ?? 0)
    return sum + BigInt(slots) * (BOND + task(id).solverReward)
  }, 0n)
  const rate = (): number => h.read<Params>('Arbitration', 'Params')!.capacityRentPpb
  return { h, task, worth, register, submit, submitMany, bound, rate }
}

describe('a submitter fills the verifier capacity with tasks of its own', () => {
  it('zero-reward tasks, trained and verified: the griefer pays the rent of the stake it held while an honest task waited', async () => {
    const { h, task, worth, register, submit, submitMany, bound, rate } = await chain()
    register('Bob', 2, 2000n * UNIT)
    // two verifiers with just the stake for ten slots of B + R each (R the least reward the chain takes)
    for (const n of ['Dave', 'Eve']) register(n, 4, 10n * (BOND + FLOOR.solverReward))
    const window = 60
    const [ferdie, treasury] = [worth('Ferdie'), worth(TREASURY)]
    // Ferdie asks as little as the chain takes of anyone but their stake: the least rewards, a long challenge window
    const griefs = submitMany('Ferdie', { reward: FLOOR.solverReward, vreward: FLOOR.verifierReward, count: 2, window, solveTimeout: 20 }, 10)
    let held = 0n
    const step = (calls: Parameters<Harness['block']>[0] = []): void => { held += bound(griefs); h.block(calls) }
    step()
    for (const id of griefs) expect(task(id).solver).toBe(h.accounts.Bob)
    // Alice's task arrives: every verifier's stake is bound by Ferdie's ten tasks
    const alice = submit('Alice', HONEST)
    held += bound(griefs)
    // Bob trains Ferdie's tasks at once, and Dave and Eve verify them honestly
    step(griefs.map(id => ['Bob', 'Arbitration', 'commit_proof', { taskId: id, proofRoot: H(9), finalStateRoot: H(8), stepCount: 100, checkpoints: [] }]))
    let stalled = 0
    for (let i = 0; i < 400 && !(griefs.every(id => FINAL.includes(task(id).phase)) && task(alice).phase !== 'Unassigned'); i++) {
      if (task(alice).phase === 'Unassigned') stalled++
      const due = griefs.flatMap(id => (harnessAssignments(h, id)?.verifiers ?? [])
        .filter(v => v.status === 'Active' && !task(id).verdicts.some(x => x.verifier === v.verifier))
        .map(v => {
          const who = v.verifier === h.accounts.Dave ? 'Dave' : 'Eve'
          return [who, 'Arbitration', 'submit_verdict', { taskId: id, accept: true, checkedSteps: harnessSample(h, who, id) }] as [string, string, string, Record<string, unknown>]
        }))
      step(due)
    }
    for (const id of griefs) expect(task(id).phase).toBe('Settled')
    // the attack's effect: the honest task could not reach a solver for the whole challenge window
    expect(stalled).toBeGreaterThanOrEqual(window)
    expect(task(alice).phase).toBe('Solving')
    // besides the ten tasks' rewards, paid for their work
    const loss = ferdie - worth('Ferdie') - 10n * (FLOOR.solverReward + 2n * FLOOR.verifierReward)
    // before: 0 (the rewards it chose), however long it held the capacity
    expect(loss).toBeGreaterThan(0n)
    expect(loss).toBe(rentFor(rate(), held))
    // and none of it comes back to a party of the attack: it went to the treasury
    expect(worth(TREASURY) - treasury).toBe(loss)
    expect(h.reserved('Ferdie')).toBe(0n)
  })

  it('a puppet solver sitting on the griefer\'s task: holding the capacity longer costs the coalition more', async () => {
    /** Ferdie's task binds both verifiers' whole stake; Charlie, Ferdie's puppet and the only solver, sits on it until its deadline. */
    const sit = async (solveTimeout: number): Promise<{ cost: bigint, held: bigint, stalled: number, rate: number }> => {
      const { h, task, worth, register, submit, bound, rate } = await chain()
      register('Charlie', 2, MIN_STAKE)
      for (const n of ['Dave', 'Eve']) register(n, 4, MIN_STAKE)
      const coalition = (): bigint => worth('Ferdie') + worth('Charlie')
      const start = coalition()
      const grief = submit('Ferdie', { reward: MIN_STAKE - BOND, vreward: FLOOR.verifierReward, count: 2, window: WINDOW, solveTimeout })
      h.advance(1)
      expect(task(grief).solver).toBe(h.accounts.Charlie)
      const alice = submit('Alice', HONEST)
      let [held, stalled] = [bound([grief]), 0]
      for (let i = 0; i < solveTimeout + 10 && task(grief).phase === 'Solving'; i++) {
        if (task(alice).phase === 'Unassigned') stalled++
        held += bound([grief])
        h.advance(1)
      }
      expect(task(grief).phase).toBe('Unassigned')
      expect(task(grief).excluded).toEqual([h.accounts.Charlie])
      return { cost: start - coalition(), held, stalled, rate: rate() }
    }
    const short = await sit(40)
    const long = await sit(160)
    // the honest task waited out the whole sit both times
    expect(short.stalled).toBeGreaterThanOrEqual(40)
    expect(long.stalled).toBeGreaterThanOrEqual(160)
    // before: the same missed-deadline slash either way, the extra 120 blocks free
    expect(long.cost).toBeGreaterThan(short.cost)
    expect(long.cost - short.cost).toBeGreaterThanOrEqual(rentFor(long.rate, long.held - short.held))
  })
})
