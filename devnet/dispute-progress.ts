import type { Aggregator, DisputeRow } from './dashboard/aggregator.js'
import type { ProgressItem } from './progress.js'

// The devnet's progress line for disputes being played: how many answers the
// defender gave and what is still in dispute, from the dashboard's own view
// (the challenger's record so far and the moves that reached the chain).

const STAGE: Record<string, string> = { tape: 'ops', rows: 'rows', cols: 'columns', chunks: 'chunks' }

/** The progress item of an open dispute (undefined once it is decided). */
export function disputeItem (d: DisputeRow): ProgressItem | undefined {
  if (d.status !== 'Open') return undefined
  const n = d.narrowing ?? []
  const last = n[n.length - 1]
  const where = last == null
    ? 'waiting for the defender\'s commitment'
    : last.stage === 'tape' || last.stage === 'rows' || last.stage === 'cols' || last.stage === 'chunks'
      ? `${STAGE[last.stage]} ${last.lo}–${last.hi - 1} of ${last.of} still in dispute${last.entry != null ? ` (op ${last.entry})` : ''}`
      : last.stage === 'entry'
        ? `narrowed to op ${last.entry}${last.note != null ? ` (${last.note})` : ''}`
        : last.stage === 'tensor'
          ? `op ${last.entry}, ${last.tensor ?? 'a tensor'} ${last.note ?? ''}`.trim()
          : `op ${last.entry}, ${last.tensor ?? ''} ${last.note ?? ''}: one element left`
  return { label: `dispute ${d.id}`, text: `${n.length} answer${n.length === 1 ? '' : 's'} of the defender; ${where}` }
}

/** Shows each open dispute's rounds as they happen; returns the unsubscribe. */
export function watchDisputes (agg: Aggregator, show: (key: string, item: ProgressItem | undefined, data: Record<string, unknown>) => void): () => void {
  const shown = new Map<string, string>()
  return agg.subscribe(e => {
    if (e.type !== 'state') return
    for (const d of e.state.disputes) {
      const key = `dispute ${d.id}`
      const item = disputeItem(d)
      if (item == null) { if (shown.delete(key)) show(key, undefined, {}); continue }
      if (shown.get(key) === item.text) continue
      shown.set(key, item.text)
      show(key, item, { disputeId: d.id, answers: d.narrowing?.length ?? 0 })
    }
  })
}
