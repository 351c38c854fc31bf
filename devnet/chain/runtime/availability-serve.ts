import { hexToU8a, u8aToHex } from '@polkadot/util'
import { AvailabilityRejected, SERVE_EXTEND_BYTES, checkServePart } from '../../../protocols/availability/index.js'
import type { AvailabilityChallenge, TaskInfo } from '../../../protocols/pallet-types.js'
import { getTask, params, putTask } from './arbitration.js'
import { getAssignments, putAssignments } from './assignment.js'
import type { Context } from './context.js'
import { rootEveryOfTask } from './segments.js'
import { commitSchemeOfTask } from './state-commitment.js'
import { servedChallengers } from './served-grace.js'
import { answerWindow } from './held-requests.js'

// Serving a challenged checkpoint through the chain (docs/economics.md
// "Selective serving"), part of the Arbitration pallet. The chain cannot see
// off-chain delivery, so an availability challenge is answered only by
// putting the whole checkpoint on chain (protocols/availability/serve.ts):
// respond_availability parts, each checked against the committed state root,
// until every leaf of the state is in. Then the challenger HAS the data: an
// assigned verifier's reject that rested on it is withdrawn and it must give
// a verdict again (served grace: until the serve's block + challenge_window),
// or its slot lapses like any silent one. The serve completes every open
// challenge of the same checkpoint at once (the data is public now).

const P = 'Arbitration'
const ZERO_HASH = '0x' + '00'.repeat(32)

/** A challenge's serve so far: leaves on chain, of `total`, the headers every part repeats, and the blocks holding the parts. */
export interface ServeProgress { served: number, total: number, headersHash: string, parts: number[], servedAs: bigint }

export const serveProgress = (ctx: Context, id: bigint): ServeProgress | undefined => ctx.store.get<ServeProgress>(P, 'AvailabilityServes', id)

/** The next part of a serve of challenge `id` (its solver's respond_availability, status Open and in time checked by the caller). Returns whether the serve is complete. */
export function servePart (ctx: Context, id: bigint, c: AvailabilityChallenge, t: TaskInfo, response: string): boolean {
  const before = serveProgress(ctx, id) ?? { served: 0, total: 0, headersHash: ZERO_HASH, parts: [], servedAs: id }
  let checked: ReturnType<typeof checkServePart>
  try {
    checked = checkServePart({
      proofRoot: hexToU8a(t.proofRoot), step: c.checkpointStep, stepCount: t.stepCount, rootEvery: rootEveryOfTask(ctx, c.taskId),
      stateCommitment: commitSchemeOfTask(ctx, c.taskId),
      served: before.served, headersHash: before.served === 0 ? undefined : hexToU8a(before.headersHash)
    }, hexToU8a(response))
  } catch (e) {
    if (e instanceof AvailabilityRejected) ctx.fail(P, e.reason)
    ctx.fail(P, 'InvalidAvailabilityResponse')
  }
  const after: ServeProgress = {
    served: checked.served, total: checked.total, headersHash: u8aToHex(checked.headersHash), parts: [...before.parts, ctx.now], servedAs: id
  }
  ctx.store.put(P, 'AvailabilityServes', id, after)
  ctx.emit(P, 'AvailabilityServed', { challengeId: id, taskId: c.taskId, from: before.served, leaves: checked.served - before.served, total: checked.total, response })
  const complete = checked.served === checked.total
  // a solver that is serving is not timed out for its state's size: a substantial part renews the answer window
  // of every open challenge of the task (of this checkpoint: the serve will answer them all; of the others: a
  // verifier challenges every checkpoint it needs at once, and the solver serves them one after another)
  if (!complete && checked.leafBytes >= SERVE_EXTEND_BYTES) {
    const until = ctx.now + 1 + answerWindow(params(ctx), t)
    for (const [, other] of ctx.store.read<Array<[number, bigint]>>(P, 'OpenAvailability', c.taskId)) {
      const x = other === id ? c : ctx.store.get<AvailabilityChallenge>(P, 'AvailabilityChallenges', other)
      if (x === undefined || until <= x.deadline) continue
      x.deadline = until
      ctx.store.put(P, 'AvailabilityChallenges', other, x)
    }
  }
  return complete
}

/** The other open challenges of the same checkpoint are answered by the same serve: they share its parts. */
export function shareServe (ctx: Context, from: bigint, to: bigint): void {
  const p = serveProgress(ctx, from)
  if (p !== undefined) ctx.store.put(P, 'AvailabilityServes', to, p)
}

/**
 * `who`'s challenge was served. If it is an active assigned verifier with no
 * other challenge still open, its evidence is spent: its reject (resting on
 * data it now has) is withdrawn, it is no longer backed, and it has until the
 * later of its deadline and now + challenge_window (the time the submitter
 * allowed a verifier to fetch and replay) to vote again.
 */
export function reopenVerdict (ctx: Context, taskId: bigint, who: string, stillOpen: (who: string) => boolean): void {
  const all = getAssignments(ctx, taskId)
  const mine = all?.verifiers.find(v => v.verifier === who && v.status === 'Active')
  if (all === undefined || mine === undefined || stillOpen(who)) return
  const t = getTask(ctx, taskId)
  t.verdicts = t.verdicts.filter(v => v.verifier !== who || v.accept)
  putTask(ctx, taskId, t)
  mine.backed = false
  mine.deadline = Math.max(mine.deadline, ctx.now + t.challengeWindow)
  putAssignments(ctx, taskId, all)
  const served = servedChallengers(ctx, taskId)
  if (!served.includes(who)) ctx.store.put(P, 'ServedChallengers', taskId, [...served, who])
  ctx.emit(P, 'VerdictReopened', { taskId, verifier: who, deadline: mine.deadline })
}
