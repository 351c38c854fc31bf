import * as arb from './arbitration.js'
import { revealForcedError } from './forced-reveal.js'
import * as disputes from './disputes.js'
import { AVAILABILITY_HANDLERS } from './availability.js'
import { CHUNK_HANDLERS } from './chunk-sampling.js'
import { challengeInitialState } from './initial-state.js'
import { commitDiverged } from './divergence.js'
import { releaseTask } from './selection.js'
import { transfer } from './balances.js'
import { variant, type Plain } from './codec.js'
import { DispatchFail, type Context } from './context.js'
import type { PlainCall } from './transaction.js'
import { takeRentDeposit } from './capacity-rent.js'
import { revealDraw } from './draw-reveal.js'
import { COMMIT_HANDLERS } from './challenge-commit.js'
import { DATASET_HANDLERS } from './dataset-availability.js'
import { CAPABILITY_HANDLERS } from './runtime-capability.js'

// Every callable of the runtime, by pallet and call name.

type Handler = (ctx: Context, who: string, args: Record<string, Plain>) => void

/** The account of a MultiAddress (only ::Id is supported). */
export function account (dest: Plain, _ctx: Context): string {
  const [kind, value] = variant(dest)
  if (kind !== 'Id' || typeof value !== 'string') throw new DispatchFail('CannotLookup', 'only MultiAddress::Id is supported')
  return value
}

const HANDLERS: Record<string, Handler> = {
  'System.remark': () => {},
  'Balances.transfer_allow_death': (ctx, who, a) => transfer(ctx, who, account(a.dest, ctx), a.value as bigint, false),
  'Balances.transfer_keep_alive': (ctx, who, a) => transfer(ctx, who, account(a.dest, ctx), a.value as bigint, true),
  'Arbitration.register_node': (ctx, who, a) => arb.registerNode(ctx, who, a as never),
  'Arbitration.add_stake': (ctx, who, a) => arb.addStake(ctx, who, a as never),
  'Arbitration.unregister': (ctx, who) => arb.unregisterNode(ctx, who),
  'Arbitration.set_roles': (ctx, who, a) => arb.setRoles(ctx, who, a as never),
  'Arbitration.submit_task': (ctx, who, a) => { takeRentDeposit(ctx, who, arb.submitTask(ctx, who, a as never)) },
  'Arbitration.release_task': (ctx, who, a) => releaseTask(ctx, who, a as never),
  'Arbitration.commit_proof': (ctx, who, a) => arb.commitProof(ctx, who, a as never),
  'Arbitration.submit_verdict': (ctx, who, a) => arb.submitVerdict(ctx, who, a as never),
  'Arbitration.open_dispute': (ctx, who, a) => { disputes.openDispute(ctx, who, a as never) },
  'Arbitration.force_move': (ctx, who, a) => disputes.forceMove(ctx, who, a as never),
  'Arbitration.answer_move': (ctx, who, a) => disputes.answerMove(ctx, who, a as never),
  'Arbitration.claim_timeout': (ctx, who, a) => disputes.claimTimeout(ctx, who, a as never),
  'Arbitration.adjudicate': (ctx, who, a) => disputes.adjudicate(ctx, who, a as never),
  'Arbitration.reveal_forced_error': (ctx, who, a) => revealForcedError(ctx, who, a as never),
  ...AVAILABILITY_HANDLERS,
  'Arbitration.challenge_initial_state': (ctx, who, a) => challengeInitialState(ctx, who, a as never),
  'Arbitration.commit_diverged': (ctx, who, a) => commitDiverged(ctx, who, a as never),
  ...CHUNK_HANDLERS,
  'Arbitration.reveal_draw': (ctx, who, a) => revealDraw(ctx, who, a as never),
  ...COMMIT_HANDLERS,
  ...DATASET_HANDLERS,
  ...CAPABILITY_HANDLERS
}

/** Runs a call as `who`; a DispatchFail is the call's DispatchError. */
export function dispatchCall (ctx: Context, who: string, c: PlainCall): void {
  if (c.pallet === '?') throw new DispatchFail('CannotLookup', 'unknown call')
  const handler = HANDLERS[`${c.pallet}.${c.name}`]
  if (handler === undefined) throw new DispatchFail('CannotLookup', 'call not implemented')
  handler(ctx, who, c.args)
}
