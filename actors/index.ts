import type { AnyActorLogic } from 'xstate'
import { submitterMachine } from './roles/submitter.js'
import { solverMachine } from './roles/solver.js'
import { verifierMachine } from './roles/verifier.js'
import { whistleblowerMachine } from './roles/whistleblower.js'
import { createSupervisorMachine, type RoleName } from './supervisor.js'

export const roleMachines: Record<RoleName, AnyActorLogic> = {
  submitter: submitterMachine,
  solver: solverMachine,
  verifier: verifierMachine,
  whistleblower: whistleblowerMachine
}

export const nodeSupervisor = createSupervisorMachine(roleMachines)
export * from './supervisor.js'
export * from './trace.js'
export type * from './ports.js'
