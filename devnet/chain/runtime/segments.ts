import { committedStep, segmentCount, segmentLength } from '../../../protocols/pol/segments.js'
import type { SegmentRule } from '../../../protocols/dispute/transcript.js'
import type { TaskInfo } from '../../../protocols/pallet-types.js'
import type { Context } from './context.js'

// Tasks whose proof commits a state root every m > 1 steps (part of the
// Arbitration pallet; segment-spec.ts, docs/disputes.md "Segments"). Their
// disputes are over a segment j: disputed_step is j, the defender's first
// message is its signed roots inside the segment, and a claim is about the
// step its signed messages name inside it. At m = 1 nothing here applies.

const P = 'Arbitration'

/** The task's state-root spacing m (1 unless its program names another). */
export function rootEveryOfTask (ctx: Context, taskId: bigint): number {
  return ctx.store.get<number>(P, 'TaskRootEvery', taskId) ?? 1
}

export function setRootEvery (ctx: Context, taskId: bigint, m: number): void {
  if (m > 1) ctx.store.put(P, 'TaskRootEvery', taskId, m)
}

/** Segments a dispute may name: the proof's (a diverged proof's last step has no segment game yet: judgeClaim refuses it). */
export function disputableSegments (t: Pick<TaskInfo, 'stepCount' | 'divergence'>, m: number): number {
  return t.divergence === null ? segmentCount(t.stepCount, m) : 0
}

/** The continuation rule's view of a segment dispute, or undefined for a one-step dispute. */
export function segmentRuleOf (ctx: Context, d: { taskId: bigint, disputedStep: number }, t: Pick<TaskInfo, 'stepCount'>): SegmentRule | undefined {
  const m = rootEveryOfTask(ctx, d.taskId)
  if (m === 1) return undefined
  return { j: d.disputedStep, first: committedStep(d.disputedStep, t.stepCount, m), length: segmentLength(d.disputedStep, t.stepCount, m) }
}

/**
 * The tape allowance of a segment dispute's defender: its segment (seq 0)
 * and its commit (seq 2) each need a re-run from the checkpoint before the
 * segment to at most the segment's end, (c_j mod k) + L steps at the task's
 * own time per step.
 */
export function segmentAllowance (t: Pick<TaskInfo, 'steps' | 'checkpointEvery' | 'solveTimeout'>, rule: SegmentRule): number {
  return Math.ceil(((rule.first % t.checkpointEvery) + rule.length) * t.solveTimeout / t.steps)
}
