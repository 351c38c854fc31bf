import { createActor, type Actor } from 'xstate'
import { nodeSupervisor, ROLE_NAMES, TraceConverter, type RoleName, type RolePorts } from '../../actors/index.js'
import { HttpError } from '../control/server.js'
import type { Peer } from '../peer.js'
import { sublevel } from '../storage/db.js'
import { TraceStore, matches, type TraceQuery } from '../traces/store.js'
import type { TraceEntry } from '../../actors/trace.js'

// Runs the peer's supervisor actor, records every actor transition in the
// trace store, and exposes roles, actors and traces on the control API.

export interface RolesService {
  actor: Actor<typeof nodeSupervisor>
  traces: TraceStore
  send: (event: { type: string, [k: string]: unknown }) => void
}

const services = new WeakMap<Peer, RolesService>()
export function getRolesService (peer: Peer): RolesService | undefined { return services.get(peer) }

export type PortsFactory = (peer: Peer) => Promise<RolePorts>

export function rolesService (makePorts: PortsFactory) {
  return async (peer: Peer): Promise<void> => {
    const traces = new TraceStore(sublevel(peer.db, 'traces'))
    const conv = new TraceConverter(peer.peerId)
    const ports = await makePorts(peer)
    const actor = createActor(nodeSupervisor, {
      input: { roles: peer.roles as RoleName[], roleInput: ports },
      inspect: ev => {
        const e = conv.convert(ev)
        if (e != null) traces.append(e)
      }
    })
    actor.subscribe({ error: err => peer.log.error({ err }, 'supervisor actor failed') })
    actor.start()
    const svc: RolesService = { actor, traces, send: ev => actor.send(ev) }
    services.set(peer, svc)
    peer.onStop(async () => {
      actor.send({ type: 'shutdown' })
      actor.stop()
      await traces.close()
    })

    const c = peer.control
    c.get('/v1/roles', () => ({ roles: actor.getSnapshot().context.roles, active: actor.getSnapshot().context.active, retiring: actor.getSnapshot().context.retiring }))
    c.post('/v1/roles', async ({ body }) => {
      const b = body as { op?: string, roles?: unknown }
      const op = b.op ?? 'set'
      if (!['set', 'add', 'remove'].includes(op)) throw new HttpError(400, `op must be set, add or remove, got "${op}"`)
      if (!Array.isArray(b.roles) || !b.roles.every(r => typeof r === 'string')) throw new HttpError(400, 'roles must be a list of role names')
      const bad = (b.roles as string[]).filter(r => !(ROLE_NAMES as readonly string[]).includes(r))
      if (bad.length > 0) throw new HttpError(400, `unknown role(s) ${bad.join(', ')}: roles are ${ROLE_NAMES.join(', ')}`)
      actor.send({ type: `roles.${op}`, roles: b.roles as RoleName[] })
      const ctx = actor.getSnapshot().context
      await peer.setRoles(ctx.roles)
      peer.log.info({ roles: ctx.roles, retiring: ctx.retiring }, 'roles changed')
      return { roles: ctx.roles, active: ctx.active, retiring: ctx.retiring }
    })
    c.get('/v1/actors', () => {
      const snap = actor.getSnapshot()
      const children = snap.children as Record<string, { getSnapshot: () => { value: unknown, status: string, context: Record<string, unknown> } } | undefined>
      return {
        supervisor: { state: snap.value, roles: snap.context.roles },
        actors: Object.entries(children).filter(([, a]) => a != null).map(([id, a]) => {
          const s = a!.getSnapshot()
          const { ports: _p, ...rest } = s.context
          return { id, state: s.value, status: s.status, context: rest }
        })
      }
    })
    c.get('/v1/traces', async ({ url }) => await traces.query(parseQuery(url)))
    c.get('/v1/traces/stream', async ({ url, req, res }) => {
      // server-sent events: history first (since=...), then live entries
      const q = parseQuery(url)
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' })
      const write = (e: TraceEntry): void => { res.write(`id: ${e.time}-${e.seq}\ndata: ${JSON.stringify(e)}\n\n`) }
      const buffered: TraceEntry[] = []
      let live = false
      const unsubscribe = traces.subscribe(e => { if (!matches(e, q)) return; if (live) write(e); else buffered.push(e) })
      const past = q.since != null ? await traces.query(q) : []
      const seen = new Set(past.map(e => `${e.time}-${e.seq}`))
      for (const e of past) write(e)
      for (const e of buffered) if (!seen.has(`${e.time}-${e.seq}`)) write(e)
      live = true
      const ping = setInterval(() => res.write(': keep-alive\n\n'), 15_000)
      req.on('close', () => { clearInterval(ping); unsubscribe() })
      peer.onStop(() => { clearInterval(ping); unsubscribe(); res.end() })
      return undefined
    })
  }
}

function parseQuery (url: URL): TraceQuery {
  const q: TraceQuery = {}
  const p = url.searchParams
  if (p.has('actor')) q.actor = p.get('actor')!
  if (p.has('role')) q.role = p.get('role')!
  if (p.has('since')) {
    const s = p.get('since')!
    const n = /^\d+$/.test(s) ? Number(s) : Date.parse(s)
    if (!Number.isFinite(n)) throw new HttpError(400, `since must be a time (ms since epoch or ISO 8601), got "${s}"`)
    q.since = n
  }
  if (p.has('limit')) q.limit = Number(p.get('limit'))
  return q
}
