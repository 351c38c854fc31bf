import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { join } from 'node:path'
import { readFile, stat } from 'node:fs/promises'
import { firstJson, hasJson, killAll, runCli, startCli, stopProc, tempDir, waitFor, waitForOutput, type Proc } from '../helpers/procs.js'

// 1 bootstrap + 4 peers, each a separate OS process started through the CLI,
// on 127.0.0.1 only.

const N = 4
let dir: { path: string, cleanup: () => Promise<void> }
let boot: Proc
let bootAddr: string
let bootId: string
const peers: Array<{ proc: Proc, dataDir: string, id: string }> = []

async function status (dataDir: string): Promise<any> {
  const r = await runCli(['status', '--json', '--data-dir', dataDir])
  if (r.code !== 0) throw new Error(`status failed: ${r.stderr}`)
  return JSON.parse(r.stdout)
}

async function startPeer (dataDir: string, extra: string[] = []): Promise<{ proc: Proc, id: string }> {
  const proc = startCli(['join', '--bootstrap', bootAddr, '--data-dir', dataDir, '--json', '--listen', '/ip4/127.0.0.1/tcp/0', ...extra])
  await waitForOutput(proc, hasJson, 20_000, 'peer ready')
  return { proc, id: firstJson(proc.stdout()).peerId }
}

beforeAll(async () => {
  dir = await tempDir()
  boot = startCli(['bootstrap', '--data-dir', join(dir.path, 'boot'), '--listen', '/ip4/127.0.0.1/tcp/0', '--json'])
  await waitForOutput(boot, hasJson, 20_000, 'bootstrap ready')
  const ready = firstJson(boot.stdout())
  bootAddr = ready.multiaddrs[0]
  bootId = ready.peerId
  const started = await Promise.all(Array.from({ length: N }, async (_, i) => {
    const dataDir = join(dir.path, `p${i}`)
    return { ...(await startPeer(dataDir, i === 0 ? ['--roles', 'solver,verifier'] : [])), dataDir }
  }))
  peers.push(...started)
})

afterAll(async () => {
  await Promise.all([boot, ...peers.map(p => p.proc)].filter(Boolean).map(async p => await stopProc(p)))
  killAll()
  await dir?.cleanup()
})

