// Memory of a peer per connection: one measured `proofswarm join` process
// (its own process, as an operator runs it), and other peers (scale-host.ts,
// 10 to a process) that bootstrap from it, so each connects to it. At each
// step more peers join; once they settle, the measured peer's RSS (anonymous
// pages: its own), V8 heap and connection count are read from /proc and its
// control API. The slope of memory over connections is what a connection
// costs; the connection trimmer (node/p2p/conn-trim.ts) decides how many a
// peer keeps.
//   npm run bench -- conn-memory [steps=0,8,16,24,32,40] [settle-s=20]
// SCALE_BENCH_NO_WRITE=1 leaves docs/ alone.
import { mkdtempSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { machine, writeSection } from './report.js'
import { PeerHost, SwarmProc, type SwarmPeer, memAvailableMiB, rssSplitMiB, sleep, tempDirToRemove } from './scale-swarm.js'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const CLI = join(root, 'dist/node/cli/main.js')
const STEPS = (process.argv[2] ?? '0,8,16,24,32,40').split(',').map(Number)
const SETTLE_S = Number(process.argv[3] ?? 20)
const SAMPLES = 3
const PEERS_PER_PROCESS = 10
if (STEPS.some(n => !Number.isInteger(n) || n < 0 || n > 100)) { console.error('steps: integers in 0..100'); process.exit(2) }
const maxPeers = Math.max(...STEPS)
const needMiB = 2 * 130 + Math.ceil(maxPeers / PEERS_PER_PROCESS) * (90 + PEERS_PER_PROCESS * 25) + 1024
if (memAvailableMiB() < needMiB) { console.error(`need ~${needMiB} MiB available, have ${memAvailableMiB().toFixed(0)}`); process.exit(2) }

const dir = tempDirToRemove(mkdtempSync(join(tmpdir(), 'ps-conn-mem-')))
const t0 = performance.now()
const log = (msg: string): void => console.error(`[conn-memory ${((performance.now() - t0) / 1000).toFixed(1)} s] ${msg}`)
const load = [loadavg()[0]]
const mean = (xs: number[]): number => xs.reduce((s, x) => s + x, 0) / xs.length
const MiB = (b: number): number => b / 2 ** 20

interface Row { peers: number, connections: number, rssMiB: number, anonMiB: number, heapUsedMiB: number, heapTotalMiB: number, externalMiB: number }
const rows: Row[] = []
const hosts: PeerHost[] = []
const others: SwarmPeer[] = []

const boot = new SwarmProc(CLI, ['bootstrap', '--json', '--listen', '/ip4/127.0.0.1/tcp/0'], join(dir, 'boot'))
const bootAddr = (await boot.ready).multiaddrs[0] as string
const measured = new SwarmProc(CLI, ['join', '--json', '--bootstrap', bootAddr, '--listen', '/ip4/127.0.0.1/tcp/0'], join(dir, 'measured'))
const addr = (await measured.ready).multiaddrs[0] as string
log(`measured peer ${measured.pid} at ${addr}`)

for (const target of STEPS) {
  while (others.length < target) {
    if (others.length % PEERS_PER_PROCESS === 0) hosts.push(await PeerHost.spawn())
    const p = hosts[hosts.length - 1].start(join(dir, `p${others.length}`), addr)
    others.push(p)
    await p.ready
  }
  await sleep(SETTLE_S * 1000)
  const samples: Row[] = []
  for (let s = 0; s < SAMPLES; s++) {
    const st = await measured.api('GET', '/v1/status', undefined, 10_000)
    const split = rssSplitMiB(measured.pid)
    const mem = st.memory as Record<string, number>
    samples.push({
      peers: target,
      connections: st.connectedPeers.length,
      rssMiB: split.anon + split.file,
      anonMiB: split.anon,
      heapUsedMiB: MiB(mem.heapUsed),
      heapTotalMiB: MiB(mem.heapTotal),
      externalMiB: MiB(mem.external)
    })
    await sleep(2000)
  }
  const row = Object.fromEntries(Object.keys(samples[0]).map(k => [k, mean(samples.map(r => r[k as keyof Row]))])) as unknown as Row
  rows.push(row)
  log(JSON.stringify(row))
}
load.push(loadavg()[0])

// least squares slope of y over connections
const slope = (y: (r: Row) => number): number => {
  const xs = rows.map(r => r.connections)
  const ys = rows.map(y)
  const mx = mean(xs)
  const my = mean(ys)
  const sxx = xs.reduce((s, x) => s + (x - mx) ** 2, 0)
  return sxx === 0 ? NaN : xs.reduce((s, x, i) => s + (x - mx) * (ys[i] - my), 0) / sxx
}
const perConn = { anonMiB: slope(r => r.anonMiB), heapUsedMiB: slope(r => r.heapUsedMiB), heapTotalMiB: slope(r => r.heapTotalMiB) }
console.log(JSON.stringify({ rows, perConn, load }))

const f = (x: number, d = 1): string => Number.isFinite(x) ? x.toFixed(d) : '–'
const body = `Machine: ${machine()}; 1-min load ${f(load[0])} at the start, ${f(load[1])} at the end. One \`proofswarm join\` process, measured; other peers
(${PEERS_PER_PROCESS} to a process, test/bench/scale-host.ts) bootstrap from it, so each connects to it. Each row: ${SETTLE_S} s after the
step's last peer was ready, ${SAMPLES} readings 2 s apart (mean). RSS = VmRSS (anonymous + file pages; the file pages are mostly the node
binary, shared by every node process); heap from the peer's \`/v1/status\`. Run: \`npm run bench -- conn-memory ${STEPS.join(',')} ${SETTLE_S}\`.

| other peers started | connections of the measured peer | RSS | anonymous | V8 heap used / committed | external |
|---|---|---|---|---|---|
${rows.map(r => `| ${r.peers} | ${f(r.connections)} | ${f(r.rssMiB)} MiB | ${f(r.anonMiB)} MiB | ${f(r.heapUsedMiB)} / ${f(r.heapTotalMiB)} MiB | ${f(r.externalMiB)} MiB |`).join('\n')}

Per connection (least-squares slope over the rows): ${f(perConn.anonMiB, 2)} MiB anonymous RSS, ${f(perConn.heapUsedMiB, 2)} MiB of V8 heap used,
${f(perConn.heapTotalMiB, 2)} MiB committed. The connection trimmer keeps a settled peer near 24 connections (docs/operators-guide.md, "Swarm settings and memory of a peer").`
if (process.env.SCALE_BENCH_NO_WRITE !== '1') writeSection('Swarm: memory per connection', body)
else console.log(body)
for (const h of hosts) await h.stop()
await measured.stop()
await boot.stop()
