import { describe, expect, it } from 'vitest'
import { createActor, waitFor } from 'xstate'
import { nodeSupervisor, type RolePorts, type VerifyResult } from '../../../actors/index.js'
import { verifierPorts } from '../../helpers/verifier-ports.js'

// The verifier and a withheld custom dataset (docs/economics.md "A withheld
// dataset"): a dataset it could not get → it votes reject and challenges the
// dataset (not a bisection, not silence); served → it verifies again (from
// the served rows) and votes anew; with checkpoints it could not get either,
// both are challenged at once and it verifies again only when both were served.

function ports (verify: RolePorts['verify'], served: { dataset: boolean, availability?: boolean }): RolePorts & { calls: string[] } {
  const calls: string[] = []
  const p = verifierPorts(verify, calls, {
    challengeDataset: async t => {
      calls.push(`dataset ${t}`)
      return served.dataset ? { disputeId: 9, winner: 'defender', served: true } : { disputeId: 9, winner: 'challenger' }
    },
    challengeAvailability: async (t, step) => {
      calls.push(`availability ${t} ${step}`)
      return served.availability === true ? { disputeId: 4, winner: 'defender', served: true } : { disputeId: 4, winner: 'challenger' }
    }
  })
  return Object.assign(p, { calls })
}

const child = (a: any, role: string): any => a.getSnapshot().children[a.getSnapshot().context.active[role]]
const noDataset: VerifyResult = { accept: false, checkedSteps: [], datasetUnavailable: { reason: 'the task names no dataset CID' } }

async function run (p: RolePorts, taskId: number, done = 1): Promise<any> {
  const a = createActor(nodeSupervisor, { input: { roles: ['verifier'], roleInput: p } }).start()
  a.send({ type: 'chain.verifiersAssigned', taskId, forMe: true })
  await waitFor(child(a, 'verifier'), s => s.context.history.length === done, { timeout: 1000 })
  return child(a, 'verifier').getSnapshot().context
}

describe('verifier: a dataset it cannot get', () => {
  it('unserved: votes reject and challenges the dataset; its reject stands', async () => {
    const p = ports(async () => noDataset, { dataset: false })
    const ctx = await run(p, 1)
    expect(p.calls).toEqual(['verdict 1 false', 'dataset 1'])
    expect(ctx.history[0].outcome).toBe('dispute 9: challenger won')
  })

  it('served: verifies again (from the served rows) and votes anew; a wrong step then goes to a dispute', async () => {
    let runs = 0
    const p = ports(async () => ++runs === 1 ? noDataset : { accept: true, checkedSteps: [1, 2] }, { dataset: true })
    expect((await run(p, 2)).history[0].outcome).toBe('accepted')
    expect(p.calls).toEqual(['verdict 2 false', 'dataset 2', 'verdict 2 true'])
    let again = 0
    const q = ports(async () => ++again === 1 ? noDataset : { accept: false, checkedSteps: [1, 2], firstBadStep: 2 }, { dataset: true })
    await run(q, 3)
    expect(q.calls).toEqual(['verdict 3 false', 'dataset 3', 'verdict 3 false', 'challenge 3 solver 2'])
  })

  it('with checkpoints it could not get either: both challenged at once; verified again only when both were served', async () => {
    const both: VerifyResult = { ...noDataset, unavailable: { step: 5, reason: 'not obtainable' } }
    let runs = 0
    const p = ports(async () => ++runs === 1 ? both : { accept: true, checkedSteps: [1] }, { dataset: true, availability: true })
    expect((await run(p, 4)).history[0].outcome).toBe('accepted')
    expect(p.calls.slice(0, 1)).toEqual(['verdict 4 false'])
    expect(new Set(p.calls.slice(1, 3))).toEqual(new Set(['dataset 4', 'availability 4 5']))
    expect(p.calls[3]).toBe('verdict 4 true')
    // the dataset served, the checkpoint not: the availability challenge's outcome stands
    const q = ports(async () => both, { dataset: true, availability: false })
    expect((await run(q, 5)).history[0].outcome).toBe('dispute 4: challenger won')
  })

  it('its reject reopened by a serve while no job of its followed the challenge (a restart): verifies again and votes', async () => {
    const p = ports(async () => ({ accept: true, checkedSteps: [1] }), { dataset: true })
    const a = createActor(nodeSupervisor, { input: { roles: ['verifier'], roleInput: p } }).start()
    // another verifier's reopened verdict is not ours
    a.send({ type: 'chain.verdictReopened', taskId: 6, forMe: false })
    a.send({ type: 'chain.verdictReopened', taskId: 7, forMe: true })
    await waitFor(child(a, 'verifier'), s => s.context.history.length === 1, { timeout: 1000 })
    expect(p.calls).toEqual(['verdict 7 true'])
    expect(child(a, 'verifier').getSnapshot().context.history[0]).toEqual({ taskId: 7, outcome: 'accepted' })
  })
})
