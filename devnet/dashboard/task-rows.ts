import { stateString } from '../../actors/trace.js'
import { transitionsOfUnit } from '../../protocols/verification/verdict.js'
import type { CollectedResult } from '../../actors/ports.js'
import type { ChainView } from './chain-watch.js'
import type { PeerView } from './peer-watch.js'
import type { TaskRow, TaskWorker } from './view-types.js'

// The dashboard's task table: one row per task, its phase from the chain (or,
// without one, a peer's view of it, or what the actors are doing), the
// actors working on it, and what the page draws for it.

export function taskRows (chain: ChainView, peers: PeerView[]): TaskRow[] {
  const rows = new Map<string, TaskRow>()
  const row = (id: string): TaskRow => {
    let r = rows.get(id)
    if (r == null) { r = { id, phase: 'unknown', phaseSource: 'actors', workers: [], pictures: { samples: [], replayingAll: [], disputed: [] } }; rows.set(id, r) }
    return r
  }
  for (const t of chain.tasks) Object.assign(row(t.id), { phase: t.phase, phaseSource: 'chain', chain: t })
  // without a chain of our own, a peer's view of the chain is the next best source
  for (const p of peers) {
    for (const t of p.tasks ?? []) {
      const r = row(String(t.taskId))
      if (r.phaseSource === 'actors' && typeof t.chain?.phase === 'string') Object.assign(r, { phase: t.chain.phase, phaseSource: `peer:${p.name}`, chain: t.chain })
    }
  }
  for (const p of peers) {
    for (const a of p.actors?.actors ?? []) {
      const ctx = a.context as {
        current?: number
        queue?: number[]
        jobs?: Array<{ taskId: number, stage: string }>
        history?: Array<{ taskId: number, outcome: string }>
        open?: number[]
        settled?: number[]
        results?: Record<string, { accuracy?: number }>
        pending?: Array<{ taskId: number }>
      }
      const state = stateText(a.state)
      const add = (id: number, relation: string): void => {
        row(String(id)).workers.push({ peer: p.name, actorId: a.id, role: roleOfId(a.id), state, relation })
      }
      const nums = (v: unknown): number[] => Array.isArray(v) ? v.filter((x): x is number => typeof x === 'number').slice(-32) : []
      // a submitter keeps its last task as `current` while idle: only a busy actor is "working" on it
      if (typeof ctx.current === 'number' && state !== 'idle') add(ctx.current, 'working')
      // solvers and verifiers work on several tasks at once: the others than `current`, with their stage
      for (const j of (Array.isArray(ctx.jobs) ? ctx.jobs : []).slice(0, 32)) if (typeof j?.taskId === 'number' && j.taskId !== ctx.current) row(String(j.taskId)).workers.push({ peer: p.name, actorId: a.id, role: roleOfId(a.id), state: String(j.stage), relation: 'working' })
      for (const q of nums(ctx.queue)) add(q, 'queued')
      // submitter: its open and settled tasks (with the trained model's accuracy once collected)
      for (const t of nums(ctx.open)) if (t !== ctx.current) add(t, 'submitted')
      const collected = Object.keys(ctx.results ?? {}).map(Number).filter(Number.isInteger)
      for (const t of new Set([...nums(ctx.settled), ...collected])) {
        const acc = ctx.results?.[String(t)]?.accuracy
        add(t, typeof acc === 'number' ? `settled (accuracy ${(acc * 100).toFixed(1)}%)` : 'settled')
      }
      // whistleblower: verdicts waiting to be re-checked
      for (const pnd of Array.isArray(ctx.pending) ? ctx.pending.slice(-32) : []) if (typeof pnd?.taskId === 'number') add(pnd.taskId, 'recheck queued')
      for (const h of Array.isArray(ctx.history) ? ctx.history.slice(-20) : []) if (typeof h?.taskId === 'number' && h.taskId >= 0) add(h.taskId, h.outcome)
    }
  }
  for (const r of rows.values()) if (r.phaseSource === 'actors') r.phase = inferPhase(r.workers)
  pictures(chain, rows, peers)
  return [...rows.values()].sort((a, b) => Number(b.id) - Number(a.id))
}

