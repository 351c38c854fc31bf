import { assign, fromPromise, setup } from 'xstate'
import type { DisputeResult, DomainEvent, VerifyResult } from '../ports.js'
import { enqueueTask, errorMessage, initialContext, record, type RoleContext } from './common.js'

// Verifier: the chain draws it for a committed proof (only assigned verifiers'
// verdicts count: a proof commitment alone is no work for it) → re-executes
// the steps picked by the draw's randomness from checkpoints fetched over the
// DHT → posts its verdict → on a mismatch, challenges the solver and plays the
// dispute game (a reject without its own dispute is void); when a checkpoint
// it needs is missing or not the committed state, it opens a
// data-availability challenge instead of staying silent.

interface VerifierContext extends RoleContext { verdict?: VerifyResult }

export const verifierMachine = setup({
  types: {} as { context: VerifierContext, events: DomainEvent | { type: 'drain' }, input: unknown },
  actors: {
    verify: fromPromise<VerifyResult, { ctx: VerifierContext }>(async ({ input }) => await input.ctx.ports.verify(input.ctx.current!)),
    vote: fromPromise<void, { ctx: VerifierContext }>(async ({ input }) => await input.ctx.ports.submitVerdict(input.ctx.current!, input.ctx.verdict!)),
    challenge: fromPromise<DisputeResult, { ctx: VerifierContext }>(async ({ input }) => {
      const { ports, current, verdict } = input.ctx
      // the initial state was already ruled on by challenge_initial_state: no game to play
      if (verdict?.initialState != null) return { disputeId: -1, winner: verdict.initialState.solverWrong ? 'challenger' : 'defender', reason: `initial state: ${verdict.initialState.reason}` }
      // a checkpoint it could not get or that is not the committed state: a data-availability challenge, not a bisection
      if (verdict?.unavailable != null) {
        if (ports.challengeAvailability == null) throw new Error('this peer cannot open data-availability challenges')
        return await ports.challengeAvailability(current!, verdict.unavailable.step)
      }
      return await ports.challenge(current!, 'solver', verdict?.firstBadStep)
    })
  },
  guards: {
    hasQueued: ({ context }) => context.queue.length > 0,
    draining: ({ context }) => context.draining,
    rejected: ({ context }) => context.verdict?.accept === false
  }
}).createMachine({
  id: 'verifier',
  context: ({ input }) => initialContext(input),
  initial: 'idle',
  on: {
    'chain.verifiersAssigned': {
      guard: ({ context, event }) => event.forMe && !context.draining && !context.history.some(h => h.taskId === event.taskId),
      actions: assign({ queue: ({ context, event }) => enqueueTask(context, event.taskId) })
    },
    drain: { actions: assign({ draining: true }) }
  },
  states: {
    idle: {
      entry: assign({ current: undefined, verdict: undefined }),
      always: [
        { guard: 'draining', target: 'retired' },
        { guard: 'hasQueued', target: 'verifying', actions: assign({ current: ({ context }) => context.queue[0], queue: ({ context }) => context.queue.slice(1) }) }
      ]
    },
    verifying: {
      invoke: {
        src: 'verify',
        input: ({ context }) => ({ ctx: context }),
        onDone: { target: 'voting', actions: assign({ verdict: ({ event }) => event.output }) },
        onError: { target: 'idle', actions: assign({ error: ({ event }) => errorMessage(event.error), history: ({ context }) => record(context, 'verification failed') }) }
      }
    },
    voting: {
      invoke: {
        src: 'vote',
        input: ({ context }) => ({ ctx: context }),
        onDone: [
          { guard: 'rejected', target: 'challenging' },
          { target: 'idle', actions: assign({ history: ({ context }) => record(context, 'accepted') }) }
        ],
        onError: [
          // the verdict was refused (the assignment lapsed, say): a wrong proof is still worth a dispute, as any whistleblower's
          { guard: 'rejected', target: 'challenging', actions: assign({ error: ({ event }) => errorMessage(event.error) }) },
          { target: 'idle', actions: assign({ error: ({ event }) => errorMessage(event.error), history: ({ context }) => record(context, 'vote failed') }) }
        ]
      }
    },
    challenging: {
      invoke: {
        src: 'challenge',
        input: ({ context }) => ({ ctx: context }),
        onDone: { target: 'idle', actions: assign({ history: ({ context, event }) => record(context, `dispute ${event.output.disputeId}: ${event.output.winner} won`) }) },
        onError: { target: 'idle', actions: assign({ error: ({ event }) => errorMessage(event.error), history: ({ context }) => record(context, 'dispute failed') }) }
      }
    },
    retired: { type: 'final' }
  }
})
