import { describe, expect, it } from 'vitest'
import { createMachine } from 'xstate'
import { roleMachines, nodeSupervisor, type TraceEntry } from '../../../actors/index.js'
import { machineChart } from '../../../devnet/dashboard/statechart.js'
import { Aggregator, stateText } from '../../../devnet/dashboard/aggregator.js'
import { readSse } from '../../../devnet/dashboard/sse.js'
import { BalanceHistory } from '../../../devnet/dashboard/balance-history.js'
import type { AccountView } from '../../../devnet/dashboard/chain-watch.js'
import { disputeItem, watchDisputes } from '../../../devnet/dispute-progress.js'

// Dashboard parts that need no processes: statecharts read from the machine
// definitions, the bounded trace buffer, dispute and task views, SSE parsing.

type ChartTransitionLike = { event: string, guard?: string }

const entry = (over: Partial<TraceEntry>): TraceEntry => ({ seq: 1, time: 1000, peer: 'P', actorId: 'solver#1', role: 'solver', kind: 'transition', event: 'e', ...over })

describe('statecharts from machine definitions', () => {
  it('lists the solver\'s states, initial state and labelled transitions', () => {
    const c = machineChart(roleMachines.solver)
    expect(c.id).toBe('solver')
    // two parallel regions: work (the stage of the oldest of the tasks training side by side) and disputes (defended meanwhile)
    expect(c.initial).toBe('active')
    expect(c.states.map(s => s.path)).toEqual(['active', 'active.work', 'active.work.idle', 'active.work.training', 'active.work.committing', 'active.disputes', 'active.disputes.idle', 'active.disputes.defending', 'retired'])
    expect(c.states.find(s => s.path === 'active')?.type).toBe('parallel')
    // each task's training and commitment are actors spawned per task, not invoked by a state
    expect(c.states.find(s => s.path === 'active.work.training')?.invoke).toEqual([])
    expect(c.states.find(s => s.path === 'active.disputes.defending')?.invoke).toEqual(['defend'])
    expect(c.states.find(s => s.path === 'retired')?.type).toBe('final')
    const t = (from: string, to: string | null): ChartTransitionLike[] => c.transitions.filter(x => x.from === from && x.to === to)
    expect(t('active.work.training', 'active.work.committing')).toMatchObject([{ event: '', guard: 'showsCommitting' }])
    expect(t('active.work.training', 'active.work.idle')).toMatchObject([{ event: '', guard: 'noJobs' }])
    expect(t('active.work.idle', 'active.work.training')).toMatchObject([{ event: '', guard: 'showsTraining' }])
    // root-level handlers without a target (jobs, drain) are kept as actions
    expect(c.transitions.filter(x => x.from === '' && x.to === null).map(x => x.event)).toEqual(expect.arrayContaining(['chain.solverSelected', 'chain.solverReplaced', 'drain']))
  })

  it('handles the supervisor and nested states', () => {
    expect(machineChart(nodeSupervisor).states.map(s => s.path)).toEqual(['running', 'stopped'])
    const nested = createMachine({ id: 'n', initial: 'a', states: { a: { initial: 'x', states: { x: { on: { go: 'y' } }, y: {} } }, b: {} } })
    const c = machineChart(nested)
    expect(c.states.map(s => [s.path, s.depth])).toEqual([['a', 0], ['a.x', 1], ['a.y', 1], ['b', 0]])
    expect(c.transitions).toEqual([{ from: 'a.x', to: 'a.y', event: 'go' }])
    expect(stateText({ a: { x: {} } })).toBe('a.x')
  })
})

