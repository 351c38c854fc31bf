import type { TraceEntry } from '../../actors/trace.js'
import type { ChainView } from './chain-watch.js'
import type { PeerView } from './peer-watch.js'
import type { DisputeRow } from './view-types.js'

// The dashboard's dispute table: every dispute with its rounds as the chain,
// the gossip and the peers' traces saw them, its narrowing and its ruling.

export function disputeRows (chain: ChainView, peers: PeerView[], disputeEntries: readonly TraceEntry[]): DisputeRow[] {
  const rows = new Map<string, DisputeRow>()
  const row = (id: string): DisputeRow => {
    let r = rows.get(id)
    if (r == null) { r = { id, rounds: [], status: 'unknown' }; rows.set(id, r) }
    return r
  }
  for (const d of chain.disputes) Object.assign(row(d.id), { chain: d, taskId: String(d.taskId), status: d.status })
  for (const ev of chain.events) {
    const id = ev.data.disputeId
    if (id == null) continue
    const r = row(String(id))
    r.rounds.push({ source: 'chain', blockNumber: ev.blockNumber, event: `${ev.section}.${ev.method}`, detail: ev.data })
    if (ev.method === 'DisputeResolved') {
      r.winner = String(ev.data.winner)
      r.how = ev.data.how != null ? String(ev.data.how) : undefined
      r.slashed = ev.data.slashed != null ? String(ev.data.slashed) : undefined
    }
  }
  // dispute announcements heard over gossip (every peer has the same ones: deduplicated)
  const heard = new Set<string>()
  for (const p of peers) {
    for (const t of p.tasks ?? []) {
      for (const m of t.gossip?.disputes ?? []) {
        const k = JSON.stringify(m)
        if (m.disputeId == null || heard.has(k)) continue
        heard.add(k)
        const r = row(String(m.disputeId))
        r.taskId ??= String(t.taskId)
        r.rounds.push({ source: 'gossip', peer: p.name, event: `gossip.dispute.${String(m.phase)}`, detail: { challenger: m.challenger, defender: m.defender, ...(m.detail != null ? { detail: m.detail } : {}) } })
      }
    }
  }
  for (const e of disputeEntries) {
    const d = e.detail ?? {}
    const id = d.disputeId != null ? String(d.disputeId) : (d.taskId != null ? `task ${String(d.taskId)}` : 'unattributed')
    const r = row(id)
    if (r.taskId == null && d.taskId != null) r.taskId = String(d.taskId)
    r.rounds.push({ source: 'trace', time: e.time, peer: e.peer, actorId: e.actorId, event: e.event, detail: e.detail })
    if (e.event === 'chain.disputeResolved' && (d.winner === 'challenger' || d.winner === 'defender')) {
      r.verdict ??= d.winner === 'challenger' ? 'ChallengerWon' : 'DefenderWon'
      if (r.status === 'unknown') r.status = r.verdict
    }
  }
  // the bisection's narrowing, as its challenger records it (move by move while it plays), and
  // the moves that reached the chain (forced, or answers to a force), merged by message number
  for (const p of peers) {
    for (const f of p.disputes ?? []) {
      if (f.role !== 'challenger' || f.narrowing == null || f.narrowing.length === 0) continue
      const r = row(String(f.disputeId))
      r.narrowing = f.narrowing
      r.narrowedBy = p.name
      r.taskId ??= f.taskId != null ? String(f.taskId) : undefined
    }
  }
  for (const [id, onChain] of Object.entries(chain.chainMoves)) {
    const r = rows.get(id)
    if (r == null || onChain.length === 0) continue
    const bySeq = new Map((r.narrowing ?? []).map(n => [n.seq, n]))
    const added = onChain.filter(n => !bySeq.has(n.seq))
    if (added.length === 0) continue
    for (const n of added) bySeq.set(n.seq, n)
    r.narrowing = [...bySeq.values()].sort((a, b) => a.seq - b.seq)
    r.narrowedBy = r.narrowedBy != null ? `${r.narrowedBy} and the chain` : 'the chain (moves forced on chain)'
  }
  for (const ev of chain.events) {
    if (ev.method !== 'Adjudicated' || ev.data.disputeId == null) continue
    row(String(ev.data.disputeId)).claim = { kind: utf8(ev.data.kind), reason: utf8(ev.data.reason) }
  }
  for (const r of rows.values()) {
    if (r.status === 'unknown' && r.rounds.length > 0) r.status = 'Open'
    if (r.chain != null && r.chain.status !== 'Open') r.verdict = r.chain.status
  }
  return [...rows.values()].sort((a, b) => (Number(b.id) || 0) - (Number(a.id) || 0))
}

/** Vec<u8> event fields arrive as 0x-hex */
function utf8 (v: unknown): string {
  const s = String(v)
  return /^0x[0-9a-f]*$/i.test(s) ? Buffer.from(s.slice(2), 'hex').toString('utf8') : s
}
