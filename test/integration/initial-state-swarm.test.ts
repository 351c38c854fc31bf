import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ChainSwarm } from '../helpers/chain-swarm.js'

// The initial state between real peers (separate processes) on the real dev
// chain (docs/disputes.md, "The initial state"): a solver started with
// `--fault tamper-weight@0` changes one weight of its initial state and trains
// honestly from it, so every replay passes. The verifier compares the proof's
// stateRoots[0] with the program's initialisation, fetches the solver's
// checkpoint 0, claims the changed element on chain and votes reject: the
// solver is slashed and the task fails.

let sw: ChainSwarm
let acct: Map<string, string>

beforeAll(async () => {
  sw = await ChainSwarm.start('proofswarm-initstate-', ['--block-time', '300'], ['//Peer1', '//Peer2', '//Peer4'])
  acct = sw.accountIds
  await Promise.all([
    sw.startPeer('submitter', 'submitter', '//Peer1'),
    sw.startPeer('solver', 'solver', '//Peer2', ['--stake', '10000', '--fault', 'tamper-weight@0']),
    sw.startPeer('verifier', 'verifier', '//Peer4')
  ])
  await sw.waitRegistered()
  await sw.newTask(['--model', 'mlp', '--dataset', 'synthetic', '--steps', '10', '--checkpoint-every', '5', '--batch', '32'])
}, 120_000)

afterAll(async () => { await sw?.stop() })

describe('an invented initial state between real peers on the dev chain', () => {
  it('the verifier claims the changed element: the solver is slashed, the task fails unpaid', async () => {
    const solver = acct.get('//Peer2')!
    const stakeBefore = (await sw.observer.node(solver))!.stake
    const taskId = await sw.submit()
    const ruled = await sw.waitOr(async () => sw.ev('InitialStateRuled', d => Number(d.taskId) === taskId), 120_000, 'initial state ruled')
    expect(ruled.data.challenger).toBe(acct.get('//Peer4'))
    expect(ruled.data.solverWrong).toBe(true)
    const slashed = BigInt(String(ruled.data.slashed))
    expect(slashed).toBeGreaterThan(0n)
    expect((await sw.observer.node(solver))!.stake).toBe(stakeBefore - slashed)
    // the claim names element 0 of the first kernel, the one the fault changed
    expect(Buffer.from(String(ruled.data.reason).replace(/^0x/, ''), 'hex').toString('utf8')).toMatch(/^element 0 of dense1\/kernel/)
    const verdict = await sw.waitOr(async () => sw.ev('VerdictSubmitted', d => Number(d.taskId) === taskId), 30_000, 'verdict')
    expect(verdict.data.accept).toBe(false)
    // no bisection was played
    expect(sw.ev('DisputeOpened', d => Number(d.taskId) === taskId)).toBeUndefined()
    const t = await sw.settled(taskId)
    expect(t.phase).toBe('Failed')
    expect(t.solverFailed).toBe(true)
    // the observer's event subscription may lag the state query by a block
    const settled = await sw.waitOr(async () => sw.ev('TaskSettled', d => Number(d.taskId) === taskId), 10_000, 'the TaskSettled event')
    expect(settled.data.solverPaid).toBe(0n)
  }, 240_000)
})
