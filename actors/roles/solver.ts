import { and, assign, fromPromise, setup, stateIn } from 'xstate'
import type { DisputeResult, DomainEvent, PublishedRun } from '../ports.js'
import { enqueueTask, errorMessage, initialContext, record, type RoleContext } from './common.js'

// Solver: selected on chain for a task → trains it (program and dataset come
// from the shard exchange) → commits the proof root on chain, then takes the
// next task. Two regions run side by side: `work` trains one task at a time;
// `disputes` defends committed proofs, so a dispute opened while the solver
// trains another task is answered before any response window runs out. A committed task
// stays on the solver's books until the chain settles it.

interface SolverContext extends RoleContext {
  result?: PublishedRun
  /** committed tasks awaiting settlement */
  committed: number[]
  /** disputes against this solver: queue and the one being defended */
  disputeQueue: Array<{ taskId: number, disputeId: number }>
  defending?: { taskId: number, disputeId: number }
}

export const solverMachine = setup({
  types: {} as { context: SolverContext, events: DomainEvent | { type: 'drain' }, input: unknown },
  actors: {
    train: fromPromise<PublishedRun, { ctx: SolverContext }>(async ({ input }) => await input.ctx.ports.train(input.ctx.current!)),
    commit: fromPromise<void, { ctx: SolverContext }>(async ({ input }) => await input.ctx.ports.commitProof(input.ctx.current!, input.ctx.result!)),
    defend: fromPromise<DisputeResult, { ctx: SolverContext }>(async ({ input }) => await input.ctx.ports.defend(input.ctx.defending!.taskId, input.ctx.defending!.disputeId))
  },
  guards: {
    hasQueued: ({ context }) => context.queue.length > 0,
    hasDisputes: ({ context }) => context.disputeQueue.length > 0,
    draining: ({ context }) => context.draining,
    nothingPending: ({ context }) => context.queue.length === 0 && context.committed.length === 0 && context.disputeQueue.length === 0
  }
}).createMachine({
  id: 'solver',
  context: ({ input }) => ({ ...initialContext(input), committed: [], disputeQueue: [] }),
  initial: 'active',
  on: {
    'chain.solverSelected': {
      guard: ({ context, event }) => event.forMe && !context.draining,
      actions: assign({ queue: ({ context, event }) => enqueueTask(context, event.taskId) })
    },
    'chain.disputeOpened': {
      guard: ({ event }) => event.againstMe,
      actions: assign({ disputeQueue: ({ context, event }) => [...context.disputeQueue, { taskId: event.taskId, disputeId: event.disputeId }] })
    },
    'chain.taskSettled': {
      guard: ({ context, event }) => context.committed.includes(event.taskId),
      actions: assign({
        committed: ({ context, event }) => context.committed.filter(t => t !== event.taskId),
        history: ({ context, event }) => [...context.history, { taskId: event.taskId, outcome: 'settled' }].slice(-100)
      })
    },
    drain: { actions: assign({ draining: true }) }
  },
  states: {
    active: {
      type: 'parallel',
      // draining: retire once nothing is queued, training, committed-but-unsettled or disputed
      always: {
        guard: and(['draining', 'nothingPending', stateIn('#solver.active.work.idle'), stateIn('#solver.active.disputes.idle')]),
        target: 'retired'
      },
      states: {
        work: {
          initial: 'idle',
          states: {
            idle: {
              entry: assign({ current: undefined, result: undefined }),
              always: { guard: 'hasQueued', target: 'training', actions: assign({ current: ({ context }) => context.queue[0], queue: ({ context }) => context.queue.slice(1) }) }
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
                onDone: { target: 'idle', actions: assign({ committed: ({ context }) => [...context.committed, context.current!] }) },
                onError: { target: 'idle', actions: assign({ error: ({ event }) => errorMessage(event.error), history: ({ context }) => record(context, 'commit failed') }) }
              }
            }
          }
        },
        disputes: {
          initial: 'idle',
          states: {
            idle: {
              entry: assign({ defending: undefined }),
              always: { guard: 'hasDisputes', target: 'defending', actions: assign({ defending: ({ context }) => context.disputeQueue[0], disputeQueue: ({ context }) => context.disputeQueue.slice(1) }) }
            },
            defending: {
              invoke: {
                src: 'defend',
                input: ({ context }) => ({ ctx: context }),
                onDone: { target: 'idle', actions: assign({ history: ({ context, event }) => [...context.history, { taskId: context.defending!.taskId, outcome: `dispute ${event.output.disputeId}: ${event.output.winner} won` }].slice(-100) }) },
                onError: { target: 'idle', actions: assign({ error: ({ event }) => errorMessage(event.error) }) }
              }
            }
          }
        }
      }
    },
    retired: { type: 'final' }
  }
})
