import { hexToU8a, u8aToHex } from '@polkadot/util'
import { expect } from 'vitest'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import type { TaskInfo } from '../../devnet/chain/runtime/arbitration.js'
import { merkleRoot, sha256, stateRoot, type TensorData } from '../../protocols/commit/index.js'
import { assembleServedState, buildServeParts } from '../../protocols/availability/index.js'
import { buildAvailabilityResponse, encodeAvailabilityResponse } from './availability-v1.js'
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
/** the committed roots: STATE at STEP and at step 0 (two checkpoints a solver can serve), stand-ins elsewhere */
export const ROOTS = Array.from({ length: 11 }, (_, s) => s === STEP || s === 0 ? stateRoot(STATE, s) : sha256(Uint8Array.of(s)))
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

/**
 * Proof of possession only: the sampled rows of STEP for this seed (availability-v1.ts
 * availabilitySeed), which used to answer a challenge; the chain now refuses it (an answer serves).
 */
export function availabilityAnswer (seed: Uint8Array, state: TensorData[] = STATE): Uint8Array {
  return encodeAvailabilityResponse(buildAvailabilityResponse(state, STEP, ROOTS, seed))
}

/** The serve of the state at `step` (STEP or 0) on chain (protocols/availability/serve.ts), in parts of at most `maxBytes`. */
export function serveParts (state: TensorData[] = STATE, maxBytes?: number, step = STEP): Uint8Array[] {
  return buildServeParts(state, step, ROOTS, undefined, { maxBytes })
}

/**
 * The solver serves STEP on chain for challenge `id`, part by part; returns each
 * call's error (none: undefined) and the parts as the chain emitted them
 * (AvailabilityServed), what a challenger reads.
 */
export function serveOnChain (h: Harness, solver: string, id: number | bigint, parts = serveParts()): { error?: string, emitted: Uint8Array[] } {
  const emitted: Uint8Array[] = []
  for (const p of parts) {
    const error = h.run(solver, 'Arbitration', 'respond_availability', { challengeId: id, response: u8aToHex(p) }).error
    if (error !== undefined) return { error, emitted }
    for (const e of h.lastEvents) {
      const s = (e.event as { Arbitration?: { AvailabilityServed?: { response: string } } }).Arbitration?.AvailabilityServed
      if (s !== undefined) emitted.push(hexToU8a(s.response))
    }
  }
  return { emitted }
}

/** What a served challenger rebuilds from the emitted parts: the committed state at STEP (throws otherwise). */
export function servedState (parts: Uint8Array[]): TensorData[] {
  return assembleServedState({ proofRoot: hexToU8a(PROOF_ROOT), step: STEP, stepCount: 10 }, parts)
}
