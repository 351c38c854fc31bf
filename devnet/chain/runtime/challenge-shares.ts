import { u8aToHex } from '@polkadot/util'
import { params, type TaskInfo } from './arbitration.js'
import { slashStakeSplit } from './slashes.js'
import { TREASURY, payFromModule, slashReserved, unreserve } from './balances.js'
import type { Context } from './context.js'
import { ppmOf } from './randomness.js'

// Who takes the challenger share of a slash (part of the Arbitration pallet;
// docs/economics.md "Copied disputes and claims"). A challenge is public
// before it is ruled (the pool, then an event), and a copy can be ruled
// first: a copied dispute's ruling can land before the finder's, a copied
// claim or chunk request can be included first. So the share of a slash is
// not paid to whoever's ruling landed: it is held in the challenge pot for
// its fact (the disputed step, the checkpoint, the initial state), and a
// fact's shares go largest first to its winning challengers in the order of
// their rank: committed challenges (commit_challenge) by the order of their
// commitments, then uncommitted ones by the order they opened. A copier can
// only commit after it saw the reveal, so it ranks after the finder whatever
// the inclusion and ruling order. A share is paid as soon as no challenge
// ranked before its winner can still win the fact (an open one of the fact,
// or any live unrevealed commitment on the task, whose fact is hidden); at
// the task's end, whatever is held.

const P = 'Arbitration'

/** The challenge pot: PalletId "ps/chlng" as a Substrate module account. */
export const CHALLENGE_POT = u8aToHex(new Uint8Array([...new TextEncoder().encode('modlps/chlng'), ...new Uint8Array(20)]))

export type ChallengeKind = 'Dispute' | 'InitialState' | 'Chunks'
export type ChallengeStatus = 'Pending' | 'Won' | 'Closed' | 'Paid'
/** committed challenges rank before uncommitted ones; among each, by seq */
export interface Rank { committed: boolean, seq: bigint, /** a revealed commitment's block: the window rules are read there */ at?: number }
export interface ChallengeEntry { who: string, kind: ChallengeKind, id: bigint, fact: number, committed: boolean, seq: bigint, status: ChallengeStatus }
export interface HeldShare { kind: ChallengeKind, fact: number, amount: bigint, paid: boolean }
interface CommitRef { seq: bigint, at: number }
/** An unrevealed commitment (challenge-commit.ts). */
export interface ChallengeCommit { who: string, commitment: string, at: number, seq: bigint, deposit: bigint }

export const ranksBefore = (a: Pick<Rank, 'committed' | 'seq'>, b: Pick<Rank, 'committed' | 'seq'>): boolean =>
  a.committed !== b.committed ? a.committed : a.seq < b.seq

export function takeSeq (ctx: Context): bigint {
  const seq = ctx.store.read<bigint>(P, 'NextChallengeSeq')
  ctx.store.put(P, 'NextChallengeSeq', undefined, seq + 1n)
  return seq
}

/** The rank of a challenge opened without a commitment: after every committed one, in the order they opened. */
export const uncommitted = (ctx: Context): Rank => ({ committed: false, seq: takeSeq(ctx) })

const entriesOf = (ctx: Context, taskId: bigint): ChallengeEntry[] => ctx.store.read<ChallengeEntry[]>(P, 'TaskChallenges', taskId)
const putEntries = (ctx: Context, taskId: bigint, e: ChallengeEntry[]): void => ctx.store.put(P, 'TaskChallenges', taskId, e)

export function noteChallenge (ctx: Context, taskId: bigint, who: string, kind: ChallengeKind, id: bigint, fact: number, rank: Rank, status: ChallengeStatus = 'Pending'): void {
  putEntries(ctx, taskId, [...entriesOf(ctx, taskId), { who, kind, id, fact, committed: rank.committed, seq: rank.seq, status }])
}

/** The entry of dispute or request `id` becomes `status` (from Pending only). */
export function settleChallenge (ctx: Context, taskId: bigint, kind: ChallengeKind, id: bigint, status: 'Won' | 'Closed'): ChallengeEntry | undefined {
  const all = entriesOf(ctx, taskId)
  const e = all.find(x => x.kind === kind && x.id === id && x.status === 'Pending')
  if (e === undefined) return undefined
  e.status = status
  putEntries(ctx, taskId, all)
  return e
}

/** Whether some challenge that won `fact` ranks before `rank` (a later right initial-state claim is then heard for nothing). */
export function outrankedOnFact (ctx: Context, taskId: bigint, kind: ChallengeKind, fact: number, rank: Rank): boolean {
  return entriesOf(ctx, taskId).some(e => e.kind === kind && e.fact === fact && (e.status === 'Won' || e.status === 'Paid') && ranksBefore(e, rank))
}

/** Whether every open challenge `ids` of the fact ranks after `rank`. */
export function ranksBeforeAll (ctx: Context, taskId: bigint, kind: ChallengeKind, ids: bigint[], rank: Rank): boolean {
  const open = entriesOf(ctx, taskId).filter(e => e.kind === kind && ids.includes(e.id))
  return open.length === ids.length && open.every(e => ranksBefore(rank, e))
}

/**
 * Slashes `loser` `amount` of its stake (capped at it) on behalf of the
 * challengers of `fact`: winner_share_ppm of it to the challenge pot, the rest
 * to the treasury. Returns the slash and the share held.
 */
export function slashForFact (ctx: Context, loser: string, amount: bigint): { taken: bigint, held: bigint } {
  // the pot holds what the slash passed to it: no share of stake bound to the loser's verifier slots (slashStakeSplit)
  const { taken, toWinner } = slashStakeSplit(ctx, loser, CHALLENGE_POT, amount)
  return { taken, held: toWinner }
}

