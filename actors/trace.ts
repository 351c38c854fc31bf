import type { InspectionEvent } from 'xstate'
import { isRoleName } from '../protocols/roles.js'

// Turns xstate inspection events into trace entries: who (actor id, role),
// what (event), and the state change it caused. Pure: storage is the host's.

export interface TraceEntry {
  seq: number
  time: number
  peer: string
  actorId: string
  role: string
  kind: 'spawned' | 'transition' | 'event' | 'stopped'
  event: string
  from?: string
  to?: string
  /** small, JSON-able details of the event (task id, step, ...) */
  detail?: Record<string, unknown>
}

/** A state value as comma-separated full leaf paths: "active.work.idle,active.disputes.idle". */
export function stateString (value: unknown): string {
  const out: string[] = []
  const join = (prefix: string, k: string): string => prefix === '' ? k : `${prefix}.${k}`
  const walk = (v: unknown, prefix: string): void => {
    if (v == null || typeof v !== 'object') { out.push(join(prefix, String(v))); return }
    const entries = Object.entries(v as Record<string, unknown>)
    if (entries.length === 0) { if (prefix !== '') out.push(prefix); return }
    for (const [k, x] of entries) walk(x, join(prefix, k))
  }
  walk(value, '')
  return out.join(',')
}

/** Role of an actor from its id: `<role>` or `<role>#<n>`; the root is the supervisor. */
export function roleOf (actorId: string): string {
  const base = actorId.split('#')[0]
  return isRoleName(base) ? base : (base === '' ? 'supervisor' : base)
}

const DETAIL_KEYS = ['taskId', 'step', 'steps', 'disputeId', 'roles', 'reason', 'error', 'accept', 'proofRoot', 'loss', 'phase', 'winner', 'role']

export function eventDetail (event: Record<string, unknown>): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {}
  for (const k of DETAIL_KEYS) {
    const v = event[k]
    if (v === undefined) continue
    if (typeof v === 'string') out[k] = v.length > 200 ? v.slice(0, 200) + '…' : v
    else if (typeof v === 'number' || typeof v === 'boolean') out[k] = v
    else if (Array.isArray(v) && v.length <= 16 && v.every(x => typeof x !== 'object')) out[k] = v
    else if (v instanceof Error) out[k] = v.message
  }
  return Object.keys(out).length > 0 ? out : undefined
}

/**
 * Stateful converter: remembers each actor's last state so a snapshot becomes
 * "from → to". Events that do not change the state are kept too (kind
 * "event"), except xstate's internal ones.
 */
export class TraceConverter {
  private readonly last = new Map<string, string>()
  private seq = 0

  constructor (private readonly peer: string, private readonly now: () => number = Date.now) {}

  convert (ev: InspectionEvent): TraceEntry | undefined {
    const ref = ev.actorRef as unknown as { id: string, sessionId: string }
    const actorId = ref.sessionId === ev.rootId ? 'supervisor' : ref.id
    const role = roleOf(actorId)
    // only our machines: promise actors (train, fetch, ...) are visible through their parent's events
    if (role !== 'supervisor' && !isRoleName(role)) return undefined
    if (ev.type === '@xstate.actor') {
      return this.entry(actorId, role, 'spawned', 'spawn')
    }
    if (ev.type !== '@xstate.snapshot') return undefined
    const snap = ev.snapshot as { value?: unknown, status?: string }
    const eventType = String(ev.event?.type ?? '')
    const to = stateString(snap.value)
    const from = this.last.get(actorId)
    this.last.set(actorId, to)
    if (snap.status === 'stopped' || snap.status === 'done') {
      this.last.delete(actorId)
      return this.entry(actorId, role, 'stopped', eventType, from, to, eventDetail(ev.event as Record<string, unknown>))
    }
    if (eventType.startsWith('xstate.') && eventType !== 'xstate.init' && from === to) return undefined
    return this.entry(actorId, role, from === to ? 'event' : 'transition', eventType, from, to, eventDetail(ev.event as Record<string, unknown>))
  }

  private entry (actorId: string, role: string, kind: TraceEntry['kind'], event: string, from?: string, to?: string, detail?: Record<string, unknown>): TraceEntry {
    const e: TraceEntry = { seq: ++this.seq, time: this.now(), peer: this.peer, actorId, role, kind, event }
    if (from !== undefined) e.from = from
    if (to !== undefined) e.to = to
    if (detail !== undefined) e.detail = detail
    return e
  }
}
