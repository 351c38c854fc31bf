import { committedStep, segmentCount, segmentLength } from '../../../protocols/pol/segments.js'
import type { SegmentRule } from '../../../protocols/dispute/transcript.js'
import type { TaskInfo } from '../../../protocols/pallet-types.js'
import type { Context } from './context.js'
import { rerunAllowance, type ReferenceCost } from './rerun-cost.js'

// Tasks whose proof commits a state root every m > 1 steps (part of the
// Arbitration pallet; segment-spec.ts, docs/disputes.md "Segments"). Their
// disputes are over a segment j: disputed_step is j, the defender's first
// message is its signed roots inside the segment, and a claim is about the
// step its signed messages name inside it. One exception: a diverged proof's
// last step k = step_count starts from the last leaf and has no post-state,
// so no segment: disputed_step = ⌈k / m⌉ (one past the last segment) names
// it, and it is a one-step dispute of step k whose pre-state is that leaf.
// At m = 1 nothing here applies.

const P = 'Arbitration'

/** The task's state-root spacing m (1 unless its program names another). */
export function rootEveryOfTask (ctx: Context, taskId: bigint): number {
  return ctx.store.get<number>(P, 'TaskRootEvery', taskId) ?? 1
}

export function setRootEvery (ctx: Context, taskId: bigint, m: number): void {
  if (m > 1) ctx.store.put(P, 'TaskRootEvery', taskId, m)
}

/** What a dispute may name: the proof's segments, and for a diverged proof its last step, one past them. */
export function disputableSegments (t: Pick<TaskInfo, 'stepCount' | 'divergence'>, m: number): number {
  return segmentCount(t.stepCount, m) + (t.divergence === null ? 0 : 1)
}

/** Whether a dispute of an m > 1 task is over its diverged last step (a one-step dispute), not a segment. */
export function isDivergedStepDispute (t: Pick<TaskInfo, 'stepCount' | 'divergence'>, m: number, disputedStep: number): boolean {
  return m > 1 && t.divergence !== null && disputedStep === segmentCount(t.stepCount, m)
}

/** The continuation rule's view of a segment dispute, or undefined for a one-step dispute. */
export function segmentRuleOf (ctx: Context, d: { taskId: bigint, disputedStep: number }, t: Pick<TaskInfo, 'stepCount' | 'divergence'>): SegmentRule | undefined {
  const m = rootEveryOfTask(ctx, d.taskId)
  if (m === 1 || isDivergedStepDispute(t, m, d.disputedStep)) return undefined
  return { j: d.disputedStep, first: committedStep(d.disputedStep, t.stepCount, m), length: segmentLength(d.disputedStep, t.stepCount, m) }
}

/** Whether a dispute's messages are a segment game's (`DisputeContext.segmented`). */
export function isSegmentDispute (ctx: Context, d: { taskId: bigint, disputedStep: number }): boolean {
  const m = rootEveryOfTask(ctx, d.taskId)
  if (m === 1) return false
  const t = ctx.store.get<TaskInfo>(P, 'Tasks', d.taskId)
  return t === undefined || !isDivergedStepDispute(t, m, d.disputedStep)
}

/**
 * The transition a one-step dispute is about: disputed_step at m = 1, the
 * diverged step k = step_count for its dispute at m > 1; undefined for a
 * segment dispute (its claims name the step inside the segment).
 */
export function oneStepOf (ctx: Context, d: { taskId: bigint, disputedStep: number }, t: Pick<TaskInfo, 'stepCount' | 'divergence'>): number | undefined {
  const m = rootEveryOfTask(ctx, d.taskId)
  if (m === 1) return d.disputedStep
  return isDivergedStepDispute(t, m, d.disputedStep) ? t.stepCount : undefined
}

/**
 * The tape allowance of a segment dispute's defender: its segment (seq 0)
 * and its commit (seq 2) each need a re-run from the checkpoint before the
 * segment to at most the segment's end, (c_j mod k) + L steps, priced as
 * every re-run (rerunAllowance).
 */
export function segmentAllowance (t: Pick<TaskInfo, 'steps' | 'checkpointEvery' | 'solveTimeout'>, rule: SegmentRule, cost?: ReferenceCost): number {
  return rerunAllowance(t, (rule.first % t.checkpointEvery) + rule.length, cost)
}
