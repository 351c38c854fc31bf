import { describe, expect, it } from 'vitest'
import { createActor, waitFor } from 'xstate'
import { nodeSupervisor, type RolePorts } from '../../../actors/index.js'

// Role machines driven through the supervisor with in-process ports that
// record calls (the real ports are exercised by the lifecycle integration test).

function ports (over: Partial<RolePorts> = {}): RolePorts & { calls: string[] } {
  const calls: string[] = []
  const p: RolePorts = {
    peerId: 'me',
    submitTask: async () => { calls.push('submit'); return { taskId: 7, programHash: '0x' } },
    collectResult: async t => { calls.push(`collect ${t}`); return { accuracy: 0.85 } },
    train: async t => { calls.push(`train ${t}`); return { proofRoot: '0x1', finalStateRoot: '0x2', steps: 4 } },
    commitProof: async t => { calls.push(`commit ${t}`) },
    verify: async t => { calls.push(`verify ${t}`); return { accept: t !== 9, checkedSteps: [1], firstBadStep: t === 9 ? 3 : undefined } },
    submitVerdict: async (t, v) => { calls.push(`verdict ${t} ${v.accept}`) },
    challenge: async (t, against, step) => { calls.push(`challenge ${t} ${against} ${step}`); return { disputeId: 1, winner: 'challenger' } },
    defend: async (t, d) => { calls.push(`defend ${t} ${d}`); return { disputeId: d, winner: 'challenger' } },
    recheckVerdict: async t => { calls.push(`recheck ${t}`); return { accept: false, checkedSteps: [2], firstBadStep: 2 } },
    ...over
  }
  return Object.assign(p, { calls })
}

/** calls grouped by task id: "verify 4" → { 4: ['verify'] } */
function perTask (calls: string[]): Record<number, string[]> {
  const out: Record<number, string[]> = {}
  for (const c of calls) {
    const [verb, t, ...rest] = c.split(' ')
    ;(out[Number(t)] ??= []).push([verb, ...rest].join(' '))
  }
  return out
}

const child = (a: any, role: string): any => a.getSnapshot().children[a.getSnapshot().context.active[role]]

