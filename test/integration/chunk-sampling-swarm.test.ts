import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ChainClient } from '../../node/chain/client.js'
import { CHUNK_SAMPLES } from '../../protocols/erasure/index.js'
import { ChainSwarm } from '../helpers/chain-swarm.js'
import { testPeer } from '../helpers/peer-key.js'

// Chunk sampling of erasure-coded checkpoints between real peers (separate
// processes) on the real dev chain: the solver's node codes its run, commits
// the coded root with its proof, and answers a whistleblower's sample_chunks
// by itself with the drawn chunks; it keeps its stake, and the needless
// request's deposit goes to it when the task settles.

const BLOCK_MS = 300
let sw: ChainSwarm
let acct: Map<string, string>

beforeAll(async () => {
  sw = await ChainSwarm.start('proofswarm-chunks-', ['--block-time', String(BLOCK_MS), '--dispute-clock', '20'], ['//Peer1', '//Peer2', '//Peer4', '//Peer5'])
  acct = sw.accountIds
  await Promise.all([
    sw.startPeer('submitter', 'submitter', '//Peer1'),
    sw.startPeer('solver', 'solver', '//Peer2'),
    sw.startPeer('verifier', 'verifier', '//Peer4')
  ])
  await sw.waitRegistered()
  await sw.newTask(['--model', 'mlp', '--dataset', 'synthetic', '--steps', '20', '--checkpoint-every', '5', '--batch', '32'])
}, 120_000)

afterAll(async () => { await sw?.stop() })

describe('chunk sampling between real peers on the dev chain', () => {
  it('an honest solver\'s node answers a chunk-sample request with the drawn chunks in time and keeps its stake; the deposit goes to it at settlement', async () => {
    const requester = await ChainClient.connect({ url: sw.chain.url, signer: '//Peer5' })
    try {
      const key = testPeer('ChunkRequester')
      await requester.registerNode(key.peerId, 8, (await requester.params()).minStake, key.sign)
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
      const t = await sw.settled(taskId, 120_000)
      expect(t.phase).toBe('Settled')
      expect((await sw.observer.balance(acct.get('//Peer2'))).free - freeBefore).toBeGreaterThanOrEqual(view.deposit)
    } finally {
      await requester.disconnect().catch(() => {})
    }
  }, 400_000)
})
