import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ChainClient } from '../../node/chain/client.js'
import { CHUNK_SAMPLES } from '../../protocols/erasure/index.js'
import { ChainSwarm } from '../helpers/chain-swarm.js'
import { testPeer } from '../helpers/peer-key.js'

// Data-availability challenges between real peers (separate processes) on the
// real dev chain (docs/disputes.md, "Withheld checkpoints"):
// - a solver started with `--fault bad-checkpoint` publishes checkpoints with a
//   flipped byte and keeps no true copy; the verifier finds that the fetched
//   checkpoint does not hash to the proof's state root, challenges its
//   availability on chain, the solver cannot post the sampled rows, the
//   verifier times the challenge out: the solver is slashed, the task fails;
// - the same solver restarted honest and challenged anyway answers with the
//   sampled rows in time: it keeps its stake; the task settles on its verdicts
//   and the challenger's deposit goes to it then;
// - chunk sampling of the erasure-coded checkpoints: the honest solver's node
//   codes its run, commits the coded root with its proof, and answers a
//   whistleblower's sample_chunks by itself with the drawn chunks; it keeps its
//   stake, and the needless request's deposit goes to it when the task settles.
// One chain, bootstrap and set of peers for all: the solver (same account, peer
// id and data dir) is restarted honest after the first scenario.

const BLOCK_MS = 300
const CLOCK = 20 // blocks the solver has to answer
let sw: ChainSwarm
let acct: Map<string, string>

beforeAll(async () => {
  // --unsafe-rpc: once every party has acted, the honest scenarios seal the rest of their challenge windows at once
  sw = await ChainSwarm.start('proofswarm-availability-', ['--block-time', String(BLOCK_MS), '--dispute-clock', String(CLOCK), '--unsafe-rpc'], ['//Peer1', '//Peer2', '//Peer4', '//Peer5'])
  acct = sw.accountIds
  await Promise.all([
    sw.startPeer('submitter', 'submitter', '//Peer1'),
    // stake well over the minimum so the solver is still eligible after one slash
    sw.startPeer('solver', 'solver', '//Peer2', ['--stake', '10000', '--fault', 'bad-checkpoint']),
    sw.startPeer('verifier', 'verifier', '//Peer4', ['--verify-steps', 'all'])
  ])
  await sw.waitRegistered()
  await sw.newTask(['--model', 'mlp', '--dataset', 'synthetic', '--steps', '20', '--checkpoint-every', '5', '--batch', '32'])
}, 120_000)

afterAll(async () => { await sw?.stop() })

