import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { encodeIdx } from '../../node/train/dataset.js'
import { ChainSwarm } from '../helpers/chain-swarm.js'

// A submitter withholding its custom IDX dataset (docs/economics.md "A
// withheld dataset"), with real peers (separate processes) on the real dev
// chain: the submitter (`--fault withhold-dataset`: it announces its task
// without the dataset) hands it to its solver only (the solver's own
// --dataset-dir), so the drawn verifier, proofswarm's own node, cannot fetch
// it. Its node rejects and challenges the dataset on chain (challenge_dataset);
// - never served (the submitter's dataset gone): the verifier times the
//   challenge out; its reject stands: paid, never lapsed; the task verified;
// - served: the submitter's peer puts the rows the verifier's sample replays on
//   chain; the verifier replays from them (no dataset directory) and accepts:
//   paid, not slashed;
// - the same with the solver faking a step: the replay from the served rows
//   finds it and the verifier wins the dispute (its tape's data proofs from the serve).
// On the old node the verifier's replay failed when the dataset could not be
// fetched: silent, it lapsed, −(B + R).

const BLOCK_MS = 300
const ROWS = 256
let sw: ChainSwarm
let acct: Map<string, string>
let solverData: string
let submitterData: string
let dataCopy: string

/** A custom IDX dataset (ROWS training rows) in `dir`. */
function writeDataset (dir: string): void {
  mkdirSync(dir, { recursive: true })
  const images = Uint8Array.from({ length: ROWS * 784 }, (_, i) => (i * 131 + (i >> 9)) & 0xff)
  const labels = Uint8Array.from({ length: ROWS }, (_, i) => (i * 7) % 10)
  writeFileSync(join(dir, 'train-images-idx3-ubyte'), encodeIdx([ROWS, 28, 28], images))
  writeFileSync(join(dir, 'train-labels-idx1-ubyte'), encodeIdx([ROWS], labels))
  writeFileSync(join(dir, 't10k-images-idx3-ubyte'), encodeIdx([16, 28, 28], images.subarray(0, 16 * 784)))
  writeFileSync(join(dir, 't10k-labels-idx1-ubyte'), encodeIdx([16], labels.subarray(0, 16)))
}

/** task.json for the custom dataset: 10 steps, checkpoints every 5, batches of 16 (every step is in the one verifier's sample). */
async function newTask (seed: number): Promise<void> {
  await sw.newTask(['--model', 'mlp', '--dataset', dataCopy, '--steps', '10', '--checkpoint-every', '5', '--batch', '16', '--seed', String(seed), '--no-rows-root'])
}

/**
 * Submits task.json. Long windows for a loaded 2-core machine: a restarted solver starts its engine
 * first, and a served verifier re-verifies and tapes its dispute within `window` blocks of the serve
 * (a scenario seals what is left of the window at once).
 */
const submit = async (window = 400): Promise<number> => await sw.submit(['--verifiers', '1', '--challenge-window', String(window), '--solve-timeout', '300'])

const ofTask = (taskId: number) => (d: Record<string, unknown>): boolean => Number(d.taskId) === taskId

/** The verifier's stake and free balance. */
async function verifierFunds (): Promise<{ stake: bigint, free: bigint }> {
  const a = acct.get('//Peer4')!
  return { stake: (await sw.observer.node(a))!.stake, free: (await sw.observer.balance(a)).free }
}

/** The verifier rejected, challenged the dataset on chain; resolves with the challenge event. */
async function datasetChallenged (taskId: number): Promise<NonNullable<ReturnType<ChainSwarm['ev']>>> {
  const c = await sw.waitOr(async () => sw.ev('DatasetChallenged', ofTask(taskId)), 90_000, 'dataset challenged')
  expect(c.data.challenger).toBe(acct.get('//Peer4'))
  expect(c.data.submitter).toBe(acct.get('//Peer1'))
  return c
}

