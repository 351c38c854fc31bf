import type { HeldRequestInfo, TaskInfo } from '../../../protocols/pallet-types.js'
import { adjustActive, getTask, params, putTask, requireNode } from './arbitration.js'
import { slashStakeSplit } from './slashes.js'
import { repatriateReserved, reserve, unreserve } from './balances.js'
import type { Context } from './context.js'
import { ppmOf } from './randomness.js'
import { ensureEvidenceWindow } from './late-backing.js'

// The lifecycle availability challenges and chunk-sample requests share: a
// node asks the solver, with a deposit, for samples of a checkpoint; while
// open the task does not settle and both parties' stakes stay bound; an
// unanswered one slashes the solver like a lost dispute and fails the task;
// an answered one's deposit is held until the task ends (to the solver if
// the task was verified anyway, back to the requester if not).

const P = 'Arbitration'

/** One kind of held request: its storage items, its errors, who asked. */
export interface HeldKind<R extends HeldRequestInfo> {
  /** the requests by id; a task's open ones as [checkpoint step, id]; its answered ids; the next id */
  items: string
  open: string
  answered: string
  nextId: string
  notFound: string
  closed: string
  alreadyOpen: string
  requester: (r: R) => string
  /** blocks the solver has to answer after the sampling block (default: dispute_clock) */
  window?: (p: { disputeClock: number }, t: { challengeWindow: number }) => number
  /** an assigned verifier's request backs its reject (noteEvidence): then it may come in the verifier's backing grace (late-backing.ts) */
  backsReject?: boolean
  /** may `who` open a request of checkpoint `step` that already has an open one (default: nobody) */
  mayRepeat?: (ctx: Context, taskId: bigint, who: string, step: number) => boolean
  /** may `who` still open one past the window and its backing grace (default: nobody) */
  mayFollow?: (ctx: Context, taskId: bigint, t: TaskInfo, who: string) => boolean
}

export function getHeld<R extends HeldRequestInfo> (ctx: Context, k: HeldKind<R>, id: bigint): R {
  const r = ctx.store.get<R>(P, k.items, id)
  if (r === undefined) ctx.fail(P, k.notFound)
  return r
}

/**
 * Blocks the solver has to answer an availability challenge, after the block
 * that drew the samples: dispute_clock, or a quarter of the task's challenge
 * window if longer. The
 * submitter sizes challenge_window for fetching and replaying sampled steps
 * on its network (the task-throughput bench: 600 blocks for replays of
 * 50–80 s under a load of 30–40, docs/benchmarks.md); an answer reads,
 * hashes and sends one checkpoint, less than a replay, and there honest
 * solvers missed a 21-block window (dispute_clock 20) and were slashed.
 */
export function answerWindow (p: { disputeClock: number }, t: { challengeWindow: number }): number {
  return Math.max(p.disputeClock, Math.ceil(t.challengeWindow / 4))
}

export const putHeld = <R extends HeldRequestInfo>(ctx: Context, k: HeldKind<R>, id: bigint, r: R): void => ctx.store.put(P, k.items, id, r)

/**
 * Opens a request of `who` against the task's solver at a checkpoint step
 * (`isStep`): the deposit (dispute_bond) reserved, the task held open, both
 * parties' stakes bound. `make` completes the record from the shared fields.
 */
export function openHeld<R extends HeldRequestInfo> (
  ctx: Context, k: HeldKind<R>, who: string, a: { taskId: bigint, checkpointStep: number },
  isStep: (t: TaskInfo, step: number) => boolean, make: (base: HeldRequestInfo) => R, at = ctx.now
): { id: bigint, r: R } {
  requireNode(ctx, who)
  const t = getTask(ctx, a.taskId)
  ctx.ensure(t.phase === 'Verifying', P, 'WrongPhase')
  // evidence for a reject may come in its verifier's backing grace; other requests keep the window
  // (`at`: the block of the commitment a reveal opens, challenge-commit.ts)
  if (k.backsReject === true) { if (k.mayFollow?.(ctx, a.taskId, t, who) !== true) ensureEvidenceWindow(ctx, a.taskId, t, who, at) } else ctx.ensure(at <= t.challengeEnd, P, 'ChallengeWindowClosed')
  ctx.ensure(t.solver !== null && who !== t.solver, P, 'SolverCannotVerify')
  ctx.ensure(isStep(t, a.checkpointStep), P, 'NotCheckpointStep')
  const open = ctx.store.read<Array<[number, bigint]>>(P, k.open, a.taskId)
  ctx.ensure(!open.some(([s]) => s === a.checkpointStep) || k.mayRepeat?.(ctx, a.taskId, who, a.checkpointStep) === true, P, k.alreadyOpen)
  const p = params(ctx)
  reserve(ctx, who, p.disputeBond)
  const id = ctx.store.read<bigint>(P, k.nextId)
  ctx.store.put(P, k.nextId, undefined, id + 1n)
  // what is sampled comes from this block's hash, readable from the next block on;
  // the solver gets the kind's window after that
  const r = make({ taskId: a.taskId, solver: t.solver!, checkpointStep: a.checkpointStep, deposit: p.disputeBond, openedAt: ctx.now, deadline: ctx.now + 1 + (k.window?.(p, t) ?? p.disputeClock), samples: 0, status: 'Open' })
  putHeld(ctx, k, id, r)
  ctx.store.put(P, k.open, a.taskId, [...open, [a.checkpointStep, id]])
  t.openDisputes += 1
  putTask(ctx, a.taskId, t)
  adjustActive(ctx, who, 1)
  adjustActive(ctx, r.solver, 1)
  return { id, r }
}

