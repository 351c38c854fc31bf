import { hexToU8a, u8aToHex } from '@polkadot/util'
import { unreserve } from './balances.js'
import type { Context, EventOut } from './context.js'
import { adjustActive, putTask, type TaskInfo } from './arbitration.js'
import { settleAnsweredDeposits } from './availability.js'
import { releaseAssigned } from './verifier-rounds.js'
import { getAssignments, putAssignments } from './assignment.js'
import { settleRent } from './capacity-rent.js'
import { closeDraw } from './draw-reveal.js'
import { Storage } from './state.js'
import { payShares, releaseCommitments } from './challenge-shares.js'

// Fault isolation for the block hook (docs/pallet-interface.md "Faulted
// tasks"). on_initialize is not a call: a throw there fails the block, and
// since the same stored task is processed again in the next one, every later
// block too: the chain halts for everyone. Each open task's per-block step
// therefore runs in its own storage layer. A throw (a runtime bug, or a
// stored value the code cannot handle) drops that task's writes and events of
// this block only, and the task is quarantined in phase Faulted. The
// quarantine is neutral (docs/economics.md "Faulted tasks"): the escrow back
// to the submitter, the rent it held paid as at every end, the verifiers'
// reservations and assignments released, answered deposits back to their
// requesters; the hook pays and slashes nobody. What runs by its own clock
// goes on: open disputes and held requests end by their calls, and a ruling
// against the solver keeps its reveal window and its penalty, so the task
// stays open (and its solver's stake bound) until none is left.

const P = 'Arbitration'
const MAX_REASON_BYTES = 256

/** The thrown value as UTF-8 hex, at most MAX_REASON_BYTES bytes (the event's `reason`). */
export function faultReason (e: unknown): string {
  const text = e instanceof Error ? `${e.name}: ${e.message}` : String(e)
  return u8aToHex(new TextEncoder().encode(text).slice(0, MAX_REASON_BYTES))
}

/** Runs `body` in a child storage layer of ctx.store: committed if it returns, dropped with its events if it throws (rethrown). */
function inLayer<T> (ctx: Context, body: () => T): T {
  const outer = ctx.store
  const layer = outer.state.child()
  const mark = ctx.events.length
  ctx.store = new Storage(outer.types, layer)
  try {
    const out = body()
    layer.commit()
    return out
  } catch (e) {
    ctx.events.length = mark
    throw e
  } finally {
    ctx.store = outer
  }
}

/**
 * One open task's step of on_initialize, isolated: returns `step`'s answer
 * (is the task still open), or, when `step` threw, whether the quarantined
 * task stays open (faultedStillOpen).
 */
export function guardTask (ctx: Context, id: bigint, step: () => boolean): boolean {
  try {
    return inLayer(ctx, step)
  } catch (e) {
    return fault(ctx, id, e)
  }
}

/**
 * OpenTasks less the tasks whose own records cannot be read (faulted here):
 * every task's selection and draw reads those of all open tasks (the stake
 * they bind, verifier-stake.ts boundStakes), so one unreadable record would
 * otherwise fault every other open task's step in the block.
 */
export function readableOpenTasks (ctx: Context): bigint[] {
  const open = ctx.store.read<bigint[]>(P, 'OpenTasks')
  const readable = open.filter(id => {
    try {
      for (const item of ['Tasks', 'Assignments', 'VerifierReservations']) ctx.store.get(P, item, id)
      return true
    } catch (e) {
      fault(ctx, id, e)
      return false
    }
  })
  if (readable.length !== open.length) ctx.store.put(P, 'OpenTasks', undefined, readable)
  return readable
}

/**
 * A faulted task stays open while something of it runs by its own clock: an
 * open dispute or held request, or a ruling awaiting its forced-error reveal
 * (penalized in on_initialize after its deadline). Until then its solver's
 * stake stays bound, so it cannot unregister out of that penalty; after, it is released.
 */
export function faultedStillOpen (ctx: Context, t: TaskInfo): boolean {
  if (t.openDisputes > 0 || t.rulings.some(r => r.outcome === 'AwaitingReveal')) return true
  adjustActive(ctx, t.solver, -1)
  return false
}

/** Quarantines the task and emits TaskFaulted; returns whether it stays open. */
function fault (ctx: Context, id: bigint, e: unknown): boolean {
  let out = { refunded: 0n, open: false }
  try {
    out = inLayer(ctx, () => quarantine(ctx, id))
  } catch {
    // the quarantine itself failed (the task's record cannot be read, say): its funds stay
    // reserved where they are, but the task leaves the open list all the same
  }
  ctx.emit(P, 'TaskFaulted', { taskId: id, reason: faultReason(e), refunded: out.refunded })
  return out.open
}

/** Runs `body` in its own layer; undefined (its writes dropped) if it throws. */
function attempt<T> (ctx: Context, body: () => T): T | undefined {
  try { return inLayer(ctx, body) } catch { return undefined }
}

/**
 * The neutral end of a faulted task: the escrow given back (returned), and
 * whether it stays open. Each part on its own: a record that cannot be read
 * (the assignments, say) keeps its own funds where they are, not the escrow.
 * A task that faults again once Faulted (in its reveal's step) is closed as it is.
 */
function quarantine (ctx: Context, id: bigint): { refunded: bigint, open: boolean } {
  const t = ctx.store.get<TaskInfo>(P, 'Tasks', id)
  if (t === undefined) return { refunded: 0n, open: false }
  if (t.phase === 'Faulted') {
    attempt(ctx, () => { adjustActive(ctx, t.solver, -1) })
    return { refunded: 0n, open: false }
  }
  // an escrow is paid out only at settlement: an open task still holds all of it
  const refunded = attempt(ctx, () => { unreserve(ctx, t.submitter, t.escrow); return t.escrow }) ?? 0n
  attempt(ctx, () => { releaseVerifiers(ctx, id) })
  attempt(ctx, () => { settleAnsweredDeposits(ctx, id, false) })
  attempt(ctx, () => { settleRent(ctx, id, t) })
  attempt(ctx, () => { closeDraw(ctx, id) })
  // no challenge can be committed to a faulted task, nor revealed: the deposits go back
  attempt(ctx, () => { releaseCommitments(ctx, id, true) })
  t.phase = 'Faulted'
  putTask(ctx, id, t)
  const open = attempt(ctx, () => faultedStillOpen(ctx, t)) ?? false
  // slash shares already held were slashed for rulings that stand: paid by rank as at any end
  if (!open) attempt(ctx, () => { payShares(ctx, id, [], true) })
  return { refunded, open }
}

/** The reserved and assigned verifiers are done with the task: their stakes unbound, their assignments Released. */
function releaseVerifiers (ctx: Context, id: bigint): void {
  releaseAssigned(ctx, id)
  const a = getAssignments(ctx, id)
  if (a === undefined) return
  for (const x of a.verifiers) if (x.status === 'Active') x.status = 'Released'
  putAssignments(ctx, id, a)
}

export interface TaskFault { taskId: bigint, reason: string, refunded: bigint }

/** A block's TaskFaulted events, their reason as text: what the chain process logs. */
export function faultsOf (events: EventOut[]): TaskFault[] {
  const out: TaskFault[] = []
  for (const e of events) {
    const f = (e.event as { Arbitration?: { TaskFaulted?: { taskId: bigint, reason: string, refunded: bigint } } }).Arbitration?.TaskFaulted
    if (f !== undefined) out.push({ taskId: BigInt(f.taskId), reason: new TextDecoder().decode(hexToU8a(f.reason)), refunded: BigInt(f.refunded) })
  }
  return out
}
