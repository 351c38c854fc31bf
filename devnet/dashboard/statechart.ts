import type { AnyActorLogic } from 'xstate'

// A JSON view of an xstate v5 machine's definition (states, initial states,
// transitions with their events and guards), computed from the machine
// itself without running it, so the page draws the chart the code defines.

export interface ChartState {
  /** dotted path below the root ("idle", "a.b"), as in a snapshot's value */
  path: string
  key: string
  type: string
  depth: number
  /** invoked actor sources (what the state is busy doing) */
  invoke: string[]
}

export interface ChartTransition {
  from: string
  /** target path, or null for a transition without target (an action only) */
  to: string | null
  /** event name; "" for eventless ("always") transitions; "done: src" / "error: src" for invoked actors */
  event: string
  guard?: string
}

export interface Chart {
  id: string
  initial: string | null
  states: ChartState[]
  transitions: ChartTransition[]
}

// The parts of xstate's StateNode this module reads (its public runtime shape).
interface NodeLike {
  id: string
  key: string
  type: string
  path: string[]
  states: Record<string, NodeLike>
  transitions: Map<string, TransitionLike[]>
  always?: TransitionLike[]
  initial?: { target?: NodeLike[] }
  invoke: Array<{ src: unknown, id: string }>
}
interface TransitionLike { eventType: string, target?: NodeLike[], guard?: unknown }

function guardName (g: unknown): string | undefined {
  if (g == null) return undefined
  if (typeof g === 'string') return g
  if (typeof g === 'function') return g.name !== '' && g.name !== 'guard' ? g.name : 'condition'
  if (typeof g === 'object' && typeof (g as { type?: unknown }).type === 'string') return (g as { type: string }).type
  return 'condition'
}

function eventLabel (eventType: string, node: NodeLike): string {
  // xstate names invoke completions "xstate.done.actor.<invoke id>": show the invoked source instead
  const m = /^xstate\.(done|error)\.actor\.(.+)$/.exec(eventType)
  if (m == null) return eventType
  const inv = node.invoke.find(i => i.id === m[2])
  const src = typeof inv?.src === 'string' ? inv.src : m[2]
  return `${m[1]}: ${src}`
}

export function machineChart (logic: AnyActorLogic): Chart {
  const root = (logic as unknown as { root: NodeLike }).root
  const states: ChartState[] = []
  const transitions: ChartTransition[] = []
  const pathOf = (n: NodeLike): string => n.path.join('.')
  const walk = (n: NodeLike, depth: number): void => {
    const from = pathOf(n)
    if (depth > 0) {
      states.push({ path: from, key: n.key, type: n.type, depth: depth - 1, invoke: n.invoke.map(i => typeof i.src === 'string' ? i.src : 'actor') })
    }
    const all = [...n.transitions.values()].flat().concat(n.always ?? [])
    for (const t of all) {
      const targets = t.target ?? []
      const base = { from, event: eventLabel(t.eventType, n), ...(guardName(t.guard) != null ? { guard: guardName(t.guard) } : {}) }
      if (targets.length === 0) transitions.push({ ...base, to: null })
      for (const target of targets) transitions.push({ ...base, to: pathOf(target) })
    }
    for (const c of Object.values(n.states)) walk(c, depth + 1)
  }
  walk(root, 0)
  const init = root.initial?.target?.[0]
  return { id: root.id, initial: init != null ? pathOf(init) : null, states, transitions }
}
