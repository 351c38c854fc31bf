import { assign, enqueueActions, raise, setup, type AnyActorLogic, type AnyEventObject } from 'xstate'
import { ROLE_NAMES, type RoleName } from '../protocols/roles.js'

// The node supervisor: one per peer. It owns the peer's roles and keeps one
// role actor per role. Switching roles at run time spawns new role actors and
// asks removed ones to drain: a draining actor finishes its in-flight work
// (a solver completes and commits the task it was selected for), then reaches
// its final state and is stopped. Nothing in flight is lost or abandoned.
//
// Domain events (chain.*, gossip.*, cmd.*) are forwarded to every live role
// actor, draining ones included (they may need them to finish).

export { ROLE_NAMES, type RoleName }

export interface SupervisorContext {
  roles: RoleName[]
  initialRoles: RoleName[]
  /** role → id of its active actor */
  active: Partial<Record<RoleName, string>>
  /** ids of actors finishing their work after their role was removed */
  retiring: string[]
  seq: number
  roleInput: unknown
}

export type SupervisorEvent =
  | { type: 'roles.set', roles: RoleName[] }
  | { type: 'roles.add', roles: RoleName[] }
  | { type: 'roles.remove', roles: RoleName[] }
  | { type: 'shutdown' }
  | AnyEventObject

export interface SupervisorInput {
  roles: RoleName[]
  /** passed to every role actor as its input (ports: chain, trainer, shards, gossip, ...) */
  roleInput: unknown
}

function nextRoles (ctx: SupervisorContext, ev: AnyEventObject): RoleName[] {
  const given = (ev.roles ?? []) as RoleName[]
  if (ev.type === 'roles.set') return [...new Set(given)]
  if (ev.type === 'roles.add') return [...new Set([...ctx.roles, ...given])]
  return ctx.roles.filter(r => !given.includes(r))
}

export function createSupervisorMachine (roleLogic: Record<RoleName, AnyActorLogic>) {
  return setup({
    types: {} as { context: SupervisorContext, events: SupervisorEvent, input: SupervisorInput },
    actors: roleLogic as Record<RoleName, AnyActorLogic>
  }).createMachine({
    id: 'supervisor',
    context: ({ input }) => ({ roles: [], initialRoles: input.roles, active: {}, retiring: [], seq: 0, roleInput: input.roleInput }),
    initial: 'running',
    // apply the initial roles through the same path as a run-time change
    entry: raise(({ context }) => ({ type: 'roles.set', roles: context.initialRoles })),
    states: {
      running: {
        on: {
          'roles.*': {
            actions: enqueueActions(({ context, event, enqueue }) => {
              const want = nextRoles(context, event)
              const active = { ...context.active }
              const retiring = [...context.retiring]
              let seq = context.seq
              for (const role of ROLE_NAMES) {
                const id = active[role]
                if (id != null && !want.includes(role)) {
                  enqueue.sendTo(id, { type: 'drain' })
                  retiring.push(id)
                  delete active[role]
                }
                if (id == null && want.includes(role)) {
                  // a fresh id per spawn: re-adding a role while its old actor drains must not collide
                  const newId = `${role}#${++seq}`
                  enqueue.spawnChild(role, { id: newId, input: context.roleInput })
                  active[role] = newId
                }
              }
              enqueue.assign({ roles: want, active, retiring, seq })
            })
          },
          'xstate.done.actor.*': {
            actions: enqueueActions(({ context, event, enqueue }) => {
              const id = event.type.slice('xstate.done.actor.'.length)
              enqueue.stopChild(id)
              enqueue.assign({ retiring: context.retiring.filter(r => r !== id) })
            })
          },
          shutdown: { target: 'stopped' },
          '*': {
            actions: enqueueActions(({ context, event, enqueue }) => {
              if (!/^(chain|gossip|cmd|dispute|timer)\./.test(event.type)) return
              for (const id of [...Object.values(context.active), ...context.retiring]) {
                if (id != null) enqueue.sendTo(id, event)
              }
            })
          }
        }
      },
      stopped: { type: 'final', entry: assign({ active: {}, retiring: [] }) }
    }
  })
}
