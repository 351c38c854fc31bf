import { afterAll, describe, expect, it } from 'vitest'
import { join } from 'node:path'
import { Peer } from '../../node/peer.js'
import { TaskBook } from '../../node/roles/task-book.js'
import { createLogger } from '../../node/log.js'
import { tempDir } from '../helpers/procs.js'

// A peer that was not connected when a task was announced pulls the record
// from a neighbour; what it receives is validated like gossip.

const dirs: Array<{ cleanup: () => Promise<void> }> = []
const peers: Peer[] = []
afterAll(async () => {
  for (const p of peers) await p.stop()
  for (const d of dirs) await d.cleanup()
})

async function start (name: string, bootstrap: string[] = []): Promise<{ peer: Peer, book: TaskBook }> {
  const d = await tempDir(`ps-book-${name}-`)
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

describe('task book', () => {
  it('a late joiner pulls a task announcement it never heard over gossip', async () => {
    const a = await start('a')
    const msg = { taskId: 7, programHash: '0x' + '11'.repeat(32), programCid: 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy', submitter: a.peer.peerId, steps: 10, createdAt: 1 }
    await a.book.publish('tasks', msg) // nobody is connected: only a's own book has it
    const b = await start('b', [a.peer.host.getMultiaddrs()[0].toString()])
    // b checks what it pulls as it checks gossip (here a chain view that knows task 7 as announced)
    const seen: Array<{ topic: string, author: string | undefined }> = []
    b.book.setChecker(async (topic, m, author) => { seen.push({ topic, author }); return (m as { programHash: string }).programHash === msg.programHash ? 'accept' : 'reject' })
    expect(await b.book.get(7)).toBeUndefined()
    const rec = await b.book.waitFor(7, r => r.task != null, 5000, 'task announcement')
    expect(rec.task).toMatchObject(msg)
    expect((await b.book.get(7))?.task?.programCid).toBe(msg.programCid)
    // a pulled task announcement carries its submitter's signature: checked with that author, as gossip is
    expect(seen).toContainEqual({ topic: 'tasks', author: a.peer.peerId })
  })

  it('a pulled record the chain contradicts is not stored', async () => {
    const a = await start('a2')
    await a.book.publish('tasks', { taskId: 8, programHash: '0x' + '22'.repeat(32), programCid: 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy', submitter: a.peer.peerId, steps: 10, createdAt: 1 })
    const b = await start('b2', [a.peer.host.getMultiaddrs()[0].toString()])
    b.book.setChecker(async () => 'reject')
    await expect(b.book.waitFor(8, r => r.task != null, 1500, 'task announcement')).rejects.toThrow(/no task announcement for task 8/)
    expect(await b.book.get(8)).toBeUndefined()
  })

  it('an unknown task times out with a clear message', async () => {
    const c = await start('c')
    await expect(c.book.waitFor(99, r => r.task != null, 300, 'task announcement')).rejects.toThrow(/no task announcement for task 99/)
  })
})