describe('swarm through the CLI', () => {
  it('prints a dialable bootstrap multiaddr with /p2p/<id>', () => {
    expect(bootAddr).toMatch(/^\/ip4\/127\.0\.0\.1\/tcp\/\d+\/p2p\/12D3KooW/)
    expect(bootAddr.endsWith(bootId)).toBe(true)
  })

  it('every peer sees the others, and status --json reports them', async () => {
    const ids = peers.map(p => p.id)
    for (const p of peers) {
      await waitFor(async () => {
        const s = await status(p.dataDir)
        const seen = new Set(s.connectedPeers.map((c: any) => c.peerId))
        return ids.filter(id => id !== p.id).every(id => seen.has(id)) && seen.has(bootId) ? s : undefined
      }, 30_000, `peer ${p.id} to connect to all others`)
    }
    const s = await status(peers[0].dataDir)
    expect(s.peerId).toBe(peers[0].id)
    expect(s.roles).toEqual(['solver', 'verifier'])
    expect(s.dhtRoutingTableSize).toBeGreaterThanOrEqual(1)
    expect(s.topics.map((t: any) => t.topic)).toContain('/proofswarm/devnet/announce/1')
    expect(s.uptimeSeconds).toBeGreaterThan(0)
  })

  it('a gossip message published by one peer reaches all others', async () => {
    // wait for a mesh on the topic first: a message published before GRAFT is only flooded to known subscribers
    await waitFor(async () => (await status(peers[0].dataDir)).topics.find((t: any) => t.topic.endsWith('/announce/1'))?.meshPeers >= 2, 20_000, 'gossip mesh')
    const nonce = `hello-${Date.now()}`
    const pub = await runCli(['gossip', 'publish', 'announce', JSON.stringify({ nonce }), '--json', '--data-dir', peers[0].dataDir])
    expect(pub.code, pub.stderr).toBe(0)
    for (const p of [...peers.slice(1)]) {
      await waitFor(async () => {
        const r = await runCli(['gossip', 'messages', '--json', '--topic', 'announce', '--data-dir', p.dataDir])
        return (JSON.parse(r.stdout) as any[]).some(m => m.msg.nonce === nonce && m.from === peers[0].id)
      }, 15_000, `gossip at ${p.id}`)
    }
  })

  it('a DHT provide / findProviders round-trips', async () => {
    const cid = 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy'
    const prov = await runCli(['dht', 'provide', cid, '--json', '--data-dir', peers[1].dataDir])
    expect(prov.code, prov.stderr).toBe(0)
    const found = await waitFor(async () => {
      const r = await runCli(['dht', 'find-providers', cid, '--json', '--timeout', '5000', '--data-dir', peers[3].dataDir])
      const providers = JSON.parse(r.stdout).providers as any[]
      return providers.some(p => p.peerId === peers[1].id) ? providers : undefined
    }, 30_000, 'provider record')
    expect(found.find(p => p.peerId === peers[1].id).addrs.length).toBeGreaterThan(0)
    // the lookup reports its cost: time, time to the first provider, peers queried, hops
    const r = await runCli(['dht', 'find-providers', cid, '--json', '--timeout', '5000', '--data-dir', peers[3].dataDir])
    const { providers, lookup } = JSON.parse(r.stdout)
    expect(providers.map((p: any) => p.peerId)).toContain(peers[1].id)
    expect(Number.isInteger(lookup.hops) && lookup.hops >= 0).toBe(true)
    expect(lookup.firstProviderMs).toBeLessThanOrEqual(lookup.ms)
    expect(Number.isInteger(lookup.queried)).toBe(true)
    const text = await runCli(['dht', 'find-providers', cid, '--timeout', '5000', '--data-dir', peers[3].dataDir])
    expect(text.stdout).toMatch(/\d+ ms, \d+ peers queried, first provider \d+ hop/)
  })

  it('the control API refuses requests without the right token, and the token file is private', async () => {
    const info = JSON.parse(await readFile(join(peers[0].dataDir, 'control.json'), 'utf8'))
    const noToken = await fetch(`http://127.0.0.1:${info.port}/v1/status`)
    expect(noToken.status).toBe(401)
    const wrong = await fetch(`http://127.0.0.1:${info.port}/v1/status`, { headers: { authorization: 'Bearer 00' } })
    expect(wrong.status).toBe(401)
    const token = (await readFile(join(peers[0].dataDir, 'control.token'), 'utf8')).trim()
    const ok = await fetch(`http://127.0.0.1:${info.port}/v1/status`, { headers: { authorization: `Bearer ${token}` } })
    expect(ok.status).toBe(200)
    expect((await stat(join(peers[0].dataDir, 'control.token'))).mode & 0o777).toBe(0o600)
    const metrics = await fetch(`http://127.0.0.1:${info.port}/metrics`, { headers: { authorization: `Bearer ${token}` } })
    const text = await metrics.text()
    expect(text).toContain('proofswarm_gossip_messages_total')
    expect(text).toMatch(/libp2p_/)
  })

  it('a restarted peer keeps its id and roles, and shutdown removes the port file', async () => {
    const p = peers[0]
    const code = await stopProc(p.proc)
    expect(code).toBe(0)
    await expect(stat(join(p.dataDir, 'control.json'))).rejects.toThrow()
    const again = await startPeer(p.dataDir)
    peers[0] = { ...again, dataDir: p.dataDir }
    expect(again.id).toBe(p.id)
    expect((await status(p.dataDir)).roles).toEqual(['solver', 'verifier'])
  })
})

describe('clear errors', () => {
  it('an invalid bootstrap multiaddr is named', async () => {
    const r = await runCli(['join', '--bootstrap', '/ip4/999.1.1.1/tcp/1', '--data-dir', join(dir.path, 'bad1')])
    expect(r.code).not.toBe(0)
    expect(r.stderr).toContain('invalid bootstrap multiaddr "/ip4/999.1.1.1/tcp/1"')
  })

  it('an unreachable bootstrap peer is retried, then named with what to check', async () => {
    const addr = '/ip4/127.0.0.1/tcp/1/p2p/12D3KooWF9xQ3P7ozsnN9L1tXi9c7LMdM3Nzv3p6pfSr9KcuPBWf'
    const r = await runCli(['join', '--bootstrap', addr, '--bootstrap-retries', '2', '--data-dir', join(dir.path, 'bad2'), '--log-level', 'warn'])
    expect(r.code).not.toBe(0)
    expect(r.stderr).toContain('attempt 1/2')
    expect(r.stderr).toContain(`could not reach any bootstrap peer after 2 attempts`)
    expect(r.stderr).toContain(addr)
    expect(r.stderr).toMatch(/Check that the bootstrap peer is running/)
  })

  it('a port in use is named', async () => {
    const port = /tcp\/(\d+)/.exec(bootAddr)![1]
    const r = await runCli(['bootstrap', '--listen', `/ip4/127.0.0.1/tcp/${port}`, '--data-dir', join(dir.path, 'bad3')])
    expect(r.code).not.toBe(0)
    expect(r.stderr).toContain(`port ${port} is already in use`)
  })

  it('status without a running peer says so', async () => {
    const r = await runCli(['status', '--data-dir', join(dir.path, 'nobody')])
    expect(r.code).not.toBe(0)
    expect(r.stderr).toContain('no running peer found')
  })
})
