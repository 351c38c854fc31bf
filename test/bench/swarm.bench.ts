// Swarm benchmark (issue 2): N peers on one machine, each a separate process
// started through the CLI. Measures process start → first connection and →
// gossip mesh, gossip publish → delivery latency, and RSS per idle peer.
//   npm run bench -- swarm [peers=20] [stagger-ms=1000]
// Side by side with another build (the machine is shared, so figures from
// different runs are not comparable): SWARM_BENCH_BASELINE=<dir with a built
// dist/> SWARM_BENCH_ROUNDS=2 runs baseline and current swarms alternately in
// one run and reports both (SWARM_BENCH_BASELINE_LABEL names it in the report).
// A baseline dir: git archive <commit> | tar -x -C dir; ln -s $PWD/node_modules
// dir/; (cd dir && npx tsc -p tsconfig.json). SWARM_BENCH_NO_WRITE=1 leaves docs/ alone.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { machine, pct, writeSection } from './report.js'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const CLI = join(root, 'dist/node/cli/main.js')
const BASELINE = process.env.SWARM_BENCH_BASELINE
const ROUNDS_AB = Number(process.env.SWARM_BENCH_ROUNDS ?? 1)
const N = Number(process.argv[2] ?? 20)
// peers join one after another (as in a real swarm), not all in the same instant:
// 21 processes loading libp2p at once on 2 cores would measure CPU queueing
const STAGGER_MS = Number(process.argv[3] ?? 1000)
const MESH_MIN = 4 // gossipsub D_lo (the peer records when its mesh reaches it)
const ROUNDS = 30 // gossip messages
const sleep = (ms: number): Promise<void> => new Promise(resolve => setTimeout(resolve, ms))

