import type { ActorRefFrom, AnyActorLogic, SnapshotFrom } from 'xstate'
import { submitterMachine } from './roles/submitter.js'
import { solverMachine } from './roles/solver.js'
import { verifierMachine } from './roles/verifier.js'
import { whistleblowerMachine } from './roles/whistleblower.js'
import { createSupervisorMachine, type RoleName } from './supervisor.js'

export const roleMachines = {
  submitter: submitterMachine,
  solver: solverMachine,
  verifier: verifierMachine,
  whistleblower: whistleblowerMachine
} satisfies Record<RoleName, AnyActorLogic>

/** The actor of one role, typed by its machine (its snapshot's context, the events it takes). */
export type RoleActorRef<R extends RoleName> = ActorRefFrom<(typeof roleMachines)[R]>

export const nodeSupervisor = createSupervisorMachine(roleMachines)

/** The active actor of `role` in a supervisor snapshot; undefined when the peer does not have the role. */
export function activeRoleActor<R extends RoleName> (snapshot: SnapshotFrom<typeof nodeSupervisor>, role: R): RoleActorRef<R> | undefined {
  const id = snapshot.context.active[role]
  if (id == null) return undefined
  // the supervisor spawns roleMachines[role] under the id it keeps in active[role]
  return snapshot.children[id] as RoleActorRef<R> | undefined
}

export * from './supervisor.js'
export * from './trace.js'
export type * from './ports.js'
