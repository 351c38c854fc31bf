import type { RolePorts } from '../ports.js'

// Shared shape of role actors: a FIFO of tasks to work on, and the drain
// contract (on "drain": finish what is in flight, then reach the final state
// "retired" so the supervisor stops the actor).

export interface RoleContext {
  ports: RolePorts
  queue: number[]
  current?: number
  draining: boolean
  /** finished task ids (bounded), for status and tests */
  history: Array<{ taskId: number, outcome: string }>
  error?: string
}

export function initialContext (input: unknown): RoleContext {
  return { ports: input as RolePorts, queue: [], draining: false, history: [] }
}

export function enqueueTask (ctx: RoleContext, taskId: number): number[] {
  if (ctx.current === taskId || ctx.queue.includes(taskId)) return ctx.queue
  return [...ctx.queue, taskId]
}

export function record (ctx: RoleContext, outcome: string): RoleContext['history'] {
  const h = [...ctx.history, { taskId: ctx.current ?? -1, outcome }]
  return h.length > 100 ? h.slice(-100) : h
}

export function errorMessage (e: unknown): string {
  return e instanceof Error ? e.message : String(e)
}
