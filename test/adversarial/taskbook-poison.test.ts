import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ChainClient } from '../../node/chain/client.js'
import { createLogger } from '../../node/log.js'
import { Peer } from '../../node/peer.js'
import { announcementCheck } from '../../node/roles/announcement-check.js'
import { TaskBook } from '../../node/roles/task-book.js'
import { topicName } from '../../node/p2p/topics.js'
import { openEnvelope } from '../../node/p2p/signed-envelope.js'
import { decodeMessage, encodeTopicMessage } from '../../protocols/messages/index.js'
import { tempDir, waitFor } from '../helpers/procs.js'

// The attack: a peer that missed a task's announcement (it joined later, or
// was down) asks its neighbours for it, and took the first answer that passed
// the chain's checks. But the announcement's program and dataset CIDs are on
// no chain: a neighbour could answer with the real task's id, program hash,
// steps and submitter and its own CIDs, and its answer then stood for good
// (the first announcement stands; the real one, heard later, never replaced
// it). The solver the chain picked fetched a program that is not the task's
// and handed the task back (the fee B), or a dataset that is not the task's
// (a verifier: its replay failed, its slot lapsed). Now a task announcement is
// handed on only as its submitter's peer signed it, and checked as gossip is.

const H = (b: string): string => '0x' + b.repeat(64)
const REAL = 'bafkreigaknpexyvxt76zgkitavbwx6ejgfheup5oybpm77f3pxzrvwpfdi'
const FAKE = 'bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku'
const dirs: Array<{ cleanup: () => Promise<void> }> = []
const peers: Peer[] = []

async function start (name: string, bootstrap: string[] = []): Promise<{ peer: Peer, book: TaskBook }> {
  const d = await tempDir(`ps-poison-${name}-`)
  dirs.push(d)
  let book!: TaskBook
  const peer = await Peer.start({
    kind: bootstrap.length === 0 ? 'bootstrap' : 'peer', dataDir: join(d.path, name), listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap,
    logger: createLogger(name, { level: 'silent' }),
    services: [async p => { book = new TaskBook(p) }]
  })
  peers.push(peer)
  return { peer, book }
}

let submitter: Awaited<ReturnType<typeof start>>
let relay: Awaited<ReturnType<typeof start>>
let liar: Awaited<ReturnType<typeof start>>
let late: Awaited<ReturnType<typeof start>>

beforeAll(async () => {
  submitter = await start('submitter')
  // heard the announcement over gossip
  relay = await start('relay', [submitter.peer.host.getMultiaddrs()[0].toString()])
  liar = await start('liar')
  // the chain as a table: task 3, submitted by the account whose registered peer is `submitter`
  const chain = {
    task: async (id: number | bigint) => Number(id) === 3 ? { programHash: H('a'), steps: 20, submitter: '0xsub', verdicts: [] } : null,
    peerOwner: async (p: string) => p === submitter.peer.peerId ? '0xsub' : null,
    nextTaskId: async () => 4n
  } as unknown as ChainClient
  submitter.book.setChecker(announcementCheck(chain))
  relay.book.setChecker(announcementCheck(chain))
  // it heard nothing of task 3: its only neighbour is the liar
  late = await start('late', [liar.peer.host.getMultiaddrs()[0].toString()])
  late.book.setChecker(announcementCheck(chain))
}, 60_000)

afterAll(async () => {
  for (const p of peers) await p.stop()
  for (const d of dirs) await d.cleanup()
})

interface Announced { taskId: number, programHash: string, programCid: string, datasetCid: string, submitter: string, steps: number, createdAt: number }
const task = (programCid: string): Announced =>
  ({ taskId: 3, programHash: H('a'), programCid, datasetCid: programCid, submitter: submitter.peer.peerId, steps: 20, createdAt: 1 })

describe('a task announcement handed on by a neighbour', () => {
  it('is taken only as its submitter signed it: a liar\'s own CIDs are not', async () => {
    const pubsub = submitter.peer.host.services.pubsub as unknown as { getSubscribers: (t: string) => Array<{ toString: () => string }> }
    await waitFor(async () => pubsub.getSubscribers(topicName(submitter.peer.network, 'tasks')).some(p => p.toString() === relay.peer.peerId), 20_000, 'the relay subscribed')
    await submitter.book.publish('tasks', task(REAL))
    await waitFor(async () => (await relay.book.get(3))?.task, 20_000, 'the announcement at the relay')
    // the relay kept it as gossipsub received it: its submitter's signature holds outside gossip too
    expect((await openEnvelope((await relay.book.get(3))?.taskSigned, topicName(relay.peer.network, 'tasks'))).author).toBe(submitter.peer.peerId)
    // the liar's record of the real task, with its own program and dataset
    await liar.book.record('tasks', decodeMessage('tasks', encodeTopicMessage('tasks', task(FAKE))))
    await waitFor(async () => late.peer.host.getPeers().some(p => p.toString() === liar.peer.peerId), 20_000, 'connected to the liar')
    await late.book.pull(3)
    expect((await late.book.get(3))?.task?.programCid).toBeUndefined()
    // from anyone holding the submitter's signed announcement (here a peer that heard it over gossip), the real one
    await late.peer.host.dial(relay.peer.host.getMultiaddrs()[0])
    await late.book.pull(3)
    expect((await late.book.get(3))?.task).toMatchObject({ programCid: REAL, datasetCid: REAL })
  }, 60_000)
})
