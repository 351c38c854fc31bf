import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ChainSwarm } from '../helpers/chain-swarm.js'

// A program that diverges, between real peers (separate processes) on the
// real dev chain (docs/disputes.md, "NaN: a NaN ends the run"): an SGD MLP
// with a learning rate of 1e30 produces NaNs within its first steps. The
// solver's engine sees the first NaN op output, stops, finds it under the
// tape recorder and commits a diverged proof (commit_diverged: states 0..k and the
// divergence point); the verifier replays its sample and the diverged step,
// finds the same first NaN and accepts (listing step k); the task settles as
// diverged and the solver is paid solver_reward × k / steps.

const STEPS = 10

/** The diverging task (an SGD MLP at learning rate `lr`) written for the next submit. */
async function divergingTask (sw: ChainSwarm, lr: string): Promise<void> {
  await sw.newTask(['--model', 'mlp', '--dataset', 'synthetic', '--steps', String(STEPS), '--checkpoint-every', '5', '--batch', '32', '--optimizer', 'sgd', '--lr', lr])
}

// One dev chain with a submitter, a solver and a verifier for every scenario: the solver (same account,
// peer id and data dir) is restarted with each scenario's fault. Its stake is well over the minimum so it
// stays eligible after the slashes of the faulty scenarios (each takes half of it).
let sw: ChainSwarm
let acct: Map<string, string>
// the chain also takes tasks with roots every 2 and 4 steps (the root-every tests)
beforeAll(async () => {
  // --unsafe-rpc: once the verifier has voted or won its dispute, the rest of the task's windows is sealed at once
  sw = await ChainSwarm.start('proofswarm-diverged-', ['--block-time', '300', '--max-root-every', '4', '--unsafe-rpc'], ['//Peer1', '//Peer2', '//Peer4'])
  acct = sw.accountIds
  await Promise.all([
    sw.startPeer('submitter', 'submitter', '//Peer1'),
    sw.startPeer('solver', 'solver', '//Peer2', ['--stake', '10000']),
    sw.startPeer('verifier', 'verifier', '//Peer4')
  ])
  await sw.waitRegistered()
}, 120_000)
afterAll(async () => { await sw?.stop() })

describe('a diverging program between real peers on the dev chain', () => {
  it('the solver commits a diverged proof, the verifier checks the diverged step and accepts, the task settles as diverged', async () => {
    await divergingTask(sw, '1e30')
    const taskId = await sw.submit()
    const diverged = await sw.waitOr(async () => sw.ev('ProofDiverged', d => Number(d.taskId) === taskId), 120_000, 'a diverged proof')
    const k = Number(diverged.data.step)
    expect(k).toBeLessThan(STEPS)
    expect(k).toBeGreaterThan(0)
    const verdict = await sw.waitOr(async () => sw.ev('VerdictSubmitted', d => Number(d.taskId) === taskId), 120_000, 'verdict')
    expect(verdict.data.accept).toBe(true)
    const t = await sw.observer.task(taskId)
    expect(t?.divergence).toEqual({ entry: Number(diverged.data.entry), flat: Number(diverged.data.flat) })
    // every verifier replays the diverged step
    expect(t?.verdicts[0].checkedSteps).toContain(k)
    const done = await sw.settleNow(taskId)
    expect(done.phase).toBe('Settled')
    const settled = await sw.waitOr(async () => sw.ev('TaskDiverged', d => Number(d.taskId) === taskId), 10_000, 'the TaskDiverged event')
    expect(Number(settled.data.step)).toBe(k)
    const reward = BigInt(String(t!.solverReward))
    expect(BigInt(String(settled.data.solverPaid))).toBe(reward * BigInt(k) / BigInt(STEPS))
    expect(sw.ev('DisputeOpened', d => Number(d.taskId) === taskId)).toBeUndefined()
  }, 300_000)

  it('a task with state roots every 4 steps: the solver commits ⌈16 / 4⌉ + 1 roots, the verifier replays segments and its accept lists segment indices', async () => {
    await sw.newTask(['--model', 'mlp', '--dataset', 'synthetic', '--steps', '16', '--checkpoint-every', '8', '--root-every', '4', '--batch', '32'])
    const taskId = await sw.submit()
    const verdict = await sw.waitOr(async () => sw.ev('VerdictSubmitted', d => Number(d.taskId) === taskId), 120_000, 'verdict')
    expect(verdict.data.accept).toBe(true)
    const t = await sw.observer.task(taskId)
    expect(await sw.observer.rootEvery(taskId)).toBe(4)
    // one verifier samples every one of the 4 segments (its share of 44 is more than there are), listed as 0 … 3
    expect([...t!.verdicts[0].checkedSteps].sort((a, b) => a - b)).toEqual([0, 1, 2, 3])
    expect((await sw.settleNow(taskId)).phase).toBe('Settled')
    expect(sw.ev('DisputeOpened', d => Number(d.taskId) === taskId)).toBeUndefined()
  }, 300_000)
})