describe('aggregator', () => {
  it('keeps a bounded, time-ordered, deduplicated trace buffer', () => {
    const agg = new Aggregator({ peers: [], traceCap: 100 })
    for (let i = 0; i < 250; i++) agg.addTrace(entry({ seq: i, time: 1000 + i }))
    agg.addTrace(entry({ seq: 249, time: 1249 })) // replayed after a reconnect
    expect(agg.traceCount).toBe(100)
    agg.addTrace(entry({ seq: 7, time: 1200, peer: 'Q' })) // a slower peer's older entry
    const all = agg.recentTraces({ limit: 1000 })
    expect(all.length).toBe(100)
    expect(all.every((e, i) => i === 0 || e.time >= all[i - 1].time)).toBe(true)
    expect(all.filter(e => e.seq === 249).length).toBe(1)
    expect(agg.recentTraces({ peer: 'Q' }).map(e => e.seq)).toEqual([7])
  })

  it('builds dispute rounds and the verdict from dispute traces, and task phases from actors', async () => {
    const agg = new Aggregator({ peers: [{ name: 'p1', dataDir: '/nonexistent' }] })
    agg.addTrace(entry({ event: 'dispute.opened', detail: { disputeId: 3, taskId: 9 } }))
    agg.addTrace(entry({ time: 1001, event: 'dispute.bisect', detail: { disputeId: 3, step: 4 } }))
    agg.addTrace(entry({ time: 1002, event: 'chain.disputeResolved', detail: { disputeId: 3, taskId: 9, winner: 'defender' } }))
    agg.addTrace(entry({ time: 1003, event: 'chain.proofCommitted', detail: { taskId: 9 } })) // not dispute-related
    const d = agg.state().disputes
    expect(d.map(x => [x.id, x.taskId, x.status, x.verdict, x.rounds.length])).toEqual([['3', '9', 'DefenderWon', 'DefenderWon', 3]])
    expect(d[0].rounds.map(r => r.event)).toEqual(['dispute.opened', 'dispute.bisect', 'chain.disputeResolved'])

    // no chain: the phase comes from what actors do with the task
    agg.watches[0].view.actors = {
      supervisor: { state: 'running', roles: ['solver'] },
      actors: [
        { id: 'solver#1', state: 'training', status: 'active', context: { current: 9, queue: [10], history: [{ taskId: 8, outcome: 'settled' }] } },
        { id: 'submitter#2', state: 'idle', status: 'active', context: { open: [11], settled: [7], results: { 7: { accuracy: 0.8512 } }, history: [] } }
      ]
    }
    const tasks = agg.state().tasks
    expect(tasks.map(t => [t.id, t.phase, t.phaseSource])).toEqual([['11', 'Queued', 'actors'], ['10', 'Queued', 'actors'], ['9', 'Solving', 'actors'], ['8', 'Settled', 'actors'], ['7', 'Settled', 'actors']])
    expect(tasks.find(t => t.id === '7')?.workers.map(w => w.relation)).toEqual(['settled (accuracy 85.1%)'])
    expect(agg.state().chain.state).toBe('none')

    // a peer with a chain reports the chain's view of its tasks and the dispute announcements it heard
    agg.watches[0].view.tasks = [{ taskId: 9, chain: { phase: 'Verifying', verdicts: [] }, gossip: { disputes: [{ disputeId: 3, taskId: 9, challenger: 'A', defender: 'B', phase: 'opened' }, { disputeId: 3, taskId: 9, challenger: 'A', defender: 'B', phase: 'opened' }] } }]
    const s = agg.state()
    expect(s.tasks.find(t => t.id === '9')).toMatchObject({ phase: 'Verifying', phaseSource: 'peer:p1' })
    expect(s.disputes[0].rounds.filter(r => r.source === 'gossip').map(r => r.event)).toEqual(['gossip.dispute.opened'])
    await agg.stop()
  })
})

describe('the data of the task and dispute pictures', () => {
  it('takes the longest loss curve, whistleblowers replaying everything, the collected result and the challenger\'s narrowing', async () => {
    const agg = new Aggregator({ peers: [{ name: 'solver', dataDir: '/nonexistent', role: 'solver' }, { name: 'wb', dataDir: '/nonexistent', role: 'whistleblower' }, { name: 'sub', dataDir: '/nonexistent', role: 'submitter' }] })
    const [solver, wb, sub] = agg.watches.map(w => w.view)
    const actors = (id: string, context: Record<string, unknown>): typeof solver.actors => ({ supervisor: { state: 'running', roles: [] }, actors: [{ id, state: 'idle', status: 'active', context }] })
    solver.actors = actors('solver#1', { current: 4 })
    solver.progress = [{ taskId: 4, phase: 'done', step: 150, steps: 150, curve: [[1, 4.8], [75, 2.7], [150, 2.4]], updatedAt: 1 }]
    wb.actors = actors('whistleblower#1', {})
    wb.progress = [{ taskId: 4, phase: 'verifying', step: 0, steps: 50, curve: undefined, updatedAt: 1 }]
    const text = { validationLoss: 2.525, unigramBaseline: 3.344, sample: 'The rnteeven thing' }
    sub.actors = actors('submitter#1', { open: [4], results: { 4: { modelCid: 'bafy', text } } })
    const narrowing = [{ seq: 0, stage: 'tape', lo: 0, hi: 128, of: 128 }, { seq: 2, stage: 'tape', lo: 64, hi: 128, of: 128 }]
    wb.disputes = [{ disputeId: 1, role: 'challenger', ms: 900, moves: 2, winner: 'challenger', reason: 'state claim', taskId: 4, step: 63, narrowing: narrowing as never }]
    // a defender's record has no narrowing and is not drawn
    solver.disputes = [{ disputeId: 1, role: 'defender', ms: 900, moves: 2, winner: 'challenger', reason: '' }]
    const s = agg.state()
    const p = s.tasks.find(t => t.id === '4')!.pictures
    expect(p.curve).toEqual({ peer: 'solver', phase: 'done', steps: 150, points: [[1, 4.8], [75, 2.7], [150, 2.4]] })
    expect(p.replayingAll).toEqual(['wb'])
    expect(p.result).toEqual({ modelCid: 'bafy', text })
    const d = s.disputes.find(x => x.id === '1')!
    expect(d.narrowing).toEqual(narrowing)
    expect(d.narrowedBy).toBe('wb')
    expect(d.taskId).toBe('4')
    await agg.stop()
  })
})

