import type { Handlers } from '../../control/routes.js'
import type { NodePorts } from '../node-ports.js'
import type { Observability } from '../observability.js'
import type { RolesEndpoints } from './routes.js'

// GET /v1/health (the chain link and recent failures), GET /v1/progress (work under way).

export function statusHandlers (obs: Observability, ports: () => NodePorts | undefined): Pick<Handlers<RolesEndpoints>, 'health' | 'progress'> {
  return {
    health: async () => ({ chain: { ...obs.chain, head: await obs.head() ?? obs.chain.head }, failures: obs.recentFailures() }),
    progress: () => [...(ports()?.progress.values() ?? [])]
  }
}
