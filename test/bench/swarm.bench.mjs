#!/usr/bin/env node
// Swarm benchmark (issue 2): N peers on one machine, each a separate process
// started through the CLI. Measures process start → first connection and →
// gossip mesh, gossip publish → delivery latency, and RSS per idle peer.
//   node test/bench/swarm.bench.mjs [peers=20] [stagger-ms=300]
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { machine, pct, writeSection } from './report.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const CLI = join(root, 'dist/node/cli/main.js')
const N = Number(process.argv[2] ?? 20)
// peers join one after another (as in a real swarm), not all in the same instant:
// 21 processes loading libp2p at once on 2 cores would measure CPU queueing
const STAGGER_MS = Number(process.argv[3] ?? 1000)
const MESH_MIN = 4 // gossipsub D_lo (the peer records when its mesh reaches it)
const dir = mkdtempSync(join(tmpdir(), 'ps-swarm-bench-'))
const procs = []
const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))

function start (args) {
  const t0 = performance.now()
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'ignore'], env: { ...process.env, PROOFSWARM_LOG_LEVEL: 'warn' } })
  procs.push(child)
  let out = ''
  const ready = new Promise((resolve, reject) => {
    child.stdout.on('data', d => {
      out += d
      try { const j = JSON.parse(out.slice(out.indexOf('{'), out.lastIndexOf('}') + 1)); resolve(j) } catch {}
    })
    child.on('exit', code => reject(new Error(`exited ${code}`)))
  })
  return { child, t0, ready }
}

function client (dataDir) {
  const info = JSON.parse(readFileSync(join(dataDir, 'control.json'), 'utf8'))
  const token = readFileSync(join(dataDir, 'control.token'), 'utf8').trim()
  return async (method, path, body) => {
    const r = await fetch(`http://127.0.0.1:${info.port}${path}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined })
    return await r.json()
  }
}

function rssMiB (pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return m ? Number(m[1]) / 1024 : NaN
}

try {
  const boot = start(['bootstrap', '--json', '--listen', '/ip4/127.0.0.1/tcp/0', '--data-dir', join(dir, 'boot')])
  const bootAddr = (await boot.ready).multiaddrs[0]
  const peers = []
  for (let i = 0; i < N; i++) {
    const dataDir = join(dir, `p${i}`)
    peers.push({ dataDir, ...start(['join', '--json', '--bootstrap', bootAddr, '--listen', '/ip4/127.0.0.1/tcp/0', '--data-dir', dataDir]) })
    await sleep(STAGGER_MS)
  }
  const readyAt = new Array(N).fill(NaN)
  await Promise.all(peers.map(async (p, i) => { await p.ready; readyAt[i] = performance.now() - p.t0; p.api = client(p.dataDir) }))
  // each peer records its own milestones (ms since its process started); wait for all meshes (bounded: 60 s)
  const firstConn = new Array(N).fill(NaN)
  const meshAt = new Array(N).fill(NaN)
  const deadline = performance.now() + 60_000
  while (performance.now() < deadline && meshAt.some(Number.isNaN)) {
    await Promise.all(peers.map(async (p, i) => {
      const s = await p.api('GET', '/v1/status')
      firstConn[i] = s.milestones.firstConnectionMs ?? NaN
      readyAt[i] = s.milestones.readyMs ?? readyAt[i]
      meshAt[i] = Object.entries(s.milestones.meshMs).find(([t]) => t.endsWith('/announce/1'))?.[1] ?? NaN
    }))
    await sleep(250)
  }
  // gossip latency: the publisher's send time travels in the message; receivers stamp receivedAt (same clock)
  const lat = []
  const ROUNDS = 30
  const sent = new Map()
  for (let r = 0; r < ROUNDS; r++) {
    const from = peers[(r * 7) % N]
    const nonce = `t${r}`
    const sentAt = Date.now()
    sent.set(nonce, { sentAt, from: from.dataDir })
    await from.api('POST', '/v1/gossip/publish', { topic: 'announce', data: JSON.stringify({ nonce, sentAt }) })
    await sleep(100)
  }
  await sleep(1500)
  let delivered = 0
  for (const p of peers) {
    const msgs = await p.api('GET', '/v1/gossip/messages?topic=announce')
    for (const m of msgs) {
      const s = sent.get(m.msg.nonce)
      if (s != null && m.msg.sentAt === s.sentAt) { lat.push(m.receivedAt - s.sentAt); delivered++ }
    }
  }
  await sleep(2000)
  const rss = peers.map(p => rssMiB(p.child.pid))
  const bootRss = rssMiB(boot.child.pid)
  const expected = ROUNDS * (N - 1)
  const res = {
    peers: N,
    readyMs: { p50: pct(readyAt, 50), max: Math.max(...readyAt) },
    firstConnectionMs: { p50: pct(firstConn, 50), max: Math.max(...firstConn) },
    fullMeshMs: { p50: pct(meshAt, 50), max: Math.max(...meshAt), missing: meshAt.filter(Number.isNaN).length },
    gossipLatencyMs: { p50: pct(lat, 50), p95: pct(lat, 95), delivered, expected },
    rssMiB: { mean: rss.reduce((a, b) => a + b, 0) / N, max: Math.max(...rss), bootstrap: bootRss }
  }
  console.log(JSON.stringify(res))
  const f = x => Number.isFinite(x) ? x.toFixed(0) : 'n/a'
  writeSection('Swarm', `
Machine: ${machine()}. ${N} peers + 1 bootstrap peer, each a separate process started with the CLI
(\`proofswarm join\`) ${STAGGER_MS} ms after the previous one, on 127.0.0.1; times are from each process's own start. "Full mesh" = the peer's gossipsub mesh on a topic
has at least D_lo = ${MESH_MIN} peers. Gossip latency: ${ROUNDS} messages from different peers, publish (control
API) → delivery at each of the ${N - 1} other peers, same clock.

| measure | result | goal | result / goal |
|---|---|---|---|
| process start → ready (p50 / max) | ${f(res.readyMs.p50)} / ${f(res.readyMs.max)} ms | | |
| process start → first connection (p50 / max) | ${f(res.firstConnectionMs.p50)} / ${f(res.firstConnectionMs.max)} ms | < 3000 ms | ${(res.firstConnectionMs.max / 3000).toFixed(2)} |
| process start → full gossip mesh (p50 / max) | ${f(res.fullMeshMs.p50)} / ${f(res.fullMeshMs.max)} ms${res.fullMeshMs.missing ? ` (${res.fullMeshMs.missing} never)` : ''} | < 3000 ms | ${(res.fullMeshMs.max / 3000).toFixed(2)} |
| gossip publish → delivery p50 / p95 | ${f(res.gossipLatencyMs.p50)} / ${f(res.gossipLatencyMs.p95)} ms (${delivered}/${expected} delivered) | p95 < 50 ms | ${(res.gossipLatencyMs.p95 / 50).toFixed(2)} |
| RSS per idle peer (mean / max) | ${f(res.rssMiB.mean)} / ${f(res.rssMiB.max)} MiB | < 120 MiB | ${(res.rssMiB.max / 120).toFixed(2)} |

Note: every process needs ~0.4 s of CPU to load libp2p and start; with ${N + 1} processes on
${machine().split(' ')[0]} cores, start-up figures include queueing for CPU.
`)
} finally {
  for (const p of procs) p.kill('SIGTERM')
  await sleep(1500)
  for (const p of procs) p.kill('SIGKILL')
  rmSync(dir, { recursive: true, force: true })
}