export function holdShare (ctx: Context, taskId: bigint, kind: ChallengeKind, fact: number, amount: bigint): void {
  if (amount === 0n) return
  ctx.store.put(P, 'HeldShares', taskId, [...ctx.store.read<HeldShare[]>(P, 'HeldShares', taskId), { kind, fact, amount, paid: false }])
  ctx.emit(P, 'ShareHeld', { taskId, kind, fact, amount })
}

/**
 * A ruling against the solver stands (a dispute's, or a chunk request's
 * timeout): the solver is slashed slash_ppm of its stake as before, the
 * challenger's share held for the fact, the challenge won, the task failed.
 */
export function penalizeForFact (ctx: Context, taskId: bigint, t: TaskInfo, kind: ChallengeKind, id: bigint, challenger: string, fallbackFact: number): bigint {
  const e = settleChallenge(ctx, taskId, kind, id, 'Won')
  // a challenge opened before its task had entries (a runtime upgrade) ranks after every recorded one
  if (e === undefined) noteChallenge(ctx, taskId, challenger, kind, id, fallbackFact, uncommitted(ctx), 'Won')
  const n = t.solver === null ? undefined : ctx.store.get<{ stake: bigint }>(P, 'Nodes', t.solver)
  const { taken, held } = t.solver === null ? { taken: 0n, held: 0n } : slashForFact(ctx, t.solver, ppmOf(n?.stake ?? 0n, params(ctx).slashPpm))
  holdShare(ctx, taskId, kind, e?.fact ?? fallbackFact, held)
  t.solverFailed = true
  payShares(ctx, taskId)
  return taken
}

/**
 * Pays the held shares that are due: per fact, its largest unpaid share to
 * its earliest-ranked unpaid winner, while no challenge ranked before that
 * winner can still win the fact. `live`: the task's unrevealed commitments
 * still revealable (their fact is hidden: any may be this one). `final`: the
 * task is over, nothing can still win; a share nobody won goes to the treasury.
 */
export function payShares (ctx: Context, taskId: bigint, live: CommitRef[] = liveCommits(ctx, taskId), final = false): void {
  const shares = ctx.store.get<HeldShare[]>(P, 'HeldShares', taskId)
  if (shares === undefined || shares.every(s => s.paid)) return
  const entries = entriesOf(ctx, taskId)
  const facts = new Set(shares.filter(s => !s.paid).map(s => `${s.kind}:${s.fact}`))
  for (const key of facts) {
    const same = (x: { kind: ChallengeKind, fact: number }): boolean => `${x.kind}:${x.fact}` === key
    const pool = shares.filter(s => same(s) && !s.paid).sort((a, b) => a.amount > b.amount ? -1 : a.amount < b.amount ? 1 : 0)
    const winners = entries.filter(e => same(e) && e.status === 'Won').sort((a, b) => ranksBefore(a, b) ? -1 : ranksBefore(b, a) ? 1 : 0)
    for (let i = 0; i < pool.length; i++) {
      const w = winners[i]
      if (w === undefined) {
        if (!final) break
        payFromModule(ctx, CHALLENGE_POT, TREASURY, pool[i].amount)
        pool[i].paid = true
        continue
      }
      const blocked = entries.some(e => same(e) && e.status === 'Pending' && ranksBefore(e, w)) || live.some(c => ranksBefore({ committed: true, seq: c.seq }, w))
      if (!final && blocked) break
      const amount = payFromModule(ctx, CHALLENGE_POT, w.who, pool[i].amount)
      pool[i].paid = true
      w.status = 'Paid'
      ctx.emit(P, 'SharePaid', { taskId, who: w.who, kind: w.kind, fact: w.fact, amount })
    }
  }
  putEntries(ctx, taskId, entries)
  if (shares.every(s => s.paid)) ctx.store.remove(P, 'HeldShares', taskId)
  else ctx.store.put(P, 'HeldShares', taskId, shares)
}

/** The task's unrevealed commitments that may still be revealed (block, seq). */
export function liveCommits (ctx: Context, taskId: bigint): CommitRef[] {
  const w = params(ctx).disputeClock
  return ctx.store.read<CommitRef[]>(P, 'ChallengeCommits', taskId).filter(c => ctx.now <= c.at + w)
}

/** Disputes whose ruling a forced-error reveal excused take no share: closed. */
export function closeExcused (ctx: Context, taskId: bigint, t: Pick<TaskInfo, 'rulings'>): void {
  const excused = new Set(t.rulings.filter(r => r.outcome === 'ForcedError').map(r => BigInt(r.disputeId)))
  if (excused.size === 0) return
  const all = ctx.store.get<ChallengeEntry[]>(P, 'TaskChallenges', taskId)
  const open = all?.filter(e => e.kind === 'Dispute' && e.status === 'Pending' && excused.has(BigInt(e.id))) ?? []
  if (open.length === 0) return
  for (const e of open) e.status = 'Closed'
  putEntries(ctx, taskId, all!)
}

/** The task is over: commitments never revealed lose their deposit (back to their owners when `refund`: a faulted task). */
export function releaseCommitments (ctx: Context, taskId: bigint, refund: boolean): void {
  for (const c of ctx.store.read<ChallengeCommit[]>(P, 'ChallengeCommits', taskId)) {
    if (refund) unreserve(ctx, c.who, c.deposit)
    else {
      slashReserved(ctx, c.who, c.deposit)
      ctx.emit(P, 'CommitmentForfeited', { taskId, who: c.who, amount: c.deposit })
    }
  }
  ctx.store.remove(P, 'ChallengeCommits', taskId)
}