describe('role machines', () => {
  it('solver: selected → trains → commits → defends a dispute → settles', async () => {
    const p = ports()
    const a = createActor(nodeSupervisor, { input: { roles: ['solver'], roleInput: p } }).start()
    a.send({ type: 'chain.solverSelected', taskId: 3, forMe: false })
    expect(child(a, 'solver').getSnapshot().matches({ active: { work: 'idle' } })).toBe(true)
    a.send({ type: 'chain.solverSelected', taskId: 3, forMe: true })
    await waitFor(child(a, 'solver'), s => s.context.committed.includes(3), { timeout: 1000 })
    a.send({ type: 'chain.disputeOpened', taskId: 3, disputeId: 5, againstMe: true, byMe: false })
    await waitFor(child(a, 'solver'), s => s.matches({ active: { disputes: 'idle' } }) && p.calls.includes('defend 3 5'), { timeout: 1000 })
    a.send({ type: 'chain.taskSettled', taskId: 3 })
    expect(child(a, 'solver').getSnapshot().context.committed).toEqual([])
    expect(p.calls).toEqual(['train 3', 'commit 3', 'defend 3 5'])
  })

  it('solver: trains the next task while an earlier one awaits verdicts, and defends while training', async () => {
    let release!: () => void
    const gate = new Promise<void>(resolve => { release = resolve })
    const p = ports({
      train: async t => { p.calls.push(`train ${t}`); if (t === 2) await gate; return { proofRoot: '0x1', finalStateRoot: '0x2', steps: 4 } }
    })
    const a = createActor(nodeSupervisor, { input: { roles: ['solver'], roleInput: p } }).start()
    a.send({ type: 'chain.solverSelected', taskId: 1, forMe: true })
    await waitFor(child(a, 'solver'), s => s.context.committed.includes(1), { timeout: 1000 })
    a.send({ type: 'chain.solverSelected', taskId: 2, forMe: true })
    await waitFor(child(a, 'solver'), s => s.matches({ active: { work: 'training' } }), { timeout: 1000 })
    a.send({ type: 'chain.disputeOpened', taskId: 1, disputeId: 9, againstMe: true, byMe: false })
    await waitFor(child(a, 'solver'), () => p.calls.includes('defend 1 9'), { timeout: 1000 })
    expect(child(a, 'solver').getSnapshot().matches({ active: { work: 'training' } })).toBe(true)
    // removed while training: it finishes task 2 and waits for both settlements before retiring
    const solver = child(a, 'solver')
    a.send({ type: 'roles.remove', roles: ['solver'] })
    release()
    await waitFor(solver, (s: any) => s.context.committed.includes(2), { timeout: 1000 })
    a.send({ type: 'chain.taskSettled', taskId: 1 })
    expect(a.getSnapshot().context.retiring).toHaveLength(1)
    a.send({ type: 'chain.taskSettled', taskId: 2 })
    expect(a.getSnapshot().context.retiring).toHaveLength(0)
    expect(p.calls).toEqual(['train 1', 'commit 1', 'train 2', 'defend 1 9', 'commit 2'])
  })

  it('solver: trains tasks side by side, each committed when its own training ends; a replaced one is abandoned', async () => {
    const gates = new Map<number, () => void>()
    const signals = new Map<number, AbortSignal>()
    const p = ports({
      train: async (t, signal) => {
        p.calls.push(`train ${t}`)
        if (signal != null) signals.set(t, signal)
        await new Promise<void>(resolve => gates.set(t, resolve))
        return { proofRoot: '0x1', finalStateRoot: '0x2', steps: 4 }
      }
    })
    const a = createActor(nodeSupervisor, { input: { roles: ['solver'], roleInput: p } }).start()
    for (const t of [1, 2, 3]) a.send({ type: 'chain.solverSelected', taskId: t, forMe: true })
    // the same selection twice (a catch-up after a restart) is one job
    a.send({ type: 'chain.solverSelected', taskId: 2, forMe: true })
    await waitFor(child(a, 'solver'), () => gates.size === 3, { timeout: 1000 })
    expect(child(a, 'solver').getSnapshot().context.jobs).toEqual([{ taskId: 1, stage: 'training' }, { taskId: 2, stage: 'training' }, { taskId: 3, stage: 'training' }])
    gates.get(2)!()
    await waitFor(child(a, 'solver'), s => s.context.committed.includes(2), { timeout: 1000 })
    a.send({ type: 'chain.solverReplaced', taskId: 1, wasMe: true })
    expect(signals.get(1)!.aborted).toBe(true)
    expect(signals.get(3)!.aborted).toBe(false)
    // the oldest job left is task 3's: the work region shows it
    expect(child(a, 'solver').getSnapshot().context.current).toBe(3)
    expect(child(a, 'solver').getSnapshot().matches({ active: { work: 'training' } })).toBe(true)
    gates.get(3)!()
    await waitFor(child(a, 'solver'), s => s.context.committed.includes(3) && s.matches({ active: { work: 'idle' } }), { timeout: 1000 })
    expect(p.calls).toEqual(['train 1', 'train 2', 'train 3', 'commit 2', 'commit 3'])
    expect(child(a, 'solver').getSnapshot().context.history).toEqual([{ taskId: 1, outcome: 'replaced' }])
  })

  it('solver: a task its scheduler hands back is recorded as such, not as a failure', async () => {
    const p = ports({ train: async () => { throw Object.assign(new Error('would finish too late'), { name: 'JobRefused' }) } })
    const a = createActor(nodeSupervisor, { input: { roles: ['solver'], roleInput: p } }).start()
    a.send({ type: 'chain.solverSelected', taskId: 4, forMe: true })
    await waitFor(child(a, 'solver'), s => s.context.history.length === 1, { timeout: 1000 })
    expect(child(a, 'solver').getSnapshot().context.history).toEqual([{ taskId: 4, outcome: 'handed back' }])
    expect(child(a, 'solver').getSnapshot().matches({ active: { work: 'idle' } })).toBe(true)
  })

  it('verifier: acts only where the chain drew it; accepts a good proof; rejects a bad one and challenges the solver at the first bad step', async () => {
    const p = ports()
    const a = createActor(nodeSupervisor, { input: { roles: ['verifier'], roleInput: p } }).start()
    // a committed proof, or a draw of other verifiers, is no work for it
    a.send({ type: 'chain.proofCommitted', taskId: 3, byMe: false })
    a.send({ type: 'chain.verifiersAssigned', taskId: 5, forMe: false })
    a.send({ type: 'chain.verifiersAssigned', taskId: 4, forMe: true })
    a.send({ type: 'chain.verifiersAssigned', taskId: 9, forMe: true })
    await waitFor(child(a, 'verifier'), s => s.value === 'idle' && p.calls.length === 5, { timeout: 1000 })
    // both are checked side by side; each task's own steps stay in order
    expect(perTask(p.calls)).toEqual({ 4: ['verify', 'verdict true'], 9: ['verify', 'verdict false', 'challenge solver 3'] })
    expect(child(a, 'verifier').getSnapshot().context.history).toEqual([{ taskId: 4, outcome: 'accepted' }, { taskId: 9, outcome: 'dispute 1: challenger won' }])
  })

  it('verifier: a refused verdict (its assignment lapsed) still leaves a wrong proof disputed; a refused accept is dropped', async () => {
    const p = ports({ submitVerdict: async (t, v) => { p.calls.push(`verdict ${t} ${v.accept}`); throw new Error('arbitration.NotAssigned') } })
    const a = createActor(nodeSupervisor, { input: { roles: ['verifier'], roleInput: p } }).start()
    a.send({ type: 'chain.verifiersAssigned', taskId: 4, forMe: true })
    a.send({ type: 'chain.verifiersAssigned', taskId: 9, forMe: true })
    await waitFor(child(a, 'verifier'), s => s.value === 'idle' && p.calls.length === 5, { timeout: 1000 })
    // both are checked side by side; each task's own steps stay in order
    expect(perTask(p.calls)).toEqual({ 4: ['verify', 'verdict true'], 9: ['verify', 'verdict false', 'challenge solver 3'] })
    expect(child(a, 'verifier').getSnapshot().context.history).toEqual([{ taskId: 4, outcome: 'vote failed' }, { taskId: 9, outcome: 'dispute 1: challenger won' }])
  })

  it('verifier: a reject\'s challenge starts with its vote, not after the vote is included (its evidence is due within a grace of the reject)', async () => {
    let include!: () => void
    const included = new Promise<void>(resolve => { include = resolve })
    const p = ports({ submitVerdict: async (t, v) => { p.calls.push(`verdict ${t} ${v.accept}`); await included } })
    const a = createActor(nodeSupervisor, { input: { roles: ['verifier'], roleInput: p } }).start()
    a.send({ type: 'chain.verifiersAssigned', taskId: 9, forMe: true })
    // the verdict is not in a block yet, and the step's re-run for the dispute is already under way
    await waitFor(child(a, 'verifier'), () => p.calls.includes('challenge 9 solver 3'), { timeout: 1000 })
    expect(p.calls).toEqual(['verify 9', 'verdict 9 false', 'challenge 9 solver 3'])
    include()
    await waitFor(child(a, 'verifier'), s => s.value === 'idle', { timeout: 1000 })
    expect(child(a, 'verifier').getSnapshot().context.history).toEqual([{ taskId: 9, outcome: 'dispute 1: challenger won' }])
  })

  it('whistleblower: rechecks accepting verdicts and challenges a wrong one', async () => {
    const p = ports()
    const a = createActor(nodeSupervisor, { input: { roles: ['whistleblower'], roleInput: p } }).start()
    a.send({ type: 'chain.verdict', taskId: 4, verifier: 'v1', accept: false, byMe: false })
    a.send({ type: 'chain.verdict', taskId: 5, verifier: 'v1', accept: true, byMe: false })
    await waitFor(child(a, 'whistleblower'), s => s.value === 'idle' && p.calls.length === 2, { timeout: 1000 })
    expect(p.calls).toEqual(['recheck 5', 'challenge 5 verifier 2'])
  })

  it('submitter: submits, then collects the result when settled; a training failure leaves the solver idle with the error', async () => {
    const p = ports({ train: async () => { throw new Error('dataset hash mismatch') } })
    const a = createActor(nodeSupervisor, { input: { roles: ['submitter', 'solver'], roleInput: p } }).start()
    a.send({ type: 'cmd.submit', spec: { program: {} } })
    await waitFor(child(a, 'submitter'), s => s.context.open.includes(7), { timeout: 1000 })
    a.send({ type: 'chain.taskSettled', taskId: 7 })
    await waitFor(child(a, 'submitter'), s => s.context.results[7] != null, { timeout: 1000 })
    expect(child(a, 'submitter').getSnapshot().context.results[7].accuracy).toBe(0.85)
    a.send({ type: 'chain.solverSelected', taskId: 7, forMe: true })
    await waitFor(child(a, 'solver'), s => s.context.error != null, { timeout: 1000 })
    expect(child(a, 'solver').getSnapshot().matches({ active: { work: 'idle' } })).toBe(true)
    expect(child(a, 'solver').getSnapshot().context.error).toBe('dataset hash mismatch')
  })
})

