import type { DType, TypedValues } from '../commit/tensor.js'
import type { VerifyFn } from './messages.js'
import type { Divergence } from './nan.js'

// What the chain knows when it judges a claim: the task's commitments, the
// dispute's parties and the reference semantics it re-executes one element with.

export interface ReferenceApi {
  supportsElement: (runtime: string, kernel: string) => boolean
  elementOperands: (runtime: string, op: OpShapeLike, flatIndex: number) => Array<{ input: number, axis: 'row' | 'col', index: number }>
  computeElement: (runtime: string, op: OpShapeLike, flatIndex: number, operands: TypedValues[]) => number
  /** The element's bits (float32 pattern incl. NaN sign/payload); preferred over computeElement when present. */
  computeElementBits?: (runtime: string, op: OpShapeLike, flatIndex: number, operands: TypedValues[]) => number
}
export interface OpShapeLike {
  kernel: string
  attrs: Record<string, unknown>
  inputs: Array<{ shape: number[], dtype: DType }>
  output: { shape: number[], dtype: DType }
  outputIndex?: number
}

export interface JudgeEnv {
  /** the chain's genesis hash (System.BlockHash(0)): signatures are bound to it, the task and the dispute */
  genesis: Uint8Array
  taskId: number
  disputeId: number
  /** on-chain step index: the transition from state `step` to `step + 1` */
  step: number
  challenger: Uint8Array
  defender: Uint8Array
  caller: 'challenger' | 'defender'
  programHash: Uint8Array
  datasetRoot: Uint8Array
  skeletonRoot: Uint8Array
  proofRoot: Uint8Array
  /** transitions the committed proof covers: proof_root has stepCount + 1 leaves, which fixes every step path's length */
  stepCount: number
  /** a diverged proof's divergence point: its last step, `stepCount`, is taped up to it (nan.ts) */
  divergence?: Divergence
  /**
   * A segment dispute (the proof commits a root every m > 1 steps): the
   * dispute is over segment j, `step` is ignored, and the step a claim is
   * about is the one the defender's signed commit (or the challenger's
   * signed opening) names inside the segment.
   */
  segment?: { j: number, rootEvery: number }
  /**
   * Without `segment`, the proof's root spacing m (absent = 1). A one-step
   * dispute of an m > 1 proof is its diverged last step (`stepCount`): its
   * pre-state is leaf ⌈stepCount / m⌉, proven at the depth proofDepth(stepCount, m).
   */
  rootEvery?: number
  reference?: ReferenceApi
  verify: VerifyFn
}

/** What judgeStep works with in a segment dispute: the segment's first step and, when the claim carries it, its signed list of roots. */
export interface SegmentView { first: number, length: number, roots?: Uint8Array[] }
export type StepEnv = JudgeEnv & { seg?: SegmentView }
