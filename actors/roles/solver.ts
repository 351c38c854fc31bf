import { and, assign, enqueueActions, fromPromise, setup, stateIn } from 'xstate'
import type { DisputeResult, DomainEvent, RolePorts, PublishedRun } from '../ports.js'
import { errorMessage, initialContext, type RoleContext } from './common.js'
import { childOf, jobId, parseJobId, recordTask, shownStage, withStage, type TaskJob } from './jobs.js'

// Solver: selected on chain for a task → trains it (program and dataset come
// from the shard exchange) → commits the proof root on chain. Every selected
// task is a job of its own (training, then committing), so tasks train side
// by side as far as the peer's scheduler lets them; the `work` region shows the
// stage of the oldest job. The `disputes` region defends committed proofs, so a
// dispute opened while the solver trains is answered before any response
// window runs out. A committed task stays on the solver's books until the
// chain settles it.

type Stage = 'training' | 'committing'
const STAGES = ['train', 'commit'] as const

interface SolverContext extends RoleContext {
  jobs: Array<TaskJob<Stage>>
  /** committed tasks awaiting settlement */
  committed: number[]
  /** disputes against this solver: queue and the one being defended */
  disputeQueue: Array<{ taskId: number, disputeId: number }>
  defending?: { taskId: number, disputeId: number }
}

type SolverEvent = DomainEvent | { type: 'drain' } | { type: `xstate.done.actor.${string}`, output: unknown } | { type: `xstate.error.actor.${string}`, error: unknown }

const jobsAt = (jobs: Array<TaskJob<Stage>>): Pick<SolverContext, 'jobs' | 'current'> => ({ jobs, current: jobs[0]?.taskId })

export const solverMachine = setup({
  types: {} as { context: SolverContext, events: SolverEvent, input: unknown },
  actors: {
    train: fromPromise<PublishedRun, { ports: RolePorts, taskId: number }>(async ({ input, signal }) => await input.ports.train(input.taskId, signal)),
    commit: fromPromise<void, { ports: RolePorts, taskId: number, result: PublishedRun }>(
      async ({ input }) => await input.ports.commitProof(input.taskId, input.result)
    ),
    defend: fromPromise<DisputeResult, { ctx: SolverContext }>(
      async ({ input }) => await input.ctx.ports.defend(input.ctx.defending!.taskId, input.ctx.defending!.disputeId)
    )
  },
  guards: {
    showsTraining: ({ context }) => shownStage(context.jobs) === 'training',
    showsCommitting: ({ context }) => shownStage(context.jobs) === 'committing',
    noJobs: ({ context }) => context.jobs.length === 0,
    hasDisputes: ({ context }) => context.disputeQueue.length > 0,
    draining: ({ context }) => context.draining,
    nothingPending: ({ context }) => context.jobs.length === 0 && context.committed.length === 0 && context.disputeQueue.length === 0
  }
}).createMachine({
  id: 'solver',
  context: ({ input }) => ({ ...initialContext(input), jobs: [], committed: [], disputeQueue: [] }),
  initial: 'active',
  on: {
    'chain.solverSelected': {
      guard: ({ context, event }) => event.forMe && !context.draining && !context.jobs.some(j => j.taskId === event.taskId) &&
        !context.committed.includes(event.taskId),
      actions: enqueueActions(({ context, event, enqueue }) => {
        enqueue.spawnChild('train', { id: jobId('train', event.taskId), input: { ports: context.ports, taskId: event.taskId } })
        enqueue.assign(jobsAt(withStage(context.jobs, event.taskId, 'training')))
      })
    },
    // replaced on chain (deadline missed, or handed back): stop working on it
    'chain.solverReplaced': {
      guard: ({ context, event }) => event.wasMe && context.jobs.some(j => j.taskId === event.taskId && j.stage === 'training'),
      actions: enqueueActions(({ context, event, enqueue }) => {
        enqueue.stopChild(jobId('train', event.taskId))
        enqueue.assign({ ...jobsAt(withStage(context.jobs, event.taskId, undefined)), history: recordTask(context, event.taskId, 'replaced') })
      })
    },
    'xstate.done.actor.*': {
      actions: enqueueActions(({ context, event, enqueue }) => {
        const job = parseJobId(childOf(event.type), STAGES)
        if (job === undefined || !context.jobs.some(j => j.taskId === job.taskId)) return
        const output = (event as { output: unknown }).output
        if (job.stage === 'train') {
          enqueue.spawnChild('commit', { id: jobId('commit', job.taskId), input: { ports: context.ports, taskId: job.taskId, result: output as PublishedRun } })
          enqueue.assign(jobsAt(withStage(context.jobs, job.taskId, 'committing')))
        } else {
          enqueue.assign({ ...jobsAt(withStage(context.jobs, job.taskId, undefined)), committed: [...context.committed, job.taskId] })
        }
      })
    },
    'xstate.error.actor.*': {
      actions: enqueueActions(({ context, event, enqueue }) => {
        const job = parseJobId(childOf(event.type), STAGES)
        if (job === undefined || !context.jobs.some(j => j.taskId === job.taskId)) return
        const error = (event as { error: unknown }).error
        // a task the scheduler handed back (it could not finish in time) is not a failure of this peer's
        const outcome = (error as Error | undefined)?.name === 'JobRefused' ? 'handed back' : job.stage === 'train' ? 'training failed' : 'commit failed'
        enqueue.assign({
          ...jobsAt(withStage(context.jobs, job.taskId, undefined)), error: errorMessage(error), history: recordTask(context, job.taskId, outcome)
        })
      })
    },
    'chain.disputeOpened': {
      guard: ({ event }) => event.againstMe,
      actions: assign({ disputeQueue: ({ context, event }) => [...context.disputeQueue, { taskId: event.taskId, disputeId: event.disputeId }] })
    },
    'chain.taskSettled': {
      guard: ({ context, event }) => context.committed.includes(event.taskId),
      actions: assign({
        committed: ({ context, event }) => context.committed.filter(t => t !== event.taskId),
        history: ({ context, event }) => recordTask(context, event.taskId, 'settled')
      })
    },
    drain: { actions: assign({ draining: true }) }
  },
  states: {
    active: {
      type: 'parallel',
      // draining: retire once nothing is training, committing, committed-but-unsettled or disputed
      always: {
        guard: and(['draining', 'nothingPending', stateIn('#solver.active.work.idle'), stateIn('#solver.active.disputes.idle')]),
        target: 'retired'
      },
      states: {
        work: {
          initial: 'idle',
          states: {
            idle: {
              always: [{ guard: 'showsTraining', target: 'training' }, { guard: 'showsCommitting', target: 'committing' }]
            },
            training: {
              always: [{ guard: 'noJobs', target: 'idle' }, { guard: 'showsCommitting', target: 'committing' }]
            },
            committing: {
              always: [{ guard: 'noJobs', target: 'idle' }, { guard: 'showsTraining', target: 'training' }]
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
                onDone: { target: 'idle', actions: assign({ history: ({ context, event }) => recordTask(context, context.defending!.taskId, `dispute ${event.output.disputeId}: ${event.output.winner} won`) }) },
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
