import { and, assign, enqueueActions, fromPromise, setup } from 'xstate'
import type { DisputeResult, DomainEvent, RolePorts, VerifyResult } from '../ports.js'
import { errorMessage, initialContext, type RoleContext } from './common.js'
import { disputeFindings } from './disputes.js'
import { childOf, jobId, parseJobId, recordTask, shownStage, withStage, type TaskJob } from './jobs.js'

// Verifier: the chain draws it for a committed proof (only assigned verifiers'
// verdicts count: a proof commitment alone is no work for it) → re-executes
// the steps picked by the draw's randomness from checkpoints fetched over the
// DHT → posts its verdict → on a mismatch, challenges the solver and plays the
// dispute game (a reject without its own dispute is void; the challenge starts
// with the vote, not after its inclusion: the evidence is due within a short
// grace of the reject, and the step must be re-run first); when a checkpoint
// it needs is missing or not the committed state, it opens a
// data-availability challenge instead of staying silent; when the solver
// serves that checkpoint on chain, it verifies again from it and votes anew
// (its reject was withdrawn). A custom dataset it cannot get (or whose rows
// are not dataset_root's) is the same with the submitter: a dataset
// challenge, and a replay from the rows served on chain. Every assignment is
// a job of its own (verifying, voting, challenging), so several tasks are
// checked side by side as far as the peer's scheduler lets them; the actor's
// state is the stage of its oldest job.

type Stage = 'verifying' | 'voting' | 'challenging'
const STAGES = ['verify', 'vote', 'challenge'] as const

interface VerifierContext extends RoleContext { jobs: Array<TaskJob<Stage>> }

type VerifierEvent = DomainEvent | { type: 'drain' } | { type: `xstate.done.actor.${string}`, output: unknown } | { type: `xstate.error.actor.${string}`, error: unknown }

const jobsAt = (jobs: Array<TaskJob<Stage>>): Pick<VerifierContext, 'jobs' | 'current'> => ({ jobs, current: jobs[0]?.taskId })

