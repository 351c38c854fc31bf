import { isCommittedStep, leafOfStep, proofDepth } from '../pol/segments.js'
import type { DType } from '../commit/tensor.js'

// What every answer to a data-availability challenge (docs/disputes.md,
// "Withheld checkpoints") is checked with: the tensor headers that bind a
// state to its committed state root, the leaf of proof_root that root must
// be, and the reasons an answer is refused. An answer serves the whole
// checkpoint (serve.ts).
//
// Pure: no I/O. The chain runtime and the solver's node share this code.

/**
 * The `samples` field of a challenge in storage: the row count of the sampled
 * answer a challenge once took; kept so the storage layout does not change (an
 * answer now serves every row).
 */
export const SAMPLE_COUNT = 16

export interface TensorHeader { dtype: DType, shape: number[], rowRoot: Uint8Array, colRoot: Uint8Array }

export type AvailabilityError = 'ResponseTooLarge' | 'InvalidAvailabilityResponse' | 'AvailabilityProofInvalid'

export class AvailabilityRejected extends Error {
  constructor (readonly reason: AvailabilityError, detail: string) { super(`${reason}: ${detail}`); this.name = 'AvailabilityRejected' }
}
function reject (reason: AvailabilityError, detail: string): never { throw new AvailabilityRejected(reason, detail) }

/** Which committed state an answer is checked against. */
export interface AvailabilityContext {
  proofRoot: Uint8Array
  /** the challenged checkpoint step (a committed state: a leaf of proof_root) */
  step: number
  /** steps the solver committed (proof_root has stepCount + 1 leaves, or ⌈stepCount / m⌉ + 1 with a root every m steps) */
  stepCount: number
  /** the task's state-root spacing m (absent = 1): the state after `step` is leaf step / m, every path proofDepth(stepCount, m) long */
  rootEvery?: number
}

/**
 * The leaf of proof_root that commits the state after `step` and the depth of
 * every path to it: with a root every m steps leaf step / m of
 * ⌈stepCount / m⌉ + 1 leaves (m = 1: leaf `step` of stepCount + 1).
 */
export function stateLeafOf (step: number, stepCount: number, m = 1): { leaf: number, depth: number } {
  if (!isCommittedStep(step, stepCount, m)) throw new RangeError(`the state after step ${step} is not a committed leaf (a root every ${m} of ${stepCount} steps)`)
  return { leaf: leafOfStep(step, stepCount, m), depth: proofDepth(stepCount, m) }
}

const is32 = (v: unknown): v is Uint8Array => v instanceof Uint8Array && v.length === 32

/** A tensor header read from an answer (CBOR), checked for shape and sizes before any hashing. */
export function checkedHeader (h: unknown, i: number): TensorHeader {
  const x = h as TensorHeader
  if (typeof x !== 'object' || x === null || !['float32', 'int32', 'bool'].includes(x.dtype) || !is32(x.rowRoot) || !is32(x.colRoot)) reject('InvalidAvailabilityResponse', `tensor ${i}: malformed header`)
  if (!Array.isArray(x.shape) || x.shape.length > 8 || !x.shape.every(d => Number.isInteger(d) && d > 0 && d <= 1 << 24)) reject('InvalidAvailabilityResponse', `tensor ${i}: bad shape`)
  if (x.shape.reduce((a, b) => a * b, 1) > 2 ** 40) reject('InvalidAvailabilityResponse', `tensor ${i}: too large`)
  return x
}
