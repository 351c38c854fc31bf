import type { AssignmentStatus, TaskAssignments, VerifierAssignment } from '../../../protocols/pallet-types.js'
import type { Context } from './context.js'

// Verifier assignments, part of the Arbitration pallet: storage and lookups
// only (the draw and the rounds are verifier-rounds.ts). Verifiers are not
// first come: the chain draws them after the commit, from randomness that did
// not exist when the solver committed, so a solver's puppets can neither
// squat the slots nor choose accounts whose samples miss its faked steps.

const P = 'Arbitration'

export type { AssignmentStatus, TaskAssignments, VerifierAssignment }

export const getAssignments = (ctx: Context, taskId: bigint): TaskAssignments | undefined => ctx.store.get<TaskAssignments>(P, 'Assignments', taskId)
export const putAssignments = (ctx: Context, taskId: bigint, a: TaskAssignments): void => ctx.store.put(P, 'Assignments', taskId, a)

/** The live assignment of `who` on the task, if the chain drew it and it is not over. */
export function activeAssignment (ctx: Context, taskId: bigint, who: string): VerifierAssignment | undefined {
  return getAssignments(ctx, taskId)?.verifiers.find(v => v.verifier === who && v.status === 'Active')
}

/**
 * `who` opened a dispute, availability challenge or initial-state claim on the
 * task: if it is an assigned verifier, by its deadline, that backs its reject
 * and keeps it from being counted silent.
 */
export function noteEvidence (ctx: Context, taskId: bigint, who: string): void {
  const all = getAssignments(ctx, taskId)
  const mine = all?.verifiers.find(v => v.verifier === who && v.status === 'Active')
  if (all === undefined || mine === undefined || ctx.now > mine.deadline || mine.backed) return
  mine.backed = true
  putAssignments(ctx, taskId, all)
}
