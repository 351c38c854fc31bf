import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { join } from 'node:path'
import { readFile } from 'node:fs/promises'
import { firstJson, hasJson, killAll, startCli, stopProc, tempDir, waitFor, waitForOutput, type Proc } from '../helpers/procs.js'

// 1 bootstrap + 10 peers, each a CLI process on 127.0.0.1: every peer's
// gossipsub mesh reaches D_lo on each topic it subscribes to, read from the
// status an operator sees, and recovers after a peer crashes. The timed
// figures for 100 peers are in the scale bench (npm run bench -- scale).

const N = 10
const D_LO = 4
let dir: { path: string, cleanup: () => Promise<void> }
let boot: Proc
let bootAddr: string
const peers: Array<{ proc: Proc, dataDir: string }> = []

async function status (dataDir: string): Promise<{
  peerId: string
  topics: Array<{ topic: string, meshPeers: number }>
  connectedPeers: Array<{ peerId: string }>
}> {
  const info = JSON.parse(await readFile(join(dataDir, 'control.json'), 'utf8'))
  const token = (await readFile(join(dataDir, 'control.token'), 'utf8')).trim()
  const r = await fetch(`http://127.0.0.1:${info.port}/v1/status`, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(10_000) })
  return await r.json() as any
}

/** the peers whose mesh is below D_lo on some topic (or that subscribe to nothing) */
async function belowDlo (dataDirs: string[]): Promise<string[]> {
  const out: string[] = []
  for (const d of dataDirs) {
    const s = await status(d)
    if (s.topics.length === 0 || s.topics.some(t => t.meshPeers < D_LO)) out.push(`${d}: ${s.topics.map(t => `${t.topic.split('/')[3]}=${t.meshPeers}`).join(' ')}`)
  }
  return out
}

async function meshFormed (dataDirs: string[], timeoutMs: number, what: string): Promise<void> {
  let last: string[] = []
  await waitFor(async () => { last = await belowDlo(dataDirs); return last.length === 0 }, timeoutMs, what, 1000)
    .catch(err => { throw new Error(`${(err as Error).message}; below D_lo: ${last.join('; ')}`) })
}

beforeAll(async () => {
  dir = await tempDir()
  boot = startCli(['bootstrap', '--data-dir', join(dir.path, 'boot'), '--listen', '/ip4/127.0.0.1/tcp/0', '--json'], { PROOFSWARM_LOG_LEVEL: 'warn' })
  await waitForOutput(boot, hasJson, 30_000, 'bootstrap ready')
  bootAddr = firstJson(boot.stdout()).multiaddrs[0]
  // peers join one after another, as in a swarm growing over time
  for (let i = 0; i < N; i++) {
    const dataDir = join(dir.path, `p${i}`)
    const proc = startCli(['join', '--bootstrap', bootAddr, '--data-dir', dataDir, '--json', '--listen', '/ip4/127.0.0.1/tcp/0'], { PROOFSWARM_LOG_LEVEL: 'warn' })
    peers.push({ proc, dataDir })
    await waitForOutput(proc, hasJson, 60_000, `peer ${i} ready`)
  }
}, 12 * 60_000)

afterAll(async () => {
  await Promise.all([boot, ...peers.map(p => p.proc)].filter(Boolean).map(async p => await stopProc(p)))
  killAll()
  await dir?.cleanup()
})

describe('gossip mesh formation (10 peers)', () => {
  it('every peer reaches D_lo mesh peers on each of its topics', async () => {
    await meshFormed(peers.map(p => p.dataDir), 120_000, 'every mesh at D_lo')
    const s = await status(peers[N - 1].dataDir)
    expect(s.topics.map(t => t.topic)).toContain('/proofswarm/devnet/announce/1')
    // a mesh may dip below D_lo between two heartbeats (a PRUNE received); the next heartbeat regrafts
    let min = 0
    await waitFor(async () => {
      min = Math.min(...(await status(peers[N - 1].dataDir)).topics.map(t => t.meshPeers))
      return min >= D_LO
    }, 10_000, 'the last peer\'s mesh at D_lo', 500).catch(() => {})
    expect(min).toBeGreaterThanOrEqual(D_LO)
  }, 130_000)

  it('after a peer crashes, the others graft a replacement and stay at D_lo', async () => {
    const victim = peers[3]
    const victimId = (await status(victim.dataDir)).peerId
    victim.proc.child.kill('SIGKILL')
    await victim.proc.exited
    const rest = peers.filter(p => p !== victim).map(p => p.dataDir)
    // the crash is noticed (the kernel closes its sockets), then the mesh is repaired at the next heartbeats
    for (const d of rest) {
      await waitFor(async () => !(await status(d)).connectedPeers.some(c => c.peerId === victimId), 15_000, `${d} to drop the crashed peer`)
    }
    await meshFormed(rest, 90_000, 'meshes repaired after the crash')
  }, 100_000)
})
