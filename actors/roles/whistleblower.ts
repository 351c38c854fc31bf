import { assign, fromPromise, setup } from 'xstate'
import type { DisputeResult, DomainEvent, VerifyResult } from '../ports.js'
import { errorMessage, initialContext, record, type RoleContext } from './common.js'
import { disputeFindings } from './disputes.js'

// Whistleblower (Truebit): re-checks verifiers' accepting verdicts; when a
// verdict is wrong — a forced error the verifier missed, or a lazy or
// colluding verifier — it disputes that step of the solver's proof: a real
// cheat pays it slash shares; a forced error slashes the blind accepts (its
// jackpot goes to the drawn verifiers whose sample held the step).
// It starts replaying as soon as the proof is committed rather than at the
// first accepting verdict: the challenge window then has to cover one full
// replay, not the verifiers' latency plus a replay.

interface WbContext extends RoleContext {
  pending: Array<{ taskId: number, verifier: string }>
  target?: { taskId: number, verifier: string }
  check?: VerifyResult
}

export const whistleblowerMachine = setup({
  types: {} as { context: WbContext, events: DomainEvent | { type: 'drain' }, input: unknown },
  actors: {
    recheck: fromPromise<VerifyResult, { ctx: WbContext }>(
      async ({ input }) => await input.ctx.ports.recheckVerdict(input.ctx.target!.taskId, input.ctx.target!.verifier)
    ),
    challenge: fromPromise<DisputeResult, { ctx: WbContext }>(async ({ input }) => {
      const { ports, target, check } = input.ctx
      // the initial state was already ruled on by challenge_initial_state: no game to play
      if (check?.initialState != null) return { disputeId: -1, winner: check.initialState.solverWrong ? 'challenger' : 'defender', reason: `initial state: ${check.initialState.reason}` }
      // a checkpoint it could not get or that is not the committed state: a data-availability challenge
      if (check?.unavailable != null) {
        if (ports.challengeAvailability == null) throw new Error('this peer cannot open data-availability challenges')
        return await ports.challengeAvailability(target!.taskId, check.unavailable.step)
      }
      // forced errors (no jackpot for us, but our disputes make the solver reveal them, which slashes the blind accepts) and a cheat after them
      return await disputeFindings(ports, target!.taskId, 'verifier', check)
    })
  },
  guards: {
    hasPending: ({ context }) => context.pending.length > 0,
    draining: ({ context }) => context.draining,
    disagrees: ({ event }) => (event as unknown as { output: VerifyResult }).output.accept === false
  }
}).createMachine({
  id: 'whistleblower',
  context: ({ input }) => ({ ...initialContext(input), pending: [] }),
  initial: 'idle',
  on: {
    'chain.proofCommitted': {
      guard: ({ context, event }) => !event.byMe && !context.draining && context.current !== event.taskId &&
        !context.history.some(h => h.taskId === event.taskId),
      actions: assign({ pending: ({ context, event }) => context.pending.some(p => p.taskId === event.taskId) ? context.pending : [...context.pending, { taskId: event.taskId, verifier: '' }] })
    },
    'chain.verdict': {
      // only accepting verdicts can hide an error; a rejecting one already opened a dispute
      // one re-check per task, however many verifiers accepted it
      guard: ({ context, event }) => event.accept && !event.byMe && !context.draining && context.current !== event.taskId &&
        !context.history.some(h => h.taskId === event.taskId),
      actions: assign({
        pending: ({ context, event }) => context.pending.some(p => p.taskId === event.taskId)
          ? context.pending
          : [...context.pending, { taskId: event.taskId, verifier: event.verifier }]
      })
    },
    drain: { actions: assign({ draining: true }) }
  },
  states: {
    idle: {
      entry: assign({ target: undefined, check: undefined, current: undefined }),
      always: [
        { guard: 'draining', target: 'retired' },
        { guard: 'hasPending', target: 'rechecking', actions: assign({ target: ({ context }) => context.pending[0], current: ({ context }) => context.pending[0].taskId, pending: ({ context }) => context.pending.slice(1) }) }
      ]
    },
    rechecking: {
      invoke: {
        src: 'recheck',
        input: ({ context }) => ({ ctx: context }),
        onDone: [
          { guard: 'disagrees', target: 'challenging', actions: assign({ check: ({ event }) => event.output }) },
          { target: 'idle', actions: assign({ history: ({ context }) => record(context, 'verdict confirmed') }) }
        ],
        onError: { target: 'idle', actions: assign({ error: ({ event }) => errorMessage(event.error), history: ({ context }) => record(context, 'recheck failed') }) }
      }
    },
    challenging: {
      invoke: {
        src: 'challenge',
        input: ({ context }) => ({ ctx: context }),
        onDone: { target: 'idle', actions: assign({ history: ({ context, event }) => record(context, `dispute ${event.output.disputeId}: ${event.output.winner} won`) }) },
        onError: { target: 'idle', actions: assign({ error: ({ event }) => errorMessage(event.error), history: ({ context }) => record(context, 'challenge failed') }) }
      }
    },
    retired: { type: 'final' }
  }
})