describe('whistleblower', () => {
  it('re-checks a task once however many verifiers accepted it', async () => {
    const p = ports({ recheckVerdict: async t => { p.calls.push(`recheck ${t}`); return { accept: true, checkedSteps: [1] } } })
    const a = createActor(nodeSupervisor, { input: { roles: ['whistleblower'], roleInput: p } }).start()
    a.send({ type: 'chain.verdict', taskId: 5, verifier: 'v1', accept: true, byMe: false })
    a.send({ type: 'chain.verdict', taskId: 5, verifier: 'v2', accept: true, byMe: false })
    await waitFor(child(a, 'whistleblower'), s => s.value === 'idle' && s.context.history.length === 1, { timeout: 1000 })
    a.send({ type: 'chain.verdict', taskId: 5, verifier: 'v3', accept: true, byMe: false })
    await new Promise(resolve => setTimeout(resolve, 50))
    expect(p.calls).toEqual(['recheck 5'])
  })

  it('starts re-checking when the proof is committed, and not again for the verdicts that follow; never its own proof', async () => {
    const p = ports({ recheckVerdict: async t => { p.calls.push(`recheck ${t}`); return { accept: true, checkedSteps: [1] } } })
    const a = createActor(nodeSupervisor, { input: { roles: ['whistleblower'], roleInput: p } }).start()
    a.send({ type: 'chain.proofCommitted', taskId: 3, byMe: true })
    a.send({ type: 'chain.proofCommitted', taskId: 5, byMe: false })
    await waitFor(child(a, 'whistleblower'), s => s.value === 'idle' && s.context.history.length === 1, { timeout: 1000 })
    a.send({ type: 'chain.verdict', taskId: 5, verifier: 'v1', accept: true, byMe: false })
    await new Promise(resolve => setTimeout(resolve, 50))
    expect(p.calls).toEqual(['recheck 5'])
  })
})