type Api = (method: string, path: string, body?: unknown) => Promise<any>
function client (dataDir: string): Api {
  const info = JSON.parse(readFileSync(join(dataDir, 'control.json'), 'utf8'))
  const token = readFileSync(join(dataDir, 'control.token'), 'utf8').trim()
  return async (method, path, body) => {
    const r = await fetch(`http://127.0.0.1:${info.port}${path}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined })
    return await r.json()
  }
}

// CPU time (user + system) of a process in ms: unlike wall-clock figures, it barely depends on
// what else the shared machine runs
function cpuMs (pid: number | undefined): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(f[11]) + Number(f[12])) * 10 // utime + stime, in ticks of 10 ms
}
const sumCpu = (ps: Array<{ child: ChildProcess }>): number => ps.reduce((a, p) => a + cpuMs(p.child.pid), 0)

function rssMiB (pid: number | undefined): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return m ? Number(m[1]) / 1024 : NaN
}

async function runSwarm (cli: string): Promise<Record<string, any>> {
  const dir = mkdtempSync(join(tmpdir(), 'ps-swarm-bench-'))
  const procs: ChildProcess[] = []
  const start = (args: string[]): { child: ChildProcess, t0: number, ready: Promise<any> } => {
    const t0 = performance.now()
    const child = spawn(process.execPath, [cli, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PROOFSWARM_LOG_LEVEL: 'warn' } })
    procs.push(child)
    let out = ''
    let err = ''
    child.stderr.on('data', (d: Buffer) => { err = (err + d).slice(-2000) })
    const ready = new Promise<any>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => {
        out += d
        try { const j = JSON.parse(out.slice(out.indexOf('{'), out.lastIndexOf('}') + 1)); resolve(j) } catch {}
      })
      child.on('exit', code => reject(new Error(`${args[0]} ${args.at(-1)} exited ${code}: ${err}`)))
    })
    ready.catch(() => {}) // a peer killed at the end rejects; one that fails early is awaited below
    return { child, t0, ready }
  }
  const load0 = loadavg()[0]
  try {
    const boot = start(['bootstrap', '--json', '--listen', '/ip4/127.0.0.1/tcp/0', '--data-dir', join(dir, 'boot')])
    const bootAddr = (await boot.ready).multiaddrs[0]
    const peers: Array<{ dataDir: string, child: ChildProcess, t0: number, ready: Promise<any>, api: Api }> = []
    const notReady: Api = async () => { throw new Error('peer not ready') }
    for (let i = 0; i < N; i++) {
      const dataDir = join(dir, `p${i}`)
      peers.push({ dataDir, api: notReady, ...start(['join', '--json', '--bootstrap', bootAddr, '--listen', '/ip4/127.0.0.1/tcp/0', '--data-dir', dataDir]) })
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
    const sent = new Map()
    const cpu0 = sumCpu(peers)
    const gossipT0 = performance.now()
    for (let r = 0; r < ROUNDS; r++) {
      const from = peers[(r * 7) % N]
      const nonce = `t${r}`
      const sentAt = Date.now()
      sent.set(nonce, { sentAt, from: from.dataDir })
      await from.api('POST', '/v1/gossip/publish', { topic: 'announce', data: JSON.stringify({ nonce, sentAt }) })
      await sleep(100)
    }
    await sleep(1500)
    const cpuGossip = sumCpu(peers) - cpu0
    const gossipSeconds = (performance.now() - gossipT0) / 1000
    let delivered = 0
    for (const p of peers) {
      const msgs = await p.api('GET', '/v1/gossip/messages?topic=announce')
      for (const m of msgs) {
        const s = sent.get(m.msg.nonce)
        if (s != null && m.msg.sentAt === s.sentAt) { lat.push(m.receivedAt - s.sentAt); delivered++ }
      }
    }
    await sleep(2000)
    const cpuIdle0 = sumCpu(peers)
    await sleep(5000)
    const idleCpuMsPerS = (sumCpu(peers) - cpuIdle0) / 5 / N
    const rss = peers.map(p => rssMiB(p.child.pid))
    const bootRss = rssMiB(boot.child.pid)
    const res = {
      peers: N,
      load: [load0, loadavg()[0]].map(x => Math.round(x * 10) / 10),
      readyMs: { p50: pct(readyAt, 50), max: Math.max(...readyAt) },
      firstConnectionMs: { p50: pct(firstConn, 50), max: Math.max(...firstConn) },
      fullMeshMs: { p50: pct(meshAt, 50), max: Math.max(...meshAt), missing: meshAt.filter(Number.isNaN).length },
      // peers that joined a swarm where D_lo others (bootstrap + earlier peers) were already up: the
      // first MESH_MIN - 1 peers cannot have D_lo mesh peers before enough others have started
      fullMeshJoiningMs: { p50: pct(meshAt.slice(MESH_MIN - 1), 50), max: Math.max(...meshAt.slice(MESH_MIN - 1)) },
      gossipLatencyMs: { p50: pct(lat, 50), p95: pct(lat, 95), delivered, expected: ROUNDS * (N - 1) },
      // CPU of all peers while gossiping, less what they use idle, per message and peer
      cpu: { gossipMsPerMsgPerPeer: (cpuGossip - idleCpuMsPerS * N * gossipSeconds) / ROUNDS / N, idleMsPerSPerPeer: idleCpuMsPerS },
      rssMiB: { mean: rss.reduce((a, b) => a + b, 0) / N, max: Math.max(...rss), bootstrap: bootRss }
    }
    if (process.env.SWARM_BENCH_DETAIL === '1') console.error(JSON.stringify({ readyAt, firstConn, meshAt, rss, lat: [...lat].sort((a, b) => a - b) }))
    return res
  } finally {
    for (const p of procs) p.kill('SIGTERM')
    await sleep(1500)
    for (const p of procs) p.kill('SIGKILL')
    rmSync(dir, { recursive: true, force: true })
  }
}

const runs: { current: Array<Record<string, any>>, baseline: Array<Record<string, any>> } = { current: [], baseline: [] }
for (let r = 0; r < (BASELINE ? ROUNDS_AB : 1); r++) {
  if (BASELINE) {
    const b = await runSwarm(join(BASELINE, 'dist/node/cli/main.js'))
    console.log(JSON.stringify({ build: 'baseline', ...b }))
    runs.baseline.push(b)
  }
  const c = await runSwarm(CLI)
  console.log(JSON.stringify({ build: 'current', ...c }))
  runs.current.push(c)
}

const f = (x: number): string => Number.isFinite(x) ? x.toFixed(0) : 'n/a'
const row = (r: Record<string, any>): string => `${f(r.readyMs.p50)} / ${f(r.readyMs.max)} ms | ${f(r.firstConnectionMs.p50)} / ${f(r.firstConnectionMs.max)} ms | ` +
  `${f(r.fullMeshMs.p50)} / ${f(r.fullMeshMs.max)} ms${r.fullMeshMs.missing ? ` (${r.fullMeshMs.missing} never)` : ''} | ` +
  `${f(r.fullMeshJoiningMs.p50)} / ${f(r.fullMeshJoiningMs.max)} ms | ` +
  `${f(r.gossipLatencyMs.p50)} / ${f(r.gossipLatencyMs.p95)} ms (${r.gossipLatencyMs.delivered}/${r.gossipLatencyMs.expected}) | ` +
  `${f(r.rssMiB.mean)} / ${f(r.rssMiB.max)} MiB | ${r.cpu.idleMsPerSPerPeer.toFixed(1)} ms/s | ${r.cpu.gossipMsPerMsgPerPeer.toFixed(1)} ms | ${r.load[0]} → ${r.load[1]}`
const last = runs.current[runs.current.length - 1]
const table = (BASELINE
  ? [...runs.baseline.map((r, i) => `| baseline, run ${i + 1} | ${row(r)} |`), ...runs.current.map((r, i) => `| current, run ${i + 1} | ${row(r)} |`)]
  : runs.current.map(r => `| current | ${row(r)} |`)).join('\n')
if (process.env.SWARM_BENCH_NO_WRITE !== '1') {
  writeSection('Swarm', `
Machine: ${machine()}. ${N} peers + 1 bootstrap peer, each a separate process started with the CLI
(\`proofswarm join\`) ${STAGGER_MS} ms after the previous one, on 127.0.0.1; times are from each process's own start. "Full mesh" = the peer's gossipsub mesh on a topic
has at least D_lo = ${MESH_MIN} peers. Gossip latency: ${ROUNDS} messages from different peers, publish (control
API) → delivery at each of the ${N - 1} other peers, same clock. RSS per idle peer: 2 s after the gossip test.

| measure | result (latest run) | goal | result / goal |
|---|---|---|---|
| process start → ready (p50 / max) | ${f(last.readyMs.p50)} / ${f(last.readyMs.max)} ms | | |
| process start → first connection (p50 / max) | ${f(last.firstConnectionMs.p50)} / ${f(last.firstConnectionMs.max)} ms | < 3000 ms | ${(last.firstConnectionMs.max / 3000).toFixed(2)} |
| process start → full gossip mesh (p50 / max) | ${f(last.fullMeshMs.p50)} / ${f(last.fullMeshMs.max)} ms${last.fullMeshMs.missing ? ` (${last.fullMeshMs.missing} never)` : ''} | < 3000 ms | ${(last.fullMeshMs.max / 3000).toFixed(2)} |
| … of the ${N - MESH_MIN + 1} peers that joined with ≥ D_lo others up (p50 / max) | ${f(last.fullMeshJoiningMs.p50)} / ${f(last.fullMeshJoiningMs.max)} ms | < 3000 ms | ${(last.fullMeshJoiningMs.max / 3000).toFixed(2)} |
| gossip publish → delivery p50 / p95 | ${f(last.gossipLatencyMs.p50)} / ${f(last.gossipLatencyMs.p95)} ms (${last.gossipLatencyMs.delivered}/${last.gossipLatencyMs.expected} delivered) | p95 < 50 ms | ${(last.gossipLatencyMs.p95 / 50).toFixed(2)} |
| RSS per idle peer (mean / max) | ${f(last.rssMiB.mean)} / ${f(last.rssMiB.max)} MiB | < 120 MiB | ${(last.rssMiB.max / 120).toFixed(2)} |

All runs of this invocation${BASELINE ? ` (baseline = ${process.env.SWARM_BENCH_BASELINE_LABEL ?? BASELINE}, run alternately with the current build)` : ''}; load = 1-min load average at the start → end of each swarm:

| build | ready p50 / max | first connection p50 / max | full mesh p50 / max | … joining ≥ D_lo others p50 / max | gossip p50 / p95 (delivered) | RSS mean / max | idle CPU per peer | CPU per message per peer | load |
|---|---|---|---|---|---|---|---|---|---|
${table}

CPU figures are CPU time (user + system) of the peer processes, so they depend little on the load: idle CPU
over 5 s after the gossip test; CPU per message = CPU of all peers during the gossip test, less their idle CPU,
per message and peer (receiving, verifying and forwarding it; on one machine, delivery latency is mostly
queueing for this CPU).

The first ${MESH_MIN - 1} peers cannot reach D_lo = ${MESH_MIN} mesh peers before ${MESH_MIN} other peers run: with
${STAGGER_MS} ms between starts, the first peer's figure includes ~${((MESH_MIN - 1) * STAGGER_MS / 1000).toFixed(0)} s of waiting for peers 2–${MESH_MIN} to start,
whatever the settings; the second mesh row leaves them out.

Settings behind these figures (peer keeper, gossipsub heartbeat and duplicate filter, connection-monitor
interval, V8 young generation): docs/operators-guide.md, "Swarm settings and memory of a peer".

Note: every process needs ~0.4 s of CPU to load libp2p and start; with ${N + 1} processes on
${machine().split(' ')[0]} cores, start-up figures include queueing for CPU. The machine is shared:
compare builds only within one invocation.
`)
}