describe('data-availability challenges between real peers on the dev chain', () => {
  it('a solver publishing bad checkpoints is challenged, cannot answer, is slashed; the task fails', async () => {
    const t0 = Date.now()
    const stakeBefore = (await sw.observer.node(acct.get('//Peer2')))!.stake
    const taskId = await sw.submit()
    const opened = await sw.waitOr(async () => sw.ev('AvailabilityChallenged', d => Number(d.taskId) === taskId), 90_000, 'availability challenge opened')
    expect(opened.data.challenger).toBe(acct.get('//Peer4'))
    expect(opened.data.solver).toBe(acct.get('//Peer2'))
    expect(Number(opened.data.checkpointStep) % 5).toBe(0)
    // the verifier could not replay: it voted reject (the challenge starts with the vote, so may land first)
    const verdict = await sw.waitOr(async () => sw.ev('VerdictSubmitted', d => Number(d.taskId) === taskId), 30_000, 'verdict')
    expect(verdict.data.accept).toBe(false)
    const timedOut = await sw.waitOr(async () => sw.ev('AvailabilityTimedOut', d => d.challengeId === opened.data.challengeId), 60_000, 'availability timeout')
    expect(sw.ev('AvailabilityAnswered', d => d.challengeId === opened.data.challengeId)).toBeUndefined()
    expect(timedOut.blockNumber).toBeGreaterThan(Number(opened.data.deadline))
    expect(BigInt(String(timedOut.data.slashed))).toBeGreaterThan(0n)
    // the solver's node tried and said why it could not answer
    await sw.waitOr(async () => /cannot answer the data-availability challenge/.test(sw.peers.get('solver')!.proc.stderr()), 10_000, 'solver log')
    const t = await sw.settleNow(taskId)
    expect(t.phase).toBe('Failed')
    expect(t.solverFailed).toBe(true)
    // each unanswered challenge slashes the solver (a verifier challenges every bad checkpoint its sample needs at once;
    // replaying all 20 steps in one run it needs checkpoint 0 only)
    const slashes = sw.events.filter(e => e.section === 'arbitration' && e.method === 'AvailabilityTimedOut' && Number((e.data as Record<string, unknown>).taskId) === taskId)
    expect((await sw.observer.node(acct.get('//Peer2')))!.stake).toBe(stakeBefore - slashes.reduce((n, e) => n + BigInt(String((e.data as Record<string, unknown>).slashed)), 0n))
    const c = await sw.observer.availabilityChallenge(Number(opened.data.challengeId))
    expect(c?.status).toBe('TimedOut')
    process.stdout.write(`AVAILABILITY-FIGURES ${JSON.stringify({ scenario: 'bad-checkpoint', blocksToTimeout: timedOut.blockNumber - opened.blockNumber, blockMs: BLOCK_MS, totalMs: Date.now() - t0 })}\n`)
  }, 200_000)

  it('an honest solver challenged anyway serves the checkpoint on chain in time, keeps its stake; the task settles and the deposit goes to it then', async () => {
    await sw.restartPeer('solver', 'solver')
    // a registered challenger of our own, challenging right after the commitment
    const challenger = await ChainClient.connect({ url: sw.chain.url, signer: '//Peer5' })
    try {
      const key = testPeer('AvailabilityChallenger')
      await challenger.registerNode(key.peerId, 8, (await challenger.params()).minStake, key.sign)
      const stakeBefore = (await sw.observer.node(acct.get('//Peer2')))!.stake
      const freeBefore = (await sw.observer.balance(acct.get('//Peer2'))).free
      // a restarted solver also codes its checkpoints before committing: a longer solve window than the default 30 s;
      // the serve builds and puts 1.4 MB on chain: a window of 200 gives its first part 50 blocks (15 s at 300 ms)
      const taskId = await sw.submit(['--verifiers', '1', '--challenge-window', '200', '--solve-timeout', '300'])
      await sw.waitOr(async () => sw.ev('ProofCommitted', d => Number(d.taskId) === taskId), 90_000, 'proof committed')
      const reserved = (await challenger.balance()).reserved
      const id = await challenger.challengeAvailability(taskId, 5)
      expect((await challenger.balance()).reserved).toBeGreaterThan(reserved)
      const answered = await sw.waitOr(async () => sw.ev('AvailabilityAnswered', d => BigInt(String(d.challengeId)) === id), 60_000, 'availability answered')
      const view = (await sw.observer.availabilityChallenge(id))!
      expect(view.status).toBe('Answered')
      expect(answered.blockNumber).toBeLessThanOrEqual(view.deadline)
      // answered by serving the whole checkpoint on chain, in parts the challenger reads back from the events
      const parts = await challenger.servedParts(id)
      expect(parts.length).toBeGreaterThan(0)
      for (const p of parts) expect(p.length).toBeLessThanOrEqual(1024 * 1024)
      const bytes = parts.reduce((a, p) => a + p.length, 0)
      // the deposit waits for the task's end; the solver's stake is untouched
      expect((await challenger.balance()).reserved).toBe(reserved + view.deposit)
      expect((await sw.observer.node(acct.get('//Peer2')))!.stake).toBe(stakeBefore)
      const verdict = await sw.waitOr(async () => sw.ev('VerdictSubmitted', d => Number(d.taskId) === taskId), 60_000, 'verdict')
      expect(verdict.data.accept).toBe(true)
      const t = await sw.settleNow(taskId)
      expect(t.phase).toBe('Settled')
      // the verifiers could fetch and verify: the challenge was needless, its deposit is the solver's
      expect((await challenger.balance()).reserved).toBe(reserved)
      expect((await sw.observer.balance(acct.get('//Peer2'))).free - freeBefore).toBeGreaterThanOrEqual(view.deposit)
      process.stdout.write(`AVAILABILITY-FIGURES ${JSON.stringify({ scenario: 'honest-serve', servedBytes: bytes, parts: parts.length, blocksToAnswer: answered.blockNumber - view.openedAt })}\n`)
    } finally {
      await challenger.disconnect().catch(() => {})
    }
  }, 200_000)

  it('an honest solver\'s node answers a chunk-sample request with the drawn chunks in time and keeps its stake; the deposit goes to it at settlement', async () => {
    const requester = await ChainClient.connect({ url: sw.chain.url, signer: '//Peer5' })
    try {
      // the account challenged availability in the scenario before: its node is registered already
      if (await sw.observer.node(acct.get('//Peer5')) == null) {
        const key = testPeer('ChunkRequester')
        await requester.registerNode(key.peerId, 8, (await requester.params()).minStake, key.sign)
      }
      const stakeBefore = (await sw.observer.node(acct.get('//Peer2')))!.stake
      const freeBefore = (await sw.observer.balance(acct.get('//Peer2'))).free
      const taskId = await sw.submit(['--verifiers', '1', '--challenge-window', '80', '--solve-timeout', '300'])
      await sw.waitOr(async () => sw.ev('ProofCommitted', d => Number(d.taskId) === taskId), 150_000, 'proof committed')
      const task = (await sw.observer.task(taskId))!
      expect(task.checkpoints.map(h => Buffer.from(h.replace(/^0x/, ''), 'hex').toString('utf8')).some(e => /^chunk-root:[0-9a-f]{64}$/.test(e))).toBe(true)
      const id = await requester.sampleChunks(taskId, 10)
      const answered = await sw.waitOr(async () => sw.ev('ChunksAnswered', d => BigInt(String(d.requestId)) === id), 30_000, 'chunks answered')
      const view = (await requester.chunkRequest(id))!
      expect(view.status).toBe('Answered')
      expect(view.samples).toBe(CHUNK_SAMPLES)
      expect(answered.blockNumber).toBeLessThanOrEqual(view.deadline)
      expect((await sw.observer.node(acct.get('//Peer2')))!.stake).toBe(stakeBefore)
      const verdict = await sw.waitOr(async () => sw.ev('VerdictSubmitted', d => Number(d.taskId) === taskId), 120_000, 'verdict')
      expect(verdict.data.accept).toBe(true)
      const t = await sw.settleNow(taskId)
      expect(t.phase).toBe('Settled')
      expect((await sw.observer.balance(acct.get('//Peer2'))).free - freeBefore).toBeGreaterThanOrEqual(view.deposit)
    } finally {
      await requester.disconnect().catch(() => {})
    }
  }, 400_000)
})