beforeAll(async () => {
  // --unsafe-rpc: once every party has acted, a scenario seals the rest of its challenge window at once
  sw = await ChainSwarm.start('proofswarm-withheld-dataset-', ['--block-time', String(BLOCK_MS), '--dispute-clock', '20', '--unsafe-rpc'], ['//Peer1', '//Peer2', '//Peer4'])
  acct = sw.accountIds
  dataCopy = join(sw.dir.path, 'dataset')
  writeDataset(dataCopy)
  // the submitter and its solver each hold a copy; the verifier's dataset directory is empty
  submitterData = join(sw.dir.path, 'submitter-dataset')
  solverData = join(sw.dir.path, 'solver-dataset')
  cpSync(dataCopy, submitterData, { recursive: true })
  cpSync(dataCopy, solverData, { recursive: true })
  const none = join(sw.dir.path, 'no-dataset')
  mkdirSync(none)
  await Promise.all([
    sw.startPeer('submitter', 'submitter', '//Peer1', ['--dataset-dir', submitterData, '--fault', 'withhold-dataset']),
    // stake well over the minimum so the solver is still eligible after one slash
    sw.startPeer('solver', 'solver', '//Peer2', ['--dataset-dir', solverData, '--stake', '10000']),
    sw.startPeer('verifier', 'verifier', '//Peer4', ['--dataset-dir', none])
  ])
  await sw.waitRegistered()
}, 120_000)

afterAll(async () => { await sw?.stop() })