describe('the sample map of a task with a root every m steps', () => {
  it('draws the chain\'s segments (checked units, the disputed unit) as the steps they hold; at m = 1 the units are the steps', async () => {
    const agg = new Aggregator({ peers: [{ name: 'wb', dataDir: '/nonexistent', role: 'whistleblower' }] })
    agg.watches[0].view.actors = { supervisor: { state: 'running', roles: [] }, actors: [] }
    const task = (id: string, rootEvery: number): never => ({
      id, rootEvery, phase: 'Verifying', steps: 20, stepCount: 20, checkpointEvery: 8, revealedForcedError: 13,
      verdicts: [{ verifier: '0xv', accept: false, void: false, checkedSteps: [0, 2] }]
    }) as never
    agg.chain.view.tasks = [task('7', 8), task('9', 1)]
    agg.chain.view.disputes = [{ id: '3', taskId: 7, disputedStep: 1, status: 'Open' } as never, { id: '4', taskId: 9, disputedStep: 13, status: 'Open' } as never]
    const pics = (id: string): ReturnType<Aggregator['state']>['tasks'][number]['pictures'] => agg.state().tasks.find(t => t.id === id)!.pictures
    const p = pics('7')
    expect(p.rootEvery).toBe(8)
    // segment 0: transitions 0 … 7; segment 2, the short last one of 20 steps: 16 … 19
    expect(p.samples[0].steps).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19])
    expect(p.disputed).toEqual([{ disputeId: '3', step: 8, lastStep: 15, segment: 1, status: 'Open' }])
    expect(p.forcedStep).toBe(13)
    const q = pics('9')
    expect(q.samples[0].steps).toEqual([0, 2])
    expect(q.disputed).toEqual([{ disputeId: '4', step: 13, status: 'Open' }])
    await agg.stop()
  })
})

describe('the live bisection and stakes over time', () => {
  it('merges an open dispute\'s moves heard on chain with the challenger\'s record so far, by message number', async () => {
    const agg = new Aggregator({ peers: [{ name: 'wb', dataDir: '/nonexistent', role: 'whistleblower' }] })
    const wb = agg.watches[0].view
    wb.actors = { supervisor: { state: 'running', roles: [] }, actors: [] }
    const at = (seq: number, lo: number, hi: number): never => ({ seq, stage: 'tape', lo, hi, of: 64 }) as never
    agg.chain.view.disputes = [{ id: '2', status: 'Open', taskId: 5 } as never]
    // only the forced commit is on chain so far: the page draws it before any peer reports
    agg.chain.view.chainMoves = { 2: [at(0, 0, 64)] }
    let d = agg.state().disputes.find(x => x.id === '2')!
    expect(d.narrowing?.map(n => n.seq)).toEqual([0])
    expect(d.narrowedBy).toBe('the chain (moves forced on chain)')
    // the challenger's record while it plays (open): two more answers, one the chain also has
    wb.disputes = [{ disputeId: 2, role: 'challenger', ms: 10, moves: 4, winner: '', reason: 'in progress', taskId: 5, narrowing: [at(0, 0, 64), at(2, 0, 32)], open: true }]
    agg.chain.view.chainMoves = { 2: [at(0, 0, 64), at(4, 16, 32)] }
    d = agg.state().disputes.find(x => x.id === '2')!
    expect(d.narrowing?.map(n => [n.seq, n.lo, n.hi])).toEqual([[0, 0, 64], [2, 0, 32], [4, 16, 32]])
    expect(d.narrowedBy).toBe('wb and the chain')
    expect(d.status).toBe('Open')
    await agg.stop()
  })

  it('keeps one balance sample per new block, bounded, thinning the older half', () => {
    const acct = (free: bigint, stake?: bigint): AccountView => ({ name: 'Bob', address: 'x', accountId: '0x', free, reserved: stake ?? 0n, node: stake != null ? { peerId: 'p', roles: 2, stake, activeTasks: 0, registeredAt: 1 } : null })
    const h = new BalanceHistory(8)
    expect(h.add(5, 1, [acct(100n)])).toBe(true)
    expect(h.add(5, 2, [acct(90n)])).toBe(false) // the same block read twice
    expect(h.add(4, 3, [acct(90n)])).toBe(false) // an older block (a reconnect to a lagging chain)
    expect(h.add(6, 4, [acct(90n, 10n)])).toBe(true)
    expect(h.samples.map(s => [s.block, s.accounts.Bob.free, s.accounts.Bob.stake])).toEqual([[5, 100n, undefined], [6, 90n, 10n]])
    for (let b = 7; b < 40; b++) h.add(b, b, [acct(BigInt(b))])
    expect(h.samples.length).toBeLessThanOrEqual(8)
    const blocks = h.samples.map(s => s.block)
    expect(blocks[0]).toBe(5) // still covers the whole run
    expect(blocks[blocks.length - 1]).toBe(39) // and ends at the newest block
    expect(blocks).toEqual([...blocks].sort((a, b) => a - b))
    expect(() => new BalanceHistory(2)).toThrow('at least 4')
  })

  it('sends the balance history whole only in a full state; new samples go out as events', async () => {
    const agg = new Aggregator({ peers: [] })
    const events: string[] = []
    agg.subscribe(e => events.push(e.type === 'balance' ? `balance ${e.sample.block}` : e.type))
    expect(Array.isArray(agg.state().chain.history)).toBe(true)
    expect(agg.state(false).chain.history).toBeUndefined()
    agg.chain.onSample!({ block: 7, time: 1, accounts: {} })
    expect(events).toEqual(['balance 7'])
    await agg.stop()
  })
})