/** The solver answered in full: the deposit stays held until the task ends. */
export function answerHeld<R extends HeldRequestInfo> (ctx: Context, k: HeldKind<R>, id: bigint, r: R): void {
  ctx.store.put(P, k.answered, r.taskId, [...ctx.store.read<bigint[]>(P, k.answered, r.taskId), id])
  r.status = 'Answered'
  close(ctx, k, id, r)
  // a faulted task has no settlement to wait for: the deposit goes back, as the quarantine gave back the others (hook-guard.ts)
  if (getTask(ctx, r.taskId).phase === 'Faulted') settleHeld(ctx, k, r.taskId, false, () => {})
}

/** Past its deadline unanswered (anyone may call): the deposit back, the solver slashed, the task failed. Returns the slash. `payee`: who takes the winner's share (default: the requester). */
export function timeOutHeld<R extends HeldRequestInfo> (ctx: Context, k: HeldKind<R>, id: bigint, payee?: string): { r: R, slashed: bigint, toWinner: bigint } {
  const r = getHeld(ctx, k, id)
  ctx.ensure(r.status === 'Open', P, k.closed)
  ctx.ensure(ctx.now > r.deadline, P, 'DeadlineNotReached')
  const requester = k.requester(r)
  unreserve(ctx, requester, r.deposit)
  // slash_ppm of the solver's stake, winner_share_ppm of that to the requester
  const n = ctx.store.get<{ stake: bigint }>(P, 'Nodes', r.solver)
  // (the payee's part: none of stake bound to the solver's verifier slots, slashStakeSplit)
  const { taken: slashed, toWinner } = slashStakeSplit(ctx, r.solver, payee ?? requester, ppmOf(n?.stake ?? 0n, params(ctx).slashPpm))
  r.status = 'TimedOut'
  close(ctx, k, id, r)
  return { r, slashed, toWinner }
}

/** At the task's end, each answered request's deposit: to the solver when `toSolver` (for all, or decided per request), else back to its requester. */
export function settleHeld<R extends HeldRequestInfo> (
  ctx: Context, k: HeldKind<R>, taskId: bigint, toSolver: boolean | ((r: R) => boolean), settled: (id: bigint, r: R, to: string) => void
): void {
  for (const id of ctx.store.read<bigint[]>(P, k.answered, taskId)) {
    const r = ctx.store.get<R>(P, k.items, id)
    if (r === undefined) continue
    const requester = k.requester(r)
    const solverGets = typeof toSolver === 'boolean' ? toSolver : toSolver(r)
    if (solverGets) repatriateReserved(ctx, requester, r.solver, r.deposit)
    else unreserve(ctx, requester, r.deposit)
    settled(id, r, solverGets ? r.solver : requester)
  }
  ctx.store.remove(P, k.answered, taskId)
}

// Answered or timed out: off its task's open list, the task may settle again
// (failed on a timeout), both parties' stakes released.
function close<R extends HeldRequestInfo> (ctx: Context, k: HeldKind<R>, id: bigint, r: R): void {
  putHeld(ctx, k, id, r)
  const rest = ctx.store.read<Array<[number, bigint]>>(P, k.open, r.taskId).filter(([, x]) => x !== id)
  if (rest.length === 0) ctx.store.remove(P, k.open, r.taskId)
  else ctx.store.put(P, k.open, r.taskId, rest)
  const t = getTask(ctx, r.taskId)
  t.openDisputes = Math.max(0, t.openDisputes - 1)
  if (r.status === 'TimedOut') t.solverFailed = true
  putTask(ctx, r.taskId, t)
  adjustActive(ctx, k.requester(r), -1)
  adjustActive(ctx, r.solver, -1)
}
