import { ControlClient } from '../../node/control/client.js'
import type { PeerStatus } from '../../node/peer.js'
import type { DisputeRecord } from '../../node/dispute/service.js'
import type { WorkProgress } from '../../node/roles/work-progress.js'
import type { TraceEntry } from '../../actors/trace.js'
import { readSse } from './sse.js'

// Watches one peer through its control API: polls status, roles and actors,
// and follows its trace stream (reconnecting with `since` after a drop). A
// peer that is down or restarting is shown as such, never crashes the watcher.

export interface DashboardPeer {
  /** display name, e.g. "peer2-solver" */
  name: string
  dataDir: string
  /** the role it was started with (informational; live roles come from the peer) */
  role?: string
}

export interface ActorView {
  id: string
  state: unknown
  status: string
  context: Record<string, unknown>
}

export interface ActorsReply {
  supervisor: { state: unknown, roles: string[] }
  actors: ActorView[]
}

export interface RolesReply { roles: string[], active: Record<string, string>, retiring: string[] }

/** A peer's /v1/tasks entry: the chain's view of the task (if the peer has a chain) and what it heard over gossip. */
export interface PeerTask {
  taskId: number
  chain: Record<string, unknown> | null
  gossip: { disputes?: Array<Record<string, unknown>>, verdicts?: unknown[], chain?: Record<string, unknown> } | null
}

export interface PeerView {
  name: string
  dataDir: string
  role?: string
  connected: boolean
  error?: string
  lastSeen?: number
  status?: PeerStatus
  roles?: RolesReply
  /** null when the peer has no role actors (a bootstrap peer) */
  actors?: ActorsReply | null
  /** null when the peer has no task book (older peers) */
  tasks?: PeerTask[] | null
  /** the peer's work on tasks: training (with its loss curve), publishing, verifying; null without role actors */
  progress?: WorkProgress[] | null
  /** disputes this peer finished or is challenging now (a challenger's with the bisection's narrowing) */
  disputes?: FinishedDispute[] | null
  traceStream: 'connecting' | 'live' | 'down'
}

/** A peer's /v1/disputes entry: finished, or `open` (being challenged now, the narrowing so far). */
export type FinishedDispute = DisputeRecord

const REQUEST_TIMEOUT_MS = 2500
/** on (re)connect, replay at most this much history */
const REPLAY_WINDOW_MS = 15 * 60_000

export class PeerWatch {
  readonly view: PeerView
  private client?: ControlClient
  private lastTraceTime = 0
  private stopped = false
  private streamAbort?: AbortController
  private polls = 0

  constructor (readonly peer: DashboardPeer, private readonly onTrace: (e: TraceEntry) => void, private readonly traceReplay: number) {
    this.view = { name: peer.name, dataDir: peer.dataDir, role: peer.role, connected: false, traceStream: 'connecting' }
  }

  private async getClient (): Promise<ControlClient> {
    // re-read the control files after a failure: a restarted peer has a new port and token
    this.client ??= await ControlClient.fromDataDir(this.peer.dataDir)
    return this.client
  }

  private async get<T> (path: string): Promise<T> {
    const c = await this.getClient()
    const res = await fetch(c.baseUrl + path, { headers: { authorization: `Bearer ${c.token}` }, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })
    if (res.status === 404) { await res.body?.cancel(); throw new NotFound(path) }
    if (!res.ok) throw new Error(`${path}: HTTP ${res.status} ${(await res.text()).slice(0, 200)}`)
    return await res.json() as T
  }

  /** One poll; never throws. */
  async poll (): Promise<void> {
    try {
      const status = await this.get<PeerStatus>('/v1/status')
      const [roles, actors] = await Promise.all([
        this.get<RolesReply>('/v1/roles').catch(orNull),
        this.get<ActorsReply>('/v1/actors').catch(orNull)
      ])
      // tasks cost the peer chain queries: every third poll
      const third = this.polls++ % 3 === 0
      const tasks = third ? await this.get<PeerTask[]>('/v1/tasks').then(t => Array.isArray(t) ? t.slice(-64) : null).catch(orNull) : this.view.tasks
      // progress is a map lookup on the peer: every poll, so a loss curve grows live
      const progress = actors != null ? await this.get<WorkProgress[]>('/v1/progress').then(p => Array.isArray(p) ? p.slice(-16) : null).catch(orNull) : null
      // disputes are in the peer's memory too: every poll, so the page shows each move of a bisection as it is made
      const disputes = actors != null ? await this.get<FinishedDispute[]>('/v1/disputes').then(d => Array.isArray(d) ? d.slice(-16) : null).catch(orNull) : null
      Object.assign(this.view, {
        connected: true, error: undefined, lastSeen: Date.now(), status, roles: roles ?? undefined, actors, tasks, progress, disputes
      })
    } catch (err) {
      this.client = undefined
      this.view.connected = false
      this.view.error = (err as Error).message
    }
  }

  /** Follows the peer's trace stream until stop(); reconnects with backoff. */
  async follow (): Promise<void> {
    let delay = 500
    while (!this.stopped) {
      try {
        const c = await this.getClient()
        const since = Math.max(this.lastTraceTime, Date.now() - REPLAY_WINDOW_MS)
        this.streamAbort = new AbortController()
        const res = await fetch(`${c.baseUrl}/v1/traces/stream?since=${since}&limit=${this.traceReplay}`, {
          headers: { authorization: `Bearer ${c.token}` }, signal: this.streamAbort.signal
        })
        if (res.status === 404) { await res.body?.cancel(); this.view.traceStream = 'down'; await sleep(5000); continue } // no role actors here
        if (!res.ok || res.body == null) throw new Error(`trace stream: HTTP ${res.status}`)
        this.view.traceStream = 'live'
        delay = 500
        await readSse(res.body, data => {
          let e: TraceEntry
          try { e = JSON.parse(data) as TraceEntry } catch { return }
          if (typeof e?.time !== 'number' || typeof e.actorId !== 'string') return
          this.lastTraceTime = Math.max(this.lastTraceTime, e.time)
          this.onTrace(e)
        })
      } catch {
        this.client = undefined
      }
      if (this.stopped) break
      this.view.traceStream = 'down'
      await sleep(delay)
      delay = Math.min(delay * 2, 5000)
    }
  }

  stop (): void {
    this.stopped = true
    this.streamAbort?.abort()
  }
}

class NotFound extends Error {}
function orNull (err: unknown): null {
  if (err instanceof NotFound) return null
  throw err
}
const sleep = async (ms: number): Promise<void> => await new Promise(resolve => setTimeout(resolve, ms).unref())
