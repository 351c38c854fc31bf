import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cryptoWaitReady } from '@polkadot/util-crypto'
import { startChain, type RunningChain } from '../../devnet/chain/index.js'
import { ChainClient } from '../../node/chain/client.js'
import { createLogger } from '../../node/log.js'
import { topicName } from '../../node/p2p/topics.js'
import { Peer } from '../../node/peer.js'
import { announcementCheck } from '../../node/roles/announcement-check.js'
import { TaskBook } from '../../node/roles/task-book.js'
import { encodeTopicMessage } from '../../protocols/messages/index.js'
import { tempDir, waitFor } from '../helpers/procs.js'

// The attack: `dispute` and `verdict` announcements cost nothing to send, and
// were stored and relayed by every peer on their form alone (a verdict only
// had to be signed by the verifier it names, any fresh peer key; nobody honest
// even sends `dispute` notices). One peer could thus write a task-book record
// into every peer's LevelDB for each of 2^32 task ids, relayed across the whole
// swarm: disk filled, `proofswarm tasks` (which reads every record and asks the
// chain about each) made slower with each one. Now both are checked against
// the chain like tasks and proofs: a notice about a task the chain does not
// have is dropped (REJECTed, the sender penalised, when the id is far beyond
// the chain's next), and a peer without a chain keeps and relays neither.

const dirs: Array<{ cleanup: () => Promise<void> }> = []
const peers: Peer[] = []
let rc: RunningChain
let chain: ChainClient

async function start (name: string, bootstrap: string[] = []): Promise<{ peer: Peer, book: TaskBook }> {
  const d = await tempDir(`ps-spam-${name}-`)
  dirs.push(d)
  let book!: TaskBook
  const peer = await Peer.start({
    kind: 'peer', dataDir: join(d.path, name), listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap,
    logger: createLogger(name, { level: 'silent' }),
    services: [async p => { book = new TaskBook(p) }]
  })
  peers.push(peer)
  return { peer, book }
}

beforeAll(async () => {
  await cryptoWaitReady()
  const d = await tempDir('ps-spam-chain-')
  dirs.push(d)
  rc = await startChain({ dataDir: d.path, port: 0, blockTime: 3_600_000, log: createLogger('chain', { level: 'silent' }) })
  chain = await ChainClient.connect({ url: rc.url, signer: '//Alice' })
}, 60_000)

afterAll(async () => {
  for (const p of peers) await p.stop()
  await chain?.disconnect()
  await rc?.close()
  for (const d of dirs) await d.cleanup()
})

const N = 30

describe('task-book spam over gossip', () => {
  it('dispute and verdict notices about tasks the chain does not have are neither stored nor relayed', async () => {
    const honest = await start('honest')
    honest.book.setChecker(announcementCheck(chain))
    const addr = honest.peer.host.getMultiaddrs()[0].toString()
    // a peer without a chain (a bootstrap peer): it can check nothing
    const chainless = await start('chainless', [addr])
    const attacker = await start('attacker', [addr, chainless.peer.host.getMultiaddrs()[0].toString()])
    const me = attacker.peer.peerId
    const other = chainless.peer.peerId
    const pubsub = attacker.peer.host.services.pubsub
    for (const t of ['disputes', 'verdicts']) {
      await waitFor(async () => pubsub.getSubscribers(topicName(attacker.peer.network, t)).length >= 2, 20_000, `both peers subscribed to ${t}`)
    }
    const next = Number(await chain.nextTaskId())
    const sent = { disputes: 0, verdicts: 0 }
    // resent while unseen: a flood publish skips a peer whose stream is not open yet
    await waitFor(async () => {
      for (let i = 0; i < N; i++) {
        const taskId = 1_000 + i + N * (sent.disputes / N)
        await attacker.peer.gossip.publish('disputes', encodeTopicMessage('disputes', { taskId, disputeId: taskId, challenger: me, defender: other, phase: 'opened', detail: 'x'.repeat(512) }))
        await attacker.peer.gossip.publish('verdicts', encodeTopicMessage('verdicts', { taskId: next + i, verifier: me, accept: false, checkedSteps: [] }))
        sent.disputes++; sent.verdicts++
      }
      const seen = (s: typeof honest.peer.gossip.stats): number => s.accepted + s.ignored + s.rejected
      return seen(honest.peer.gossip.stats) > 0 && seen(chainless.peer.gossip.stats) > 0
    }, 20_000, 'the flood received', 500)
    await new Promise(resolve => setTimeout(resolve, 1000))
    // nothing kept: not one record was written for a task the chain does not have
    expect((await honest.book.all()).map(r => r.taskId)).toEqual([])
    expect((await chainless.book.all()).map(r => r.taskId)).toEqual([])
    // the made-up task ids far beyond the chain's next cost the attacker its score at the honest peer
    expect(honest.peer.gossip.stats.rejectedBy[me] ?? 0).toBeGreaterThanOrEqual(1)
    // and nobody relayed it: the chainless peer kept and forwarded nothing it could be blamed for
    expect(Object.keys(honest.peer.gossip.stats.rejectedBy)).toEqual([me])
    expect(honest.peer.gossip.stats.accepted).toBe(0)
  }, 90_000)
})
