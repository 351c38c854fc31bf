import type { CommitScheme } from '../../../protocols/commit/scheme.js'
import type { Context } from './context.js'

// A task's state commitment (part of the Arbitration pallet;
// state-commitment-spec.ts): written by submit_task from its program, read by
// respond_availability (a chunked task's serve has chunked headers and
// leaves). Absent: row + column, every task as before.

const P = 'Arbitration'
const CHUNKED = 1

export function commitSchemeOfTask (ctx: Context, taskId: bigint): CommitScheme {
  return ctx.store.get<number>(P, 'TaskStateCommitment', taskId) === CHUNKED ? 'chunked' : 'rowcol'
}

export function setCommitScheme (ctx: Context, taskId: bigint, c: CommitScheme): void {
  if (c === 'chunked') ctx.store.put(P, 'TaskStateCommitment', taskId, CHUNKED)
}
