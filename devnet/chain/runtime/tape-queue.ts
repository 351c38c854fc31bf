import type { Context } from './context.js'

// The defender's tape queue (docs/disputes.md "Concurrent disputes"). A
// dispute's first defender message needs a re-run of the disputed step from the
// checkpoint before it, and the chain grants it a tape allowance: the re-run's
// price (rerun-cost.ts), at the submitter's pace or the program's cost at the
// reference speed if less. That allowance is for one re-run:
// if N disputes opened at once each got it from the same block, a griefer
// forcing every commit would ask for N re-runs in the time of one, and win by
// timeout against any honest solver once N is large enough. So the re-runs are
// queued per defender (its compute, whatever the task): each starts when the
// ones opened before it are done, and the defender's moves that need it are
// due that much later.

const P = 'Arbitration'
/** the last block a u32 block number names */
const LAST_BLOCK = 0xffff_ffff

/**
 * A block number the chain can store: a queue or a deadline past the last u32
 * block stops there. A defender's puppets can fill its queue with long tasks'
 * re-runs; a dispute against it must still open (an honest verifier's reject
 * needs it), only wait.
 */
export const storableBlock = (n: number): number => Math.min(n, LAST_BLOCK)

/** Queues a re-run of `work` blocks for `defender`'s dispute `id`; returns how many blocks it waits to start. */
export function queueTape (ctx: Context, id: bigint, defender: string, work: number): number {
  const busy = ctx.store.get<number>(P, 'TapeQueue', defender) ?? 0
  const start = Math.max(ctx.now, busy)
  ctx.store.put(P, 'TapeQueue', defender, storableBlock(start + work))
  if (start > ctx.now) ctx.store.put(P, 'TapeStart', id, start)
  return start - ctx.now
}

/** The block from which dispute `id`'s defender is given its tape allowance: not before its re-run's turn. */
export function tapeFrom (ctx: Context, id: bigint): number {
  return Math.max(ctx.now, ctx.store.get<number>(P, 'TapeStart', id) ?? 0)
}

/** The dispute ended: its place in the queue is no longer read. */
export function forgetTape (ctx: Context, id: bigint): void {
  ctx.store.remove(P, 'TapeStart', id)
}