describe('the devnet\'s progress line for a dispute being played', () => {
  it('says how many answers and what is still in dispute, and goes away once decided', async () => {
    const row = (status: string, narrowing: unknown[]): never => ({ id: '3', status, rounds: [], narrowing }) as never
    expect(disputeItem(row('Open', []))).toEqual({ label: 'dispute 3', text: '0 answers of the defender; waiting for the defender\'s commitment' })
    expect(disputeItem(row('Open', [{ seq: 0, stage: 'tape', lo: 0, hi: 64, of: 64 }, { seq: 2, stage: 'tape', lo: 32, hi: 48, of: 64 }]))!.text).toBe('2 answers of the defender; ops 32–47 of 64 still in dispute')
    expect(disputeItem(row('Open', [{ seq: 4, stage: 'entry', entry: 37, lo: 37, hi: 38, of: 38, note: 'MatMul' }]))!.text).toBe('1 answer of the defender; narrowed to op 37 (MatMul)')
    expect(disputeItem(row('ChallengerWon', [{ seq: 0, stage: 'tape', lo: 0, hi: 64, of: 64 }]))).toBeUndefined()
    // from the aggregator's states: shown when it changes, removed when decided
    const agg = new Aggregator({ peers: [] })
    const shown: Array<[string, string | undefined]> = []
    const stop = watchDisputes(agg, (key, item) => shown.push([key, item?.text]))
    agg.chain.view.disputes = [{ id: '3', status: 'Open', taskId: 1 } as never]
    agg.chain.view.chainMoves = { 3: [{ seq: 0, stage: 'tape', lo: 0, hi: 8, of: 8 }] }
    const emit = (): void => { (agg as any).emit({ type: 'state', state: agg.state(false) }) }
    emit(); emit()
    agg.chain.view.disputes = [{ id: '3', status: 'DefenderWon', taskId: 1 } as never]
    emit(); emit()
    expect(shown).toEqual([['dispute 3', '1 answer of the defender; ops 0–7 of 8 still in dispute'], ['dispute 3', undefined]])
    stop()
    await agg.stop()
  })
})

describe('server-sent events reader', () => {
  it('joins events split across chunks and multi-line data; ignores comments', async () => {
    const chunks = ['data: {"a":', '1}\n\n: keep-alive\n\nid: 5\ndata: x\r\ndata: y\r\n', '\r\n']
    const body = new ReadableStream<Uint8Array>({ start (c) { for (const s of chunks) c.enqueue(new TextEncoder().encode(s)); c.close() } })
    const got: string[] = []
    await readSse(body, d => got.push(d))
    expect(got).toEqual(['{"a":1}', 'x\ny'])
  })

  it('refuses an oversized event', async () => {
    const big = 'data: ' + 'x'.repeat(300 * 1024)
    const body = new ReadableStream<Uint8Array>({ start (c) { c.enqueue(new TextEncoder().encode(big)); c.close() } })
    await expect(readSse(body, () => {})).rejects.toThrow('too large')
  })
})