describe('a solver that trains on through the NaN (fault) between real peers on the dev chain', () => {
  it('commits a complete proof: the verifier meets the NaN, disputes with a nan claim and wins', async () => {
    await sw.restartPeer('solver', 'solver', ['--fault', 'train-through-nan'])
    await divergingTask(sw, '1e30')
    const taskId = await sw.submit()
    const committed = await sw.waitOr(async () => sw.ev('ProofCommitted', d => Number(d.taskId) === taskId), 120_000, 'a proof')
    expect(committed).toBeDefined()
    expect(sw.ev('ProofDiverged', d => Number(d.taskId) === taskId)).toBeUndefined()
    const opened = await sw.waitOr(async () => sw.ev('DisputeOpened', d => Number(d.taskId) === taskId), 120_000, 'a dispute')
    expect(opened.data.challenger).toBe(acct.get('//Peer4'))
    const adjudicated = await sw.waitOr(async () => sw.ev('Adjudicated', d => BigInt(String(d.disputeId)) === BigInt(String(opened.data.disputeId))), 120_000, 'the claim')
    expect(Buffer.from(String(adjudicated.data.kind).replace(/^0x/, ''), 'hex').toString('utf8')).toBe('nan')
    const resolved = await sw.waitOr(async () => sw.ev('DisputeResolved', d => BigInt(String(d.disputeId)) === BigInt(String(opened.data.disputeId))), 30_000, 'the ruling')
    expect(resolved.data.winner).toBe(acct.get('//Peer4'))
    const done = await sw.settleNow(taskId)
    expect(done.phase).toBe('Failed')
  }, 400_000)
})

describe('a solver faking an early divergence (fault) between real peers on the dev chain', () => {
  it('the verifier replays the diverged step, finds no NaN there, disputes it and wins; the task fails', async () => {
    await sw.restartPeer('solver', 'solver', ['--fault', 'fake-divergence@3'])
    await divergingTask(sw, '0.05')
    const taskId = await sw.submit()
    const diverged = await sw.waitOr(async () => sw.ev('ProofDiverged', d => Number(d.taskId) === taskId), 120_000, 'a diverged proof')
    expect(Number(diverged.data.step)).toBe(2)
    const opened = await sw.waitOr(async () => sw.ev('DisputeOpened', d => Number(d.taskId) === taskId), 120_000, 'a dispute')
    expect(opened.data.challenger).toBe(acct.get('//Peer4'))
    expect(Number(opened.data.disputedStep)).toBe(2)
    const adjudicated = await sw.waitOr(async () => sw.ev('Adjudicated', d => BigInt(String(d.disputeId)) === BigInt(String(opened.data.disputeId))), 120_000, 'the claim')
    expect(Buffer.from(String(adjudicated.data.reason).replace(/^0x/, ''), 'hex').toString('utf8')).toMatch(/holds no NaN/)
    const resolved = await sw.waitOr(async () => sw.ev('DisputeResolved', d => BigInt(String(d.disputeId)) === BigInt(String(opened.data.disputeId))), 30_000, 'the ruling')
    expect(resolved.data.winner).toBe(acct.get('//Peer4'))
    const done = await sw.settleNow(taskId)
    expect(done.phase).toBe('Failed')
    expect(sw.ev('TaskDiverged', d => Number(d.taskId) === taskId)).toBeUndefined()
  }, 400_000)

  it('with a root every 2 steps: the faked diverged step is disputed as disputed_step ⌈k / m⌉ = 1, one step from the last leaf, and the faker loses', async () => {
    await sw.newTask(['--model', 'mlp', '--dataset', 'synthetic', '--steps', String(STEPS), '--checkpoint-every', '4', '--root-every', '2', '--batch', '32', '--optimizer', 'sgd', '--lr', '0.05'])
    const taskId = await sw.submit()
    const diverged = await sw.waitOr(async () => sw.ev('ProofDiverged', d => Number(d.taskId) === taskId), 120_000, 'a diverged proof')
    expect(Number(diverged.data.step)).toBe(2)
    expect(await sw.observer.rootEvery(taskId)).toBe(2)
    const opened = await sw.waitOr(async () => sw.ev('DisputeOpened', d => Number(d.taskId) === taskId), 120_000, 'a dispute')
    expect(opened.data.challenger).toBe(acct.get('//Peer4'))
    expect(Number(opened.data.disputedStep)).toBe(1)
    const id = BigInt(String(opened.data.disputeId))
    const adjudicated = await sw.waitOr(async () => sw.ev('Adjudicated', d => BigInt(String(d.disputeId)) === id), 120_000, 'the claim')
    expect(Buffer.from(String(adjudicated.data.reason).replace(/^0x/, ''), 'hex').toString('utf8')).toMatch(/holds no NaN/)
    const resolved = await sw.waitOr(async () => sw.ev('DisputeResolved', d => BigInt(String(d.disputeId)) === id), 30_000, 'the ruling')
    // (the task's failure after the ruling is the m = 1 test's: not waited for again)
    expect(resolved.data.winner).toBe(acct.get('//Peer4'))
  }, 400_000)
})
