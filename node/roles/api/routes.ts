import type { TaskSpec } from '../../../actors/index.js'
import { validateProgram } from '../../../protocols/program/program.js'
import type { AnsweredChallenge } from '../../availability/responder.js'
import { HttpError } from '../../control/server.js'
import type { Endpoint, RouteDefinitions } from '../../control/routes.js'
import type { DisputeService } from '../../dispute/index.js'
import type { AnsweredRequest } from '../../erasure/responder.js'
import type { WorkProgress } from '../node-ports.js'
import type { ChainStatus, Failure } from '../observability.js'
import type { TaskRecord } from '../task-book.js'

// The control API of a peer's roles: every endpoint's method, path, body
// and answer. Handlers live apart (status.ts, records.ts, tasks.ts, submit.ts).

export interface Health { chain: ChainStatus, failures: Failure[] }

export interface TaskRow {
  taskId: number
  /** the chain's view of the task (bigints as decimal strings); null without a chain or once gone */
  chain: unknown
  /** what gossip said about it */
  gossip: TaskRecord | null
  /** the chain's best block when asked (null without a chain) */
  head: number | null
  /** shard fetches for this task that failed on this peer */
  failedFetches: number
}

export interface SubmitArgs { program: unknown, economics?: TaskSpec['economics'] }

export interface RolesEndpoints {
  health: Endpoint<undefined, Health>
  progress: Endpoint<undefined, WorkProgress[]>
  disputes: Endpoint<undefined, DisputeService['finished']>
  availability: Endpoint<undefined, AnsweredChallenge[]>
  chunkRequests: Endpoint<undefined, AnsweredRequest[]>
  tasks: Endpoint<undefined, TaskRow[]>
  submit: Endpoint<SubmitArgs, { taskId: number }>
}

export const rolesRoutes: RouteDefinitions<RolesEndpoints> = {
  health: { method: 'GET', path: '/v1/health' },
  progress: { method: 'GET', path: '/v1/progress' },
  disputes: { method: 'GET', path: '/v1/disputes' },
  availability: { method: 'GET', path: '/v1/availability' },
  chunkRequests: { method: 'GET', path: '/v1/chunk-requests' },
  tasks: { method: 'GET', path: '/v1/tasks' },
  submit: { method: 'POST', path: '/v1/submit', parse: parseSubmit }
}

function parseSubmit (body: Record<string, unknown>): SubmitArgs {
  const { program, economics } = body
  if (economics != null && (typeof economics !== 'object' || Array.isArray(economics))) throw new HttpError(400, 'economics must be an object')
  if (program == null) throw new HttpError(400, 'body must be {"program": <task program>}')
  try { validateProgram(program) } catch (err) { throw new HttpError(400, `invalid task program: ${(err as Error).message}`) }
  // its fields are not checked here: a bad amount fails the submission itself (a 502 naming it)
  return { program, economics: economics as SubmitArgs['economics'] }
}
