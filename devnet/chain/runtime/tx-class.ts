import { BlockBuilder, type BlockRuntime } from './block-builder.js'
import type { ValidTx, ValidationEnv } from './transaction.js'
import { Overlay, type StateReader } from './state.js'

// Which transactions the pool and the block author serve first. The dev chain
// charges no fees, so anyone can fill the pool and the blocks with calls that
// cost nothing. Calls that meet a protocol deadline (a commit before the solve
// timeout, an answer before a force's `due`, a verdict or dispute inside the
// challenge window, a reveal, an availability or chunk answer) must not wait
// behind them: otherwise a flood times an honest party out and slashes it.
// Such a call is *operational* when it would succeed now (a dry run against
// the head state), so a failing call never jumps the queue; each succeeding
// one is bounded by the protocol (one answer per force, one verdict per slot)
// or costs a bond or deposit (disputes, availability challenges).

export type TxClass = 'operational' | 'normal'

/** The calls a party makes against a deadline. Registration, stake, roles, tasks and transfers are normal. */
const DEADLINE_CALLS = new Set([
  'release_task', 'commit_proof', 'commit_diverged', 'submit_verdict', 'open_dispute', 'force_move', 'answer_move',
  'claim_timeout', 'adjudicate', 'reveal_forced_error', 'challenge_availability', 'respond_availability', 'availability_timeout',
  'challenge_initial_state', 'sample_chunks', 'respond_chunks', 'chunks_timeout', 'reveal_draw',
  // an assigned verifier's evidence in its backing grace, a commitment's reveal before it expires, a dataset serve before its deadline
  'challenge_availability_many', 'commit_challenge', 'reveal_dispute', 'reveal_initial_state', 'reveal_sample_chunks',
  'challenge_dataset', 'respond_dataset', 'dataset_timeout'
])

/**
 * Deadline calls that may succeed while doing nothing, and the event that shows they did something:
 * a dataset serve part of rows already in is taken (two servers racing must not fail) but is no
 * answer, and free: operational, a flood of them would go ahead of everyone.
 */
const WORK_EVENT: Record<string, string> = { respond_dataset: 'DatasetServed' }

/** Whether a call can be operational at all (decided before its signature is checked). */
export function deadlineCall (tx: Pick<ValidTx, 'call'>): boolean {
  return tx.call.pallet === 'Arbitration' && DEADLINE_CALLS.has(tx.call.name)
}

/**
 * The class of `tx` if it went into the next block after `before` (its sender's
 * pooled transactions with the nonces just below it, in order): operational iff
 * it is a deadline call whose dispatch succeeds there. Nothing is written (the
 * dry run's overlay is dropped).
 */
export function classify (runtime: BlockRuntime, state: StateReader, before: ValidTx[], tx: ValidTx, env: ValidationEnv): TxClass {
  if (!deadlineCall(tx)) return 'normal'
  const parentHash = env.blockHash(env.number - 1) ?? env.genesisHash
  const builder = new BlockBuilder(runtime, new Overlay(state), { number: env.number, parentHash })
  for (const b of before) if (!builder.apply(b).included) return 'normal'
  const mark = builder.ctx.events.length
  if (builder.applyCall(tx.sender, tx.call) !== undefined) return 'normal'
  const work = WORK_EVENT[tx.call.name]
  if (work === undefined) return 'operational'
  const did = builder.ctx.events.slice(mark).some(e => (e.event as Record<string, Record<string, unknown> | undefined>).Arbitration?.[work] !== undefined)
  return did ? 'operational' : 'normal'
}
