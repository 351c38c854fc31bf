import { Gauge, Histogram, type Registry } from 'prom-client'

// gossipsub's own metrics (mesh sizes, peers per topic, invalid messages by
// reason, score penalties, RPC counts...) need a MetricsRegister (Lodestar's
// gauge / histogram / avgMinMax shape); this adapts prom-client's, in the
// peer's registry, so they appear on /metrics. Counts of a few series are
// mirrored synchronously for `status --json` (prom-client reads are async).

type Labels = Record<string, string | number>

export interface GossipMetricsRegister {
  gauge: (c: { name: string, help: string, labelNames?: string[] }) => unknown
  histogram: (c: { name: string, help: string, labelNames?: string[], buckets?: number[] }) => unknown
  avgMinMax: (c: { name: string, help: string, labelNames?: string[] }) => unknown
  /** mirrored values of a gauge by label set ("k=v,k=v"), for the series named in `mirror` */
  mirrored: (name: string) => Record<string, number>
}

const key = (l: Labels): string => Object.entries(l).map(([k, v]) => `${k}=${v}`).join(',')

export function gossipMetricsRegister (registry: Registry, mirror: string[] = []): GossipMetricsRegister {
  const mirrors = new Map<string, Map<string, number>>(mirror.map(n => [n, new Map()]))
  return {
    gauge: c => {
      const collects: Array<(g: unknown) => void> = []
      const m = mirrors.get(c.name)
      let wrapper: unknown
      const g = new Gauge({
        name: c.name,
        help: c.help,
        labelNames: c.labelNames ?? [],
        registers: [registry],
        collect () { for (const f of collects) f(wrapper) }
      })
      wrapper = {
        inc: (a?: Labels | number, b?: number) => {
          if (typeof a === 'object') {
            g.inc(a, b ?? 1)
            if (m != null) m.set(key(a), (m.get(key(a)) ?? 0) + (b ?? 1))
          } else g.inc(a ?? 1)
        },
        set: (a: Labels | number, b?: number) => {
          if (typeof a === 'object') {
            g.set(a, b ?? 0)
            if (m != null) m.set(key(a), b ?? 0)
          } else g.set(a)
        },
        addCollect: (fn: (g: unknown) => void) => { collects.push(fn) }
      }
      return wrapper
    },
    histogram: c => {
      const h = new Histogram({ name: c.name, help: c.help, labelNames: c.labelNames ?? [], buckets: c.buckets, registers: [registry] })
      return {
        startTimer: () => h.startTimer(),
        observe: (a: Labels | number, b?: number) => { if (typeof a === 'object') h.observe(a, b ?? 0); else h.observe(a) },
        reset: () => h.reset()
      }
    },
    // one gauge per series with a "stat" label: avg, min, max of the values last set
    avgMinMax: c => {
      const g = new Gauge({ name: c.name, help: c.help, labelNames: [...(c.labelNames ?? []), 'stat'], registers: [registry] })
      const put = (l: Labels, values: number[]): void => {
        if (values.length === 0) return
        g.set({ ...l, stat: 'avg' }, values.reduce((s, v) => s + v, 0) / values.length)
        g.set({ ...l, stat: 'min' }, Math.min(...values))
        g.set({ ...l, stat: 'max' }, Math.max(...values))
      }
      return { set: (a: Labels | number[], b?: number[]) => { if (Array.isArray(a)) put({}, a); else put(a, b ?? []) } }
    },
    mirrored: name => Object.fromEntries(mirrors.get(name) ?? [])
  }
}
