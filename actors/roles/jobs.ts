import type { RoleContext } from './common.js'

// Per-task jobs of a role actor: each task the chain gives the peer runs as
// its own child actor (one per stage: training, then committing; verifying,
// then voting, ...), so several run side by side. When they actually run is
// the peer's scheduler's business (the ports wait for a free slot); the
// actor's state shows the stage of its oldest job.

export interface TaskJob<S extends string> { taskId: number, stage: S }

/** Child actor id of a task's stage: `<stage>-<taskId>`. */
export const jobId = (stage: string, taskId: number): string => `${stage}-${taskId}`

/** The stage and task of a child actor id made by jobId (undefined for other children). */
export function parseJobId (id: string, stages: readonly string[]): { stage: string, taskId: number } | undefined {
  const m = /^([a-z]+)-(\d+)$/.exec(id)
  if (m == null || !stages.includes(m[1])) return undefined
  return { stage: m[1], taskId: Number(m[2]) }
}

/** The id of the actor whose xstate.done/error event this is. */
export const childOf = (eventType: string): string => eventType.replace(/^xstate\.(done|error)\.actor\./, '')

export function withStage<S extends string> (jobs: Array<TaskJob<S>>, taskId: number, stage: S | undefined): Array<TaskJob<S>> {
  const rest = jobs.filter(j => j.taskId !== taskId)
  if (stage === undefined) return rest
  const at = jobs.findIndex(j => j.taskId === taskId)
  // a job keeps its place (age) when it moves on to its next stage
  return at < 0 ? [...rest, { taskId, stage }] : jobs.map(j => j.taskId === taskId ? { taskId, stage } : j)
}

/** The stage the actor shows: its oldest job's. */
export const shownStage = <S extends string>(jobs: Array<TaskJob<S>>): S | undefined => jobs[0]?.stage

export function recordTask (ctx: RoleContext, taskId: number, outcome: string): RoleContext['history'] {
  const h = [...ctx.history, { taskId, outcome }]
  return h.length > 100 ? h.slice(-100) : h
}
