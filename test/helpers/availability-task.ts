import { u8aToHex } from '@polkadot/util'
import { expect } from 'vitest'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import type { TaskInfo } from '../../devnet/chain/runtime/arbitration.js'
import { merkleRoot, sha256, stateRoot, type TensorData } from '../../protocols/commit/index.js'
import { buildAvailabilityResponse, encodeAvailabilityResponse } from '../../protocols/availability/index.js'
import type { Harness } from '../unit/chain/harness.js'
import { taskProgram } from './program.js'

// The task the data-availability tests challenge on the pure runtime: 10
// steps with checkpoints every 5, whose committed state at STEP is a small
// MLP-like state the solver can answer sampled rows of (the other roots are
// stand-ins no challenge reaches).

export const STAKE = 2000n * UNIT
export const PROGRAM = taskProgram({ steps: 10, checkpointEvery: 5 })
/** a checkpoint step (checkpoint_every 5) */
export const STEP = 5

/** float32 values sin(seed · 1000 + i), distinct per tensor */
export function tensor (shape: number[], seed: number): TensorData {
  const n = shape.reduce((a, b) => a * b, 1)
  return { shape, dtype: 'float32', values: Float32Array.from({ length: n }, (_, i) => Math.sin(seed * 1000 + i)) }
}
/** two weights and two biases */
export const STATE = [tensor([12, 6], 1), tensor([6], 2), tensor([6, 3], 3), tensor([3], 4)]
export const ROOTS = Array.from({ length: 11 }, (_, s) => s === STEP ? stateRoot(STATE, STEP) : sha256(Uint8Array.of(s)))
export const PROOF_ROOT = u8aToHex(merkleRoot(ROOTS))

const H = (b: number): string => '0x' + b.toString(16).padStart(2, '0').repeat(32)

/** Alice submits the task (2 verifiers, escrow 1000); the next block selects its solver, whose name is returned. */
export function submitAvailabilityTask (h: Harness, o: { solverReward?: bigint, challengeWindow?: number } = {}): string {
  expect(h.run('Alice', 'Arbitration', 'submit_task', {
    programHash: PROGRAM.programHash, program: PROGRAM.programHex, datasetRoot: H(2), skeletonRoot: H(3), steps: 10, checkpointEvery: 5, escrow: 1000n * UNIT,
    solverReward: o.solverReward ?? 600n * UNIT, verifierReward: 100n * UNIT, verifierCount: 2, challengeWindow: o.challengeWindow ?? 12, solveTimeout: 20
  }).error).toBeUndefined()
  h.advance(1)
  const solver = h.read<TaskInfo>('Arbitration', 'Tasks', 0)!.solver
  return Object.entries(h.accounts).find(([, v]) => v === solver)?.[0] ?? String(solver)
}

/** The solver commits ROOTS as its proof. */
export function commitAvailabilityProof (h: Harness, solver: string): void {
  expect(h.run(solver, 'Arbitration', 'commit_proof', { taskId: 0, proofRoot: PROOF_ROOT, finalStateRoot: u8aToHex(ROOTS[10]), stepCount: 10, checkpoints: ['0x01'] }).error).toBeUndefined()
}

/** The solver's answer to a challenge of STEP with this seed (protocols/availability availabilitySeed), from `state`. */
export function availabilityAnswer (seed: Uint8Array, state: TensorData[] = STATE): Uint8Array {
  return encodeAvailabilityResponse(buildAvailabilityResponse(state, STEP, ROOTS, seed))
}
