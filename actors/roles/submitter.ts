import { assign, fromPromise, setup } from 'xstate'
import type { CollectedResult, DomainEvent, SubmitResult, TaskSpec } from '../ports.js'
import { errorMessage, initialContext, type RoleContext } from './common.js'

// Submitter: submits tasks on chain (escrow) and announces them; when one is
// settled, collects the trained model. Drains once it has no open task.

interface SubmitterContext extends RoleContext {
  specs: TaskSpec[]
  open: number[]
  settled: number[]
  results: Record<number, CollectedResult>
}

export const submitterMachine = setup({
  types: {} as { context: SubmitterContext, events: DomainEvent | { type: 'drain' }, input: unknown },
  actors: {
    submit: fromPromise<SubmitResult, { ctx: SubmitterContext }>(async ({ input }) => await input.ctx.ports.submitTask(input.ctx.specs[0])),
    collect: fromPromise<CollectedResult, { ctx: SubmitterContext }>(async ({ input }) => await input.ctx.ports.collectResult(input.ctx.settled[0]))
  },
  guards: {
    hasSpecs: ({ context }) => context.specs.length > 0,
    hasSettled: ({ context }) => context.settled.length > 0,
    drained: ({ context }) => context.draining && context.open.length === 0 && context.specs.length === 0
  }
}).createMachine({
  id: 'submitter',
  context: ({ input }) => ({ ...initialContext(input), specs: [], open: [], settled: [], results: {} }),
  initial: 'idle',
  on: {
    'cmd.submit': { guard: ({ context }) => !context.draining, actions: assign({ specs: ({ context, event }) => [...context.specs, event.spec] }) },
    'chain.taskSettled': {
      guard: ({ context, event }) => context.open.includes(event.taskId),
      actions: assign({
        settled: ({ context, event }) => [...context.settled, event.taskId], open: ({ context, event }) => context.open.filter(t => t !== event.taskId)
      })
    },
    drain: { actions: assign({ draining: true }) }
  },
  states: {
    idle: {
      always: [
        { guard: 'hasSpecs', target: 'submitting' },
        { guard: 'hasSettled', target: 'collecting' },
        { guard: 'drained', target: 'retired' }
      ]
    },
    submitting: {
      invoke: {
        src: 'submit',
        input: ({ context }) => ({ ctx: context }),
        onDone: { target: 'idle', actions: assign({ open: ({ context, event }) => [...context.open, event.output.taskId], specs: ({ context }) => context.specs.slice(1), current: ({ event }) => event.output.taskId }) },
        onError: { target: 'idle', actions: assign({ error: ({ event }) => errorMessage(event.error), specs: ({ context }) => context.specs.slice(1) }) }
      }
    },
    collecting: {
      invoke: {
        src: 'collect',
        input: ({ context }) => ({ ctx: context }),
        onDone: { target: 'idle', actions: assign({ results: ({ context, event }) => ({ ...context.results, [context.settled[0]]: event.output }), settled: ({ context }) => context.settled.slice(1) }) },
        onError: { target: 'idle', actions: assign({ error: ({ event }) => errorMessage(event.error), settled: ({ context }) => context.settled.slice(1) }) }
      }
    },
    retired: { type: 'final' }
  }
})
