import { assign, fromPromise, setup } from 'xstate'
import type { DisputeResult, DomainEvent, TrainResult } from '../ports.js'
import { enqueueTask, errorMessage, initialContext, record, type RoleContext } from './common.js'

// Solver: selected on chain for a task → trains it (program and dataset come
// from the shard exchange) → commits the proof root on chain → waits for
// verdicts; defends its proof if a dispute is opened against it.

interface SolverContext extends RoleContext { result?: TrainResult, disputeId?: number }

export const solverMachine = setup({
  types: {} as { context: SolverContext, events: DomainEvent | { type: 'drain' }, input: unknown },
  actors: {
    train: fromPromise<TrainResult, { ctx: SolverContext }>(async ({ input }) => await input.ctx.ports.train(input.ctx.current!)),
    commit: fromPromise<void, { ctx: SolverContext }>(async ({ input }) => await input.ctx.ports.commitProof(input.ctx.current!, input.ctx.result!)),
    defend: fromPromise<DisputeResult, { ctx: SolverContext }>(async ({ input }) => await input.ctx.ports.defend(input.ctx.current!, input.ctx.disputeId!))
  },
  guards: {
    hasQueued: ({ context }) => context.queue.length > 0,
    draining: ({ context }) => context.draining
  }
}).createMachine({
  id: 'solver',
  context: ({ input }) => initialContext(input),
  initial: 'idle',
  on: {
    'chain.solverSelected': {
      guard: ({ context, event }) => event.forMe && !context.draining,
      actions: assign({ queue: ({ context, event }) => enqueueTask(context, event.taskId) })
    },
    drain: { actions: assign({ draining: true }) }
  },
  states: {
    idle: {
      entry: assign({ current: undefined, result: undefined, disputeId: undefined }),
      always: [
        { guard: 'draining', target: 'retired' },
        { guard: 'hasQueued', target: 'training', actions: assign({ current: ({ context }) => context.queue[0], queue: ({ context }) => context.queue.slice(1) }) }
      ]
    },
    training: {
      invoke: {
        src: 'train',
        input: ({ context }) => ({ ctx: context }),
        onDone: { target: 'committing', actions: assign({ result: ({ event }) => event.output }) },
        onError: { target: 'idle', actions: assign({ error: ({ event }) => errorMessage(event.error), history: ({ context }) => record(context, 'training failed') }) }
      },
      on: {
        // replaced on chain (deadline missed): stop working on it
        'chain.solverReplaced': { guard: ({ context, event }) => event.wasMe && event.taskId === context.current, target: 'idle', actions: assign({ history: ({ context }) => record(context, 'replaced') }) }
      }
    },
    committing: {
      invoke: {
        src: 'commit',
        input: ({ context }) => ({ ctx: context }),
        onDone: { target: 'awaitingVerdicts' },
        onError: { target: 'idle', actions: assign({ error: ({ event }) => errorMessage(event.error), history: ({ context }) => record(context, 'commit failed') }) }
      }
    },
    awaitingVerdicts: {
      on: {
        'chain.disputeOpened': {
          guard: ({ context, event }) => event.againstMe && event.taskId === context.current,
          target: 'defending',
          actions: assign({ disputeId: ({ event }) => event.disputeId })
        },
        'chain.taskSettled': {
          guard: ({ context, event }) => event.taskId === context.current,
          target: 'idle',
          actions: assign({ history: ({ context }) => record(context, 'settled') })
        }
      }
    },
    defending: {
      invoke: {
        src: 'defend',
        input: ({ context }) => ({ ctx: context }),
        onDone: { target: 'awaitingVerdicts' },
        onError: { target: 'awaitingVerdicts', actions: assign({ error: ({ event }) => errorMessage(event.error) }) }
      },
      on: {
        'chain.taskSettled': { guard: ({ context, event }) => event.taskId === context.current, target: 'idle', actions: assign({ history: ({ context }) => record(context, 'settled') }) }
      }
    },
    retired: { type: 'final' }
  }
})
