import type { Logger } from 'pino'
import type { ChainClient } from '../../chain/client.js'
import type { Handlers } from '../../control/routes.js'
import type { Observability } from '../observability.js'
import type { TaskBook } from '../task-book.js'
import { jsonSafe } from '../json-safe.js'
import type { RolesEndpoints } from './routes.js'

// GET /v1/tasks: every task this peer knows of, from gossip and (once the
// chain link is up) from the chain, with the chain's view of each.

export interface TasksDeps {
  book: TaskBook
  obs: Observability
  /** the chain, or undefined while no one asked for it yet (the view is then gossip only) */
  chainIfStarted: () => Promise<ChainClient> | undefined
  log: Logger
}

export function tasksHandler ({ book, obs, chainIfStarted, log }: TasksDeps): Handlers<RolesEndpoints>['tasks'] {
  return async () => {
    const records = await book.all()
    let views: Record<number, unknown> = {}
    const chain = chainIfStarted()
    if (chain != null) {
      try {
        const c = await chain
        const ids = new Set<number>([...records.map(r => r.taskId), ...(await c.openTasks()).map(Number)])
        views = Object.fromEntries(await Promise.all([...ids].map(async id => [id, jsonSafe(await c.task(id))])))
      } catch (err) { log.debug({ err }, 'task views unavailable') }
    }
    const ids = new Set<number>([...records.map(r => r.taskId), ...Object.keys(views).map(Number)])
    const head = await obs.head()
    return [...ids].sort((a, b) => a - b).map(
      id => ({
        taskId: id, chain: views[id] ?? null, gossip: records.find(r => r.taskId === id) ?? null, head: head ?? null, failedFetches: obs.failedFetches(id)
      })
    )
  }
}
