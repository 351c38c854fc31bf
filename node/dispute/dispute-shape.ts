import type { ProofSpacing } from '../../protocols/dispute/index.js'
import { segmentCount, segmentOfStep } from '../../protocols/pol/segments.js'

// What a dispute is about, as the chain numbers it (docs/disputes.md
// "Segments"): at m = 1 one step, disputed_step = the step. At m > 1 a
// segment j, except a diverged proof's last step k = step_count, which has
// no post-state and so no segment: disputed_step = ⌈k / m⌉ (one past the
// segments) names it, and it is a one-step dispute whose players read the
// proof's leaves (`spacing`), its messages signed without the segment context.

export type DisputeShape = { kind: 'step', step: number, spacing?: ProofSpacing } | { kind: 'segment', j: number }

type TaskShape = { stepCount: number, divergence: unknown }

/** The dispute an on-chain `disputedStep` of a task with a root every `m` steps opens. */
export function disputeShapeOf (task: TaskShape, m: number, disputedStep: number): DisputeShape {
  if (m === 1) return { kind: 'step', step: disputedStep }
  if (task.divergence != null && disputedStep === segmentCount(task.stepCount, m)) return { kind: 'step', step: task.stepCount, spacing: { rootEvery: m, steps: task.stepCount } }
  return { kind: 'segment', j: disputedStep }
}

/** The on-chain `disputed_step` that disputes 1-based engine step `step`, and the dispute it opens. */
export function disputeOfStep (task: TaskShape, m: number, step: number): { disputedStep: number, shape: DisputeShape } {
  if (m === 1) return { disputedStep: step - 1, shape: { kind: 'step', step: step - 1 } }
  if (task.divergence != null && step - 1 === task.stepCount) {
    const disputedStep = segmentCount(task.stepCount, m)
    return { disputedStep, shape: disputeShapeOf(task, m, disputedStep) }
  }
  const { j } = segmentOfStep(step - 1, task.stepCount, m)
  return { disputedStep: j, shape: { kind: 'segment', j } }
}
