import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { decode } from 'cborg'
import { ChainClient } from '../../node/chain/client.js'
import { assembleServe, type ServePart } from '../../protocols/availability/index.js'
import { chunkedStateRoot, fromHex, rootFromProof, toHex } from '../../protocols/commit/index.js'
import { ChainSwarm } from '../helpers/chain-swarm.js'
import { testPeer } from '../helpers/peer-key.js'

// A chunked task between real peers (separate processes) on the real dev
// chain (docs/training.md "Chunked roots: design", steps 4 and 5): the
// submitter posts a program with `stateCommitment: 'chunked'` (the chain
// records TaskStateCommitment), the solver's node trains it committing chunked
// state roots and checkpoints listing chunked commitments, the verifier checks
// the initial state and replays every step comparing chunked roots and
// accepts, a challenger's availability challenge of a checkpoint is served on
// chain in 4 KiB chunks under chunked headers (the chain recomputes the
// chunked state root), and the task settles.

const BLOCK_MS = 300
const CLOCK = 20
let sw: ChainSwarm
let acct: Map<string, string>

beforeAll(async () => {
  // --unsafe-rpc: once every party has acted, the rest of the challenge window is sealed at once
  sw = await ChainSwarm.start('proofswarm-chunked-', ['--block-time', String(BLOCK_MS), '--dispute-clock', String(CLOCK), '--unsafe-rpc'], ['//Peer1', '//Peer2', '//Peer4', '//Peer5'])
  acct = sw.accountIds
  await Promise.all([
    sw.startPeer('submitter', 'submitter', '//Peer1'),
    sw.startPeer('solver', 'solver', '//Peer2', ['--stake', '10000']),
    sw.startPeer('verifier', 'verifier', '//Peer4', ['--verify-steps', 'all'])
  ])
  await sw.waitRegistered()
  await sw.newTask(['--model', 'mlp', '--dataset', 'synthetic', '--steps', '20', '--checkpoint-every', '5', '--batch', '32', '--state-commitment', 'chunked'])
}, 120_000)

afterAll(async () => { await sw?.stop() })

describe('a chunked task on the dev chain', () => {
  it('is trained, verified and accepted; a checkpoint challenge is served in chunks; the task settles and the solver keeps its stake', async () => {
    const challenger = await ChainClient.connect({ url: sw.chain.url, signer: '//Peer5' })
    try {
      const key = testPeer('ChunkedChallenger')
      await challenger.registerNode(key.peerId, 8, (await challenger.params()).minStake, key.sign)
      const stakeBefore = (await sw.observer.node(acct.get('//Peer2')))!.stake
      const taskId = await sw.submit(['--verifiers', '1', '--challenge-window', '200', '--solve-timeout', '300'])
      // submit_task kept the program's scheme
      expect(Number((await sw.observer.api.query.arbitration.taskStateCommitment(taskId)).toString())).toBe(1)
      await sw.waitOr(async () => sw.ev('ProofCommitted', d => Number(d.taskId) === taskId), 120_000, 'proof committed')
      const task = (await sw.observer.task(taskId))!
      const id = await challenger.challengeAvailability(taskId, 5)
      const answered = await sw.waitOr(async () => sw.ev('AvailabilityAnswered', d => BigInt(String(d.challengeId)) === id), 60_000, 'availability answered')
      const view = (await sw.observer.availabilityChallenge(id))!
      expect(view.status).toBe('Answered')
      expect(answered.blockNumber).toBeLessThanOrEqual(view.deadline)
      // served in 4 KiB chunks under chunked headers, as the chain took them
      const parts = await challenger.servedParts(id)
      const first = decode(parts[0]) as ServePart
      expect(first.tensors.every(h => 'chunkRoot' in h && !('rowRoot' in h))).toBe(true)
      expect(first.leaves[0].bytes.length).toBe(4096)
      // the state rebuilt from the chain makes the committed chunked root of step 5 (leaf 5 of proof_root)
      const served = assembleServe({ proofRoot: fromHex(task.proofRoot.replace(/^0x/, '')), step: 5, stepCount: task.stepCount, stateCommitment: 'chunked' }, parts)
      const root5 = chunkedStateRoot(served.tensors, 5)
      expect(toHex(root5)).toBe(toHex(served.roots[5]))
      expect(toHex(rootFromProof(root5, 5, first.statePath))).toBe(task.proofRoot.replace(/^0x/, ''))
      // the verifier replayed every step under chunked roots and accepted
      const verdict = await sw.waitOr(async () => sw.ev('VerdictSubmitted', d => Number(d.taskId) === taskId), 120_000, 'verdict')
      expect(verdict.data.accept).toBe(true)
      const t = await sw.settleNow(taskId)
      expect(t.phase).toBe('Settled')
      expect(t.solverFailed).toBe(false)
      expect((await sw.observer.node(acct.get('//Peer2')))!.stake).toBe(stakeBefore)
      process.stdout.write(`CHUNKED-SWARM ${JSON.stringify({ parts: parts.length, servedBytes: parts.reduce((a, p) => a + p.length, 0), blocksToAnswer: answered.blockNumber - view.openedAt })}\n`)
    } finally {
      await challenger.disconnect().catch(() => {})
    }
  }, 400_000)
})
