import { describe, expect, it } from 'vitest'
import { createActor, waitFor } from 'xstate'
import { nodeSupervisor, type RolePorts } from '../../../actors/index.js'
import { verifierPorts } from '../../helpers/verifier-ports.js'

// The verifier's data-availability path: a checkpoint it could not get (or
// that is not the committed state) → it votes reject and opens an availability
// challenge of that checkpoint, not a bisection dispute.

function ports (verify: RolePorts['verify'], withAvailability = true): RolePorts & { calls: string[] } {
  const calls: string[] = []
  const p = verifierPorts(verify, calls, withAvailability ? { challengeAvailability: async (t: number, step: number) => { calls.push(`availability ${t} ${step}`); return { disputeId: 4, winner: 'challenger' as const } } } : {})
  return Object.assign(p, { calls })
}

const child = (a: any, role: string): any => a.getSnapshot().children[a.getSnapshot().context.active[role]]

describe('verifier: unavailable checkpoints', () => {
  it('votes reject and challenges the checkpoint\'s availability; a wrong step still goes to a dispute', async () => {
    const p = ports(async t => t === 1
      ? { accept: false, checkedSteps: [], unavailable: { step: 5, reason: 'checkpoint data hash mismatch' } }
      : { accept: false, checkedSteps: [1, 2], firstBadStep: 2 })
    const a = createActor(nodeSupervisor, { input: { roles: ['verifier'], roleInput: p } }).start()
    a.send({ type: 'chain.verifiersAssigned', taskId: 1, forMe: true })
    await waitFor(child(a, 'verifier'), s => s.context.history.length === 1, { timeout: 1000 })
    expect(child(a, 'verifier').getSnapshot().context.history[0].outcome).toBe('dispute 4: challenger won')
    a.send({ type: 'chain.verifiersAssigned', taskId: 2, forMe: true })
    await waitFor(child(a, 'verifier'), s => s.context.history.length === 2, { timeout: 1000 })
    expect(p.calls).toEqual(['verdict 1 false', 'availability 1 5', 'verdict 2 false', 'challenge 2 solver 2'])
  })

  it('a challenge the solver answers by serving the checkpoint on chain: it verifies again from it and votes anew', async () => {
    let runs = 0
    const p = ports(async () => (++runs === 1
      ? { accept: false, checkedSteps: [], unavailable: { step: 5, reason: 'not obtainable' } }
      : { accept: true, checkedSteps: [1, 2] }))
    p.challengeAvailability = async (t: number, step: number) => { p.calls.push(`availability ${t} ${step}`); return { disputeId: 4, winner: 'defender' as const, served: true } }
    const a = createActor(nodeSupervisor, { input: { roles: ['verifier'], roleInput: p } }).start()
    a.send({ type: 'chain.verifiersAssigned', taskId: 7, forMe: true })
    await waitFor(child(a, 'verifier'), s => s.context.history.length === 1, { timeout: 1000 })
    expect(p.calls).toEqual(['verdict 7 false', 'availability 7 5', 'verdict 7 true'])
    expect(child(a, 'verifier').getSnapshot().context.history[0].outcome).toBe('accepted')
  })

  it('challenges every checkpoint its sample needs that it could not use, at once', async () => {
    const p = ports(async () => ({ accept: false, checkedSteps: [], unavailable: { step: 0, reason: 'not obtainable', more: [5, 10] } }))
    p.challengeAvailability = async (t: number, step: number, more?: number[]) => { p.calls.push(`availability ${t} ${[step, ...more ?? []].join(',')}`); return { disputeId: 4, winner: 'challenger' as const } }
    const a = createActor(nodeSupervisor, { input: { roles: ['verifier'], roleInput: p } }).start()
    a.send({ type: 'chain.verifiersAssigned', taskId: 8, forMe: true })
    await waitFor(child(a, 'verifier'), s => s.context.history.length === 1, { timeout: 1000 })
    expect(p.calls).toEqual(['verdict 8 false', 'availability 8 0,5,10'])
  })

  it('a peer without availability challenges records a failed dispute instead of crashing', async () => {
    const p = ports(async () => ({ accept: false, checkedSteps: [], unavailable: { step: 0, reason: 'not obtainable' } }), false)
    const a = createActor(nodeSupervisor, { input: { roles: ['verifier'], roleInput: p } }).start()
    a.send({ type: 'chain.verifiersAssigned', taskId: 3, forMe: true })
    await waitFor(child(a, 'verifier'), s => s.context.history.length === 1, { timeout: 1000 })
    expect(child(a, 'verifier').getSnapshot().context.history[0].outcome).toBe('dispute failed')
    expect(child(a, 'verifier').getSnapshot().context.error).toMatch(/cannot open data-availability challenges/)
  })

  it('a whistleblower that cannot get a checkpoint behind an accepting verdict challenges its availability', async () => {
    const p = ports(async () => ({ accept: true, checkedSteps: [] }))
    p.recheckVerdict = async () => ({ accept: false, checkedSteps: [], unavailable: { step: 10, reason: 'not obtainable' } })
    const a = createActor(nodeSupervisor, { input: { roles: ['whistleblower'], roleInput: p } }).start()
    a.send({ type: 'chain.verdict', taskId: 6, verifier: 'v', accept: true, byMe: false })
    await waitFor(child(a, 'whistleblower'), s => s.context.history.length === 1, { timeout: 1000 })
    expect(p.calls).toEqual(['availability 6 10'])
  })
})
