import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { encodeTopicMessage } from '../../protocols/messages/index.js'
import { ChainSwarm } from '../helpers/chain-swarm.js'
import { runCli, waitFor } from '../helpers/procs.js'

// A hostile peer sends well-formed gossip that lies: announcements of tasks
// that do not exist, and a second announcement of a real task with another
// program CID (which would make solvers fetch the wrong program). Honest peers
// check announcements against the chain before storing or forwarding them:
// nothing false is stored, the real record is never overwritten, and the
// liar is REJECTed (its gossipsub score falls, `status` names it).

let sw: ChainSwarm

async function cli (name: string, ...args: string[]): Promise<any> {
  const r = await runCli([...args, '--json', '--data-dir', sw.peers.get(name)!.dataDir], 60_000)
  if (r.code !== 0) throw new Error(`${args.join(' ')} on ${name} failed: ${r.stderr}`)
  return JSON.parse(r.stdout.slice(r.stdout.indexOf(r.stdout.trimStart()[0])))
}

async function publishRaw (name: string, topic: string, bytes: Uint8Array): Promise<void> {
  const dir = sw.peers.get(name)!.dataDir
  const info = JSON.parse(readFileSync(join(dir, 'control.json'), 'utf8'))
  const token = readFileSync(join(dir, 'control.token'), 'utf8').trim()
  const res = await fetch(`http://127.0.0.1:${info.port}/v1/debug/gossip-raw`, {
    method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ topic, hex: Buffer.from(bytes).toString('hex') })
  })
  expect(res.status).toBe(200)
}

beforeAll(async () => {
  sw = await ChainSwarm.start('ps-hostile-gossip-', ['--block-time', '300'], [])
  await Promise.all([
    sw.startPeer('submitter', 'submitter', '//Peer1'),
    sw.startPeer('honest', 'verifier', '//Peer4'),
    sw.startPeer('hostile', 'whistleblower', '//Peer5', [], { PROOFSWARM_DEBUG_ROUTES: '1' })
  ])
  await sw.waitRegistered()
}, 120_000)

afterAll(async () => { await sw?.stop() })

describe('hostile gossip', () => {
  it('made-up tasks are not stored, a real task\'s record is not overwritten, and the liar is penalised', async () => {
    await sw.newTask(['--model', 'mlp', '--dataset', 'synthetic', '--steps', '20', '--checkpoint-every', '10', '--batch', '16'])
    const taskId = await sw.submit(['--verifiers', '1', '--challenge-window', '400', '--solve-timeout', '400'])
    const real = await waitFor(async () => (await cli('honest', 'tasks')).find((t: any) => t.taskId === taskId && t.gossip?.task != null)?.gossip.task, 30_000, 'the real announcement at the honest peer')
    await waitFor(async () => (await cli('hostile', 'status')).topics.find((t: any) => t.topic.endsWith('/tasks/1'))?.subscribers >= 2, 20_000, 'subscriptions known')
    const hostileId = sw.peers.get('hostile')!.peerId
    const fake = (o: Record<string, unknown>) => encodeTopicMessage('tasks', { taskId, programHash: real.programHash, programCid: real.programCid, submitter: hostileId, steps: 20, createdAt: Date.now(), ...o } as never)
    const status = async (): Promise<any> => await cli('honest', 'status')
    // the real task, announced again with another program, impersonating the submitter: rejected by the check
    const otherCid = 'bafkreig' + 'a'.repeat(52)
    // resent (new bytes each time: createdAt) while unanswered, since a flood publish skips a peer whose stream is not open yet
    let sentAt = 0
    let sends = 0
    await waitFor(async () => {
      if (sends < 6 && Date.now() - sentAt > 5000) {
        sends++
        sentAt = Date.now()
        await publishRaw('hostile', 'tasks', fake({ programCid: otherCid, submitter: real.submitter }))
      }
      return (await status()).gossip.rejectedBy[hostileId] >= 1
    }, 30_000, 'the impersonation rejected')
    // then as itself, and a flood of tasks that do not exist: rejected until the liar is graylisted
    // (one rejection may be enough), then dropped unread; either way nothing of it is kept
    await publishRaw('hostile', 'tasks', fake({ programCid: otherCid }))
    for (let i = 0; i < 40; i++) await publishRaw('hostile', 'tasks', fake({ taskId: 10_000 + i, programHash: '0x' + (i + 1).toString(16).padStart(64, '0') }))
    await new Promise(resolve => setTimeout(resolve, 2000))
    // penalised: graylisted (score under -80) and disconnected for it (once: it may dial back, its
    // gossip ignored; its score, cut off from the flood, then decays)
    const st = await waitFor(async () => { const x = await status(); return x.gossip.disconnected[hostileId]?.score < -80 ? x : undefined }, 30_000, 'the hostile peer penalised at the honest peer')
    expect(st.gossip.rejectedBy[hostileId]).toBeGreaterThanOrEqual(1)
    // only the liar: nobody relayed its lies (peers that cannot check do not relay announcements)
    expect(Object.keys(st.gossip.rejectedBy)).toEqual([hostileId])
    const tasks = await cli('honest', 'tasks')
    expect(tasks.filter((t: any) => t.taskId >= 10_000)).toEqual([])
    expect(tasks.find((t: any) => t.taskId === taskId).gossip.task.programCid).toBe(real.programCid)
    // the submitter's honest announcements are not affected
    expect(st.gossip.rejectedBy[sw.peers.get('submitter')!.peerId] ?? 0).toBe(0)
  }, 150_000)
})