describe('proofswarm\'s verifier and a withheld custom dataset', () => {
  it('never served: the verifier times its challenge out; its reject stands, it is paid and never lapsed', async () => {
    await newTask(2)
    const before = await verifierFunds()
    // the dataset challenge's answer window (max(dispute_clock, window / 4)) is waited out: a short window,
    // first (a peer's block clock, from the heads it read, has not yet seen a scenario seal a window at once)
    const taskId = await submit(60)
    // the submitter's dataset is gone: its peer cannot answer
    rmSync(submitterData, { recursive: true, force: true })
    try {
      const challenged = await datasetChallenged(taskId)
      const timedOut = await sw.waitOr(async () => sw.ev('DatasetTimedOut', d => d.challengeId === challenged.data.challengeId), 60_000, 'dataset challenge timed out')
      expect(timedOut.blockNumber).toBeGreaterThan(Number(challenged.data.deadline))
      expect(sw.ev('DatasetAnswered', d => d.challengeId === challenged.data.challengeId)).toBeUndefined()
      await sw.waitOr(async () => /cannot answer the dataset challenge/.test(sw.peers.get('submitter')!.proc.stderr()), 10_000, 'submitter log')
      const t = await sw.settleNow(taskId)
      // the standing reject counts toward the quorum: the task is verified and the solver paid
      expect(t.phase).toBe('Settled')
      const task = (await sw.observer.task(taskId))!
      expect(task.verdicts.filter(v => v.verifier === acct.get('//Peer4') && !v.accept && !v.void)).toHaveLength(1)
      expect(sw.ev('AssignmentLapsed', ofTask(taskId))).toBeUndefined()
      const after = await verifierFunds()
      expect(after.stake).toBe(before.stake)
      expect(after.free - before.free).toBeGreaterThanOrEqual(task.verifierReward)
    } finally {
      cpSync(dataCopy, submitterData, { recursive: true })
    }
  }, 240_000)

  it('served on chain: the verifier replays its sample from the served rows and accepts; paid, not slashed', async () => {
    await newTask(1)
    const before = await verifierFunds()
    const taskId = await submit()
    const challenged = await datasetChallenged(taskId)
    // the reject it backs (the challenge starts with the vote)
    const reject = await sw.waitOr(async () => sw.ev('VerdictSubmitted', d => ofTask(taskId)(d) && d.accept === false), 30_000, 'reject')
    expect(reject.data.verifier).toBe(acct.get('//Peer4'))
    const answered = await sw.waitOr(async () => sw.ev('DatasetAnswered', d => d.challengeId === challenged.data.challengeId), 60_000, 'dataset served')
    expect(answered.blockNumber).toBeLessThanOrEqual(Number(challenged.data.deadline))
    await sw.waitOr(async () => sw.ev('VerdictReopened', ofTask(taskId)), 10_000, 'reject withdrawn')
    const accept = await sw.waitOr(async () => sw.ev('VerdictSubmitted', d => ofTask(taskId)(d) && d.accept === true), 60_000, 'accept from the served rows')
    expect(accept.data.verifier).toBe(acct.get('//Peer4'))
    expect(sw.peers.get('verifier')!.proc.stderr()).toMatch(/dataset rows read from their serve on chain/)
    const t = await sw.settleNow(taskId)
    expect(t.phase).toBe('Settled')
    const task = (await sw.observer.task(taskId))!
    expect(task.verdicts.filter(v => v.verifier === acct.get('//Peer4') && v.accept && !v.void)).toHaveLength(1)
    expect(sw.ev('AssignmentLapsed', ofTask(taskId))).toBeUndefined()
    const after = await verifierFunds()
    expect(after.stake).toBe(before.stake)
    // paid V, and its deposit back (the verdict stood)
    expect(after.free - before.free).toBeGreaterThanOrEqual(task.verifierReward)
  }, 240_000)

  it('the verifier killed (kill -9) while its challenge is open, restarted: it follows its challenge and votes after the serve; never lapsed', async () => {
    // before: a restarted verifier whose reject rested on a challenge of its own skipped the task (it had voted);
    // the serve withdrew its reject and it never voted again: its slot lapsed, -(B + R) and its deposit
    await newTask(4)
    const before = await verifierFunds()
    // a long answer window (a quarter of the challenge window): two peers restart in it on a loaded machine
    const taskId = await submit(1400)
    // the submitter cannot answer yet: the challenge stays open across the verifier's crash
    rmSync(submitterData, { recursive: true, force: true })
    let challengeId: unknown
    try {
      challengeId = (await datasetChallenged(taskId)).data.challengeId
      await sw.waitOr(async () => sw.ev('VerdictSubmitted', d => ofTask(taskId)(d) && d.accept === false), 30_000, 'reject')
      const v = sw.peers.get('verifier')!
      v.proc.child.kill('SIGKILL')
      await v.proc.exited
    } finally {
      cpSync(dataCopy, submitterData, { recursive: true })
    }
    // both restarted: the submitter's peer finds the open challenge and serves it (its catch-up), the verifier
    // resumes its task (its catch-up: it follows its challenge, or reads the rows if the serve came first)
    const [restarted] = await Promise.all([
      sw.restartPeer('verifier', 'verifier', ['--dataset-dir', join(sw.dir.path, 'no-dataset')]),
      sw.restartPeer('submitter', 'submitter', ['--dataset-dir', submitterData, '--fault', 'withhold-dataset'])
    ])
    await sw.waitOr(async () => sw.ev('DatasetAnswered', d => d.challengeId === challengeId), 120_000, 'dataset served')
    await sw.waitOr(async () => sw.ev('VerdictReopened', ofTask(taskId)), 10_000, 'reject withdrawn')
    const accept = await sw.waitOr(async () => sw.ev('VerdictSubmitted', d => ofTask(taskId)(d) && d.accept === true), 180_000, 'accept from the served rows')
    expect(accept.data.verifier).toBe(acct.get('//Peer4'))
    expect(restarted.proc.stderr()).toMatch(/dataset rows read from their serve on chain/)
    const t = await sw.sealUntil(async () => { const t = await sw.observer.task(taskId); return t?.phase === 'Settled' || t?.phase === 'Failed' ? t : undefined }, 'settlement', 1700)
    expect(t.phase).toBe('Settled')
    expect(sw.ev('AssignmentLapsed', ofTask(taskId))).toBeUndefined()
    const after = await verifierFunds()
    expect(after.stake).toBe(before.stake)
    expect(after.free - before.free).toBeGreaterThanOrEqual((await sw.observer.task(taskId))!.verifierReward)
  }, 600_000)

  it('served, the solver faking a step: the replay from the served rows finds it and the verifier wins the dispute', async () => {
    const TAMPERED = 3 // 1-based engine step
    await sw.restartPeer('solver', 'solver', ['--dataset-dir', solverData, '--fault', `tamper-op=BatchMatMul@${TAMPERED}`])
    await newTask(3)
    const before = await verifierFunds()
    const taskId = await submit()
    const challenged = await datasetChallenged(taskId)
    await sw.waitOr(async () => sw.ev('DatasetAnswered', d => d.challengeId === challenged.data.challengeId), 60_000, 'dataset served')
    const opened = await sw.waitOr(async () => sw.ev('DisputeOpened', ofTask(taskId)), 90_000, 'dispute opened')
    expect(opened.data.challenger).toBe(acct.get('//Peer4'))
    expect(opened.data.disputedStep).toBe(TAMPERED - 1)
    const resolved = await sw.waitOr(async () => sw.ev('DisputeResolved', d => d.disputeId === opened.data.disputeId), 120_000, 'dispute resolved')
    expect(resolved.data.winner).toBe(acct.get('//Peer4'))
    const t = await sw.settleNow(taskId)
    expect(t.phase).toBe('Failed')
    expect(t.solverFailed).toBe(true)
    expect((await verifierFunds()).stake).toBe(before.stake)
  }, 300_000)
})
