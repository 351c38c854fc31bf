import { Keyring } from '@polkadot/keyring'
import { u8aToHex } from '@polkadot/util'
import { beforeEach, describe, expect, it } from 'vitest'
import { UNIT } from '../../../devnet/chain/dev-spec.js'
import type { Params, TaskInfo } from '../../../devnet/chain/runtime/arbitration.js'
import { TREASURY } from '../../../devnet/chain/runtime/balances.js'
import { nominalHold, rentDeposit, rentFor } from '../../../devnet/chain/runtime/capacity-rent.js'
import { MAX_VERIFY_EXTENSIONS } from '../../../devnet/chain/runtime/spec.js'
import * as reference from '../../../protocols/reference/index.js'
import { minWindow, taskProgram } from '../../helpers/program.js'
import { harnessSample } from '../../helpers/verdict-sample.js'
import { Harness } from './harness.js'

// Capacity rent (docs/economics.md, "Capacity griefing"): what a task pays
// for the verifier stake it holds bound, from a deposit taken at submission.

const H = (b: number): string => '0x' + b.toString(16).padStart(2, '0').repeat(32)
const PROGRAM = taskProgram()
const BOND = 100n * UNIT
const WINDOW = minWindow(PROGRAM, 2)
const OFFER = { solverReward: 600n * UNIT, verifierReward: 100n * UNIT, verifierCount: 2, challengeWindow: WINDOW, solveTimeout: 20 }
const ARGS = {
  programHash: PROGRAM.programHash, program: PROGRAM.programHex, datasetRoot: H(2), skeletonRoot: H(3), steps: 100, checkpointEvery: 10,
  escrow: 800n * UNIT, ...OFFER
}

let h: Harness
const task = (): TaskInfo => h.read<TaskInfo>('Arbitration', 'Tasks', 0)!
const params = (): Params => h.read<Params>('Arbitration', 'Params')!
const register = (who: string, roles: number): void => { expect(h.run(who, 'Arbitration', 'register_node', h.registerArgs(who, roles, 2000n * UNIT)).error).toBeUndefined() }

describe('capacity rent', () => {
  beforeEach(async () => { h = await Harness.create({ reference }) })

  it('the deposit is the rent of verifier_count slots of B + R over the longest hold the task\'s own parameters allow', () => {
    expect(nominalHold(OFFER)).toBe(20 + (MAX_VERIFY_EXTENSIONS + 1) * (WINDOW + 1) + 2)
    const deposit = rentDeposit(params(), OFFER)
    expect(deposit).toBe(rentFor(params().capacityRentPpb, 2n * (BOND + 600n * UNIT) * BigInt(nominalHold(OFFER))))
    // it grows with the capacity asked for and with the time it may be held
    expect(rentDeposit(params(), { ...OFFER, verifierCount: 4 })).toBe(2n * deposit)
    expect(rentDeposit(params(), { ...OFFER, challengeWindow: 500 })).toBeGreaterThan(deposit)
    expect(h.run('Alice', 'Arbitration', 'submit_task', ARGS).error).toBeUndefined()
    expect(h.reserved('Alice')).toBe(800n * UNIT + deposit)
  })

  it('a submitter who can pay the escrow but not the deposit cannot submit', () => {
    const poor = u8aToHex(new Keyring({ type: 'sr25519' }).addFromUri('//Poor').publicKey)
    h.accounts.Poor = poor
    expect(h.run('Alice', 'Balances', 'transfer_keep_alive', { dest: { Id: poor }, value: 800n * UNIT + rentDeposit(params(), OFFER) / 2n }).error).toBeUndefined()
    expect(h.run('Poor', 'Arbitration', 'submit_task', ARGS).error).toBe('Arbitration.InsufficientRentDeposit')
    // the whole call is undone: no escrow reserved, no task
    expect(h.reserved('Poor')).toBe(0n)
    expect(h.read('Arbitration', 'Tasks', 0)).toBeUndefined()
    expect(h.read<bigint>('Arbitration', 'NextTaskId')).toBe(0n)
  })

  it('an honest task pays, to the treasury, the rent of two slots for every block from its selection to its settlement; the rest of the deposit comes back', () => {
    register('Bob', 2)
    for (const n of ['Dave', 'Eve']) register(n, 4)
    expect(h.run('Alice', 'Arbitration', 'submit_task', ARGS).error).toBeUndefined()
    const [alice, treasury] = [h.free('Alice') + h.reserved('Alice'), h.free(TREASURY)]
    h.advance(1)
    const selectedAt = h.number
    expect(task().phase).toBe('Solving')
    h.advance(3)
    expect(h.run('Bob', 'Arbitration', 'commit_proof', { taskId: 0, proofRoot: H(9), finalStateRoot: H(8), stepCount: 100, checkpoints: [] }).error).toBeUndefined()
    h.advance(2)
    for (const v of ['Dave', 'Eve']) expect(h.run(v, 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: harnessSample(h, v) }).error).toBeUndefined()
    for (let i = 0; i < WINDOW + 5 && task().phase === 'Verifying'; i++) h.advance(1)
    expect(task().phase).toBe('Settled')
    // reserved (selection to first draw), then assigned (draw to settlement): two slots bound in every block after the selection's
    const rent = rentFor(params().capacityRentPpb, 2n * (BOND + 600n * UNIT) * BigInt(h.number - selectedAt))
    expect(h.rentPaid('Alice')).toBe(rent)
    expect(rent).toBeLessThan(rentDeposit(params(), OFFER))
    expect(alice - (h.free('Alice') + h.reserved('Alice'))).toBe(600n * UNIT + 200n * UNIT + rent)
    expect(h.reserved('Alice')).toBe(0n)
    expect(h.free(TREASURY) - treasury).toBe(rent)
    expect(h.read('Arbitration', 'CapacityRents', 0)).toBeUndefined()
    // the solver and the verifiers pay none
    for (const n of ['Bob', 'Dave', 'Eve']) expect(h.rentPaid(n)).toBe(0n)
  })

  it('a task waiting for verifier stake holds none and pays none', () => {
    register('Bob', 2)
    register('Dave', 4)
    expect(h.run('Alice', 'Arbitration', 'submit_task', ARGS).error).toBeUndefined()
    expect(h.advance(20)).toContain('Arbitration.AwaitingVerifierStake')
    expect(h.read<{ solving: bigint, held: bigint }>('Arbitration', 'CapacityRents', 0)).toMatchObject({ solving: 0n, held: 0n })
  })

  it('with no rent in genesis nothing is reserved for it nor paid', async () => {
    h = await Harness.create({ reference, capacityRentPpb: 0 })
    register('Bob', 2)
    for (const n of ['Dave', 'Eve']) register(n, 4)
    expect(h.run('Alice', 'Arbitration', 'submit_task', ARGS).error).toBeUndefined()
    expect(h.reserved('Alice')).toBe(800n * UNIT)
    h.advance(3)
    expect(h.run('Bob', 'Arbitration', 'release_task', { taskId: 0 }).error).toBeUndefined()
    expect(h.rentPaid('Bob')).toBe(0n)
    expect(h.read('Arbitration', 'CapacityRents', 0)).toBeUndefined()
  })
})