export const verifierMachine = setup({
  types: {} as { context: VerifierContext, events: VerifierEvent, input: unknown },
  actors: {
    verify: fromPromise<VerifyResult, { ports: RolePorts, taskId: number }>(async ({ input }) => await input.ports.verify(input.taskId)),
    vote: fromPromise<VerifyResult, { ports: RolePorts, taskId: number, verdict: VerifyResult }>(async ({ input }) => {
      try {
        await input.ports.submitVerdict(input.taskId, input.verdict)
      } catch (err) {
        // the verdict was refused (the assignment lapsed, say): a wrong proof is still worth a dispute, as any whistleblower's
        if (input.verdict.accept) throw err
        return { ...input.verdict, voteError: errorMessage(err) } as VerifyResult
      }
      return input.verdict
    }),
    challenge: fromPromise<DisputeResult, { ports: RolePorts, taskId: number, verdict: VerifyResult }>(async ({ input }) => {
      const { ports, taskId, verdict } = input
      // the initial state was already ruled on by challenge_initial_state: no game to play
      if (verdict.initialState != null) return { disputeId: -1, winner: verdict.initialState.solverWrong ? 'challenger' : 'defender', reason: `initial state: ${verdict.initialState.reason}` }
      // the task's dataset it could not get: the submitter is challenged to serve the rows its sample replays
      // (with the checkpoints it could not get, at once: served only when all were)
      if (verdict.datasetUnavailable != null) {
        if (ports.challengeDataset == null) throw new Error('this peer cannot open dataset challenges')
        const u = verdict.unavailable
        if (u == null) return await ports.challengeDataset(taskId)
        if (ports.challengeAvailability == null) throw new Error('this peer cannot open data-availability challenges')
        const all = await Promise.all([ports.challengeDataset(taskId), ports.challengeAvailability(taskId, u.step, u.more)])
        return all.find(r => r.served !== true) ?? all[0]
      }
      // a checkpoint it could not get or that is not the committed state: a data-availability challenge, not a bisection
      if (verdict.unavailable != null) {
        if (ports.challengeAvailability == null) throw new Error('this peer cannot open data-availability challenges')
        return await ports.challengeAvailability(taskId, verdict.unavailable.step, verdict.unavailable.more)
      }
      // every forced error in our sample (each its part of the jackpot; the first backs the reject) and a cheat after them
      return await disputeFindings(ports, taskId, 'solver', verdict)
    })
  },
  guards: {
    draining: ({ context }) => context.draining,
    noJobs: ({ context }) => context.jobs.length === 0,
    showsVerifying: ({ context }) => shownStage(context.jobs) === 'verifying',
    showsVoting: ({ context }) => shownStage(context.jobs) === 'voting',
    showsChallenging: ({ context }) => shownStage(context.jobs) === 'challenging'
  }
}).createMachine({
  id: 'verifier',
  context: ({ input }) => ({ ...initialContext(input), jobs: [] }),
  initial: 'idle',
  on: {
    'chain.verifiersAssigned': {
      guard: ({ context, event }) => event.forMe && !context.draining && !context.jobs.some(j => j.taskId === event.taskId) &&
        !context.history.some(h => h.taskId === event.taskId),
      actions: enqueueActions(({ context, event, enqueue }) => {
        enqueue.spawnChild('verify', { id: jobId('verify', event.taskId), input: { ports: context.ports, taskId: event.taskId } })
        enqueue.assign(jobsAt(withStage(context.jobs, event.taskId, 'verifying')))
      })
    },
    // our reject was withdrawn by a serve while no job of ours followed the challenge (its follower gave up,
    // or the node restarted and its re-check could not vote): verify again and vote, or the slot lapses
    'chain.verdictReopened': {
      guard: ({ context, event }) => event.forMe && !context.draining && !context.jobs.some(j => j.taskId === event.taskId),
      actions: enqueueActions(({ context, event, enqueue }) => {
        enqueue.spawnChild('verify', { id: jobId('verify', event.taskId), input: { ports: context.ports, taskId: event.taskId } })
        enqueue.assign(jobsAt(withStage(context.jobs, event.taskId, 'verifying')))
      })
    },
    'xstate.done.actor.*': {
      actions: enqueueActions(({ context, event, enqueue }) => {
        const job = parseJobId(childOf(event.type), STAGES)
        if (job === undefined || !context.jobs.some(j => j.taskId === job.taskId)) return
        const { taskId } = job
        const output = (event as { output: unknown }).output
        if (job.stage === 'verify') {
          const verdict = output as VerifyResult
          enqueue.spawnChild('vote', { id: jobId('vote', taskId), input: { ports: context.ports, taskId, verdict } })
          if (verdict.accept) {
            enqueue.assign(jobsAt(withStage(context.jobs, taskId, 'voting')))
            return
          }
          // the reject's own evidence is due soon after it: the re-run of the step starts with the vote
          enqueue.spawnChild('challenge', { id: jobId('challenge', taskId), input: { ports: context.ports, taskId, verdict } })
          enqueue.assign(jobsAt(withStage(context.jobs, taskId, 'challenging')))
        } else if (job.stage === 'vote') {
          const v = output as VerifyResult & { voteError?: string }
          // a reject's challenge is already under way: a refused reject only leaves the dispute a whistleblower's
          if (!v.accept) {
            if (v.voteError !== undefined) enqueue.assign({ error: v.voteError })
            return
          }
          enqueue.assign({ ...jobsAt(withStage(context.jobs, taskId, undefined)), history: recordTask(context, taskId, 'accepted') })
        } else {
          const r = output as DisputeResult
          if (r.served === true) {
            // the checkpoint (or the dataset's rows) is on chain now and our reject was withdrawn: replay from it and vote again
            enqueue.spawnChild('verify', { id: jobId('verify', taskId), input: { ports: context.ports, taskId } })
            enqueue.assign(jobsAt(withStage(context.jobs, taskId, 'verifying')))
            return
          }
          enqueue.assign({ ...jobsAt(withStage(context.jobs, taskId, undefined)), history: recordTask(context, taskId, `dispute ${r.disputeId}: ${r.winner} won`) })
        }
      })
    },
    'xstate.error.actor.*': {
      actions: enqueueActions(({ context, event, enqueue }) => {
        const job = parseJobId(childOf(event.type), STAGES)
        if (job === undefined || !context.jobs.some(j => j.taskId === job.taskId)) return
        const error = (event as { error: unknown }).error
        const outcome = (error as Error | undefined)?.name === 'JobRefused' ? 'dropped' : { verify: 'verification failed', vote: 'vote failed', challenge: 'dispute failed' }[job.stage]!
        enqueue.assign({
          ...jobsAt(withStage(context.jobs, job.taskId, undefined)), error: errorMessage(error), history: recordTask(context, job.taskId, outcome)
        })
      })
    },
    drain: { actions: assign({ draining: true }) }
  },
  states: {
    idle: {
      always: [
        // draining: retire once the jobs in flight are done
        { guard: and(['draining', 'noJobs']), target: 'retired' },
        { guard: 'showsVerifying', target: 'verifying' },
        { guard: 'showsVoting', target: 'voting' },
        { guard: 'showsChallenging', target: 'challenging' }
      ]
    },
    verifying: { always: [{ guard: 'noJobs', target: 'idle' }, { guard: 'showsVoting', target: 'voting' }, { guard: 'showsChallenging', target: 'challenging' }] },
    voting: { always: [{ guard: 'noJobs', target: 'idle' }, { guard: 'showsVerifying', target: 'verifying' }, { guard: 'showsChallenging', target: 'challenging' }] },
    challenging: { always: [{ guard: 'noJobs', target: 'idle' }, { guard: 'showsVerifying', target: 'verifying' }, { guard: 'showsVoting', target: 'voting' }] },
    retired: { type: 'final' }
  }
})
