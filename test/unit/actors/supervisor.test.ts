import { describe, expect, it } from 'vitest'
import { assign, createActor, setup, type AnyActorLogic } from 'xstate'
import { createSupervisorMachine, ROLE_NAMES, type RoleName } from '../../../actors/supervisor.js'
import { activeRoleActor, nodeSupervisor } from '../../../actors/index.js'
import { TraceConverter, type TraceEntry } from '../../../actors/trace.js'

// A role with in-flight work, obeying the drain contract every role follows.
const worker = setup({ types: {} as { context: { draining: boolean, done: number } } }).createMachine({
  context: { draining: false, done: 0 },
  initial: 'idle',
  states: {
    idle: {
      always: { guard: ({ context }) => context.draining, target: 'retired' },
      on: { 'cmd.work': 'working', drain: { target: 'retired' } }
    },
    working: {
      on: {
        'cmd.finish': { target: 'idle', actions: assign({ done: ({ context }) => context.done + 1 }) },
        drain: { actions: assign({ draining: true }) }
      }
    },
    retired: { type: 'final' }
  }
})

function start (roles: RoleName[]) {
  const logic = Object.fromEntries(ROLE_NAMES.map(r => [r, worker])) as unknown as Record<RoleName, AnyActorLogic>
  const trace: TraceEntry[] = []
  const conv = new TraceConverter('peerA')
  const actor = createActor(createSupervisorMachine(logic), {
    input: { roles, roleInput: {} },
    inspect: ev => { const e = conv.convert(ev); if (e != null) trace.push(e) }
  })
  actor.start()
  return { actor, trace }
}

const children = (a: any): Record<string, any> => a.getSnapshot().children

describe('supervisor', () => {
  it('spawns one actor per initial role', () => {
    const { actor } = start(['solver', 'verifier'])
    expect(Object.keys(children(actor)).sort()).toEqual(['solver#1', 'verifier#2'])
    expect(actor.getSnapshot().context.roles).toEqual(['solver', 'verifier'])
  })

  it('switches roles at run time; a removed role with work in flight finishes it before stopping', () => {
    const { actor, trace } = start(['solver'])
    actor.send({ type: 'cmd.work' })
    expect(children(actor)['solver#1'].getSnapshot().value).toBe('working')
    actor.send({ type: 'roles.set', roles: ['verifier'] })
    // the solver is draining, not killed
    expect(children(actor)['solver#1'].getSnapshot().value).toBe('working')
    expect(actor.getSnapshot().context.retiring).toEqual(['solver#1'])
    expect(Object.keys(children(actor))).toContain('verifier#2')
    // re-adding the role while the old actor drains gets a fresh actor id
    actor.send({ type: 'roles.add', roles: ['solver'] })
    expect(actor.getSnapshot().context.active.solver).toBe('solver#3')
    actor.send({ type: 'cmd.finish' })
    expect(children(actor)['solver#1']).toBeUndefined()
    expect(actor.getSnapshot().context.retiring).toEqual([])
    const old = trace.filter(t => t.actorId === 'solver#1')
    expect(old.map(t => `${t.kind}:${t.from ?? ''}->${t.to ?? ''}`)).toEqual([
      'spawned:->', 'transition:->idle', 'transition:idle->working', 'event:working->working', 'stopped:working->retired'
    ])
    expect(old.map(t => t.event)).toEqual(['spawn', 'xstate.init', 'cmd.work', 'drain', 'cmd.finish'])
    expect(trace.find(t => t.actorId === 'supervisor' && t.event === 'roles.set')?.detail?.roles).toEqual(['verifier'])
  })

  it('stops an idle removed role at once, and ignores non-domain events', () => {
    const { actor } = start(['whistleblower'])
    actor.send({ type: 'roles.remove', roles: ['whistleblower'] })
    expect(Object.keys(children(actor))).toEqual([])
    actor.send({ type: 'random.event' })
    expect(actor.getSnapshot().value).toBe('running')
  })
})

describe('activeRoleActor', () => {
  it('gives the active actor of a role, typed by its machine, and nothing without the role', () => {
    const actor = createActor(nodeSupervisor, { input: { roles: ['submitter'], roleInput: {} } })
    actor.start()
    const sub = activeRoleActor(actor.getSnapshot(), 'submitter')
    expect(sub?.id).toMatch(/^submitter#/)
    expect(sub!.getSnapshot().context.open).toEqual([])
    expect(activeRoleActor(actor.getSnapshot(), 'solver')).toBeUndefined()
    actor.send({ type: 'roles.remove', roles: ['submitter'] })
    expect(activeRoleActor(actor.getSnapshot(), 'submitter')).toBeUndefined()
    actor.stop()
  })
})