/** What the page draws for each task, from the chain's verdicts and disputes and the peers' progress. */
function pictures (chain: ChainView, rows: Map<string, TaskRow>, peers: PeerView[]): void {
  const accountName = new Map(chain.accounts.map(a => [a.accountId, a.name]))
  const peerOfAccount = (acct: string): string => {
    const a = chain.accounts.find(x => x.accountId === acct)
    return peers.find(p => a?.node != null && p.status?.peerId === a.node.peerId)?.name ?? accountName.get(acct) ?? acct.slice(0, 10) + '…'
  }
  for (const r of rows.values()) {
    const pic = r.pictures
    const c = r.chain
    // the chain's units (checked steps, a disputed step) are segments at m > 1: drawn as the transitions they hold
    const m = c?.rootEvery ?? 1
    const stepCount = c == null ? 0 : c.stepCount > 0 ? c.stepCount : c.steps
    const transitions = (unit: number): number[] => transitionsOfUnit(unit, stepCount, m)
    if (c != null) {
      pic.steps = stepCount
      pic.checkpointEvery = c.checkpointEvery
      pic.rootEvery = m
      pic.samples = c.verdicts.map(v => ({
        verifier: peerOfAccount(v.verifier), accept: v.accept, void: v.void, steps: v.checkedSteps.flatMap(transitions).slice(0, 4096)
      }))
      if (c.revealedForcedError != null) pic.forcedStep = c.revealedForcedError
    }
    pic.disputed = chain.disputes.filter(d => String(d.taskId) === r.id).map(d => {
      if (m === 1) return { disputeId: d.id, step: d.disputedStep, status: d.status }
      const ts = transitions(d.disputedStep)
      return { disputeId: d.id, step: ts[0], lastStep: ts[ts.length - 1], segment: d.disputedStep, status: d.status }
    })
  }
  for (const p of peers) {
    for (const w of p.progress ?? []) {
      const r = rows.get(String(w.taskId))
      if (r == null) continue
      if (w.curve != null && w.curve.length > 0 && (r.pictures.curve == null || r.pictures.curve.points.length <= w.curve.length)) {
        r.pictures.curve = { peer: p.name, phase: w.phase, steps: w.steps, points: w.curve }
      }
      if (w.phase === 'verifying' && p.role === 'whistleblower' && !r.pictures.replayingAll.includes(p.name)) r.pictures.replayingAll.push(p.name)
    }
    for (const a of p.actors?.actors ?? []) {
      const results = (a.context as { results?: Record<string, CollectedResult> }).results
      for (const [id, res] of Object.entries(results ?? {})) { const r = rows.get(id); if (r != null && res != null) r.pictures.result = res }
    }
  }
}

// the same text the trace recorder writes (full leaf paths, comma-separated)
export const stateText = stateString

function roleOfId (id: string): string { return id.split('#')[0] }

// Without the chain, the phase is read from what the actors are doing with the task.
function inferPhase (workers: TaskWorker[]): string {
  const has = (pred: (w: TaskWorker) => boolean): boolean => workers.some(pred)
  if (has(w => w.relation.startsWith('settled'))) return 'Settled'
  if (has(w => w.role === 'solver' && w.relation === 'working' && /training|committing/.test(w.state))) return 'Solving'
  if (has(w => w.relation === 'working' && /defending|challenging/.test(w.state))) return 'Disputed'
  if (has(w => w.relation === 'working' && (w.role === 'verifier' || /awaitingVerdicts/.test(w.state)))) return 'Verifying'
  if (has(w => w.relation === 'queued' || w.relation === 'submitted')) return 'Queued'
  return workers.length > 0 ? workers[workers.length - 1].relation : 'unknown'
}
