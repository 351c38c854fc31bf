// CPU time per gossip message per peer, two builds side by side: a process
// runs P real libp2p hosts (node/p2p/host.ts createHost: TCP on 127.0.0.1,
// noise, yamux, gossipsub with the node's settings, each with a GossipRouter
// on one topic decoding JSON as the 'announce' topic does), meshes them,
// then publishes M messages from rotating publishers and waits until every
// peer has every message. CPU = the process's user + system time over that
// window less its idle rate, per message and peer; write syscalls from
// /proc/self/io likewise. A CPU-time figure barely depends on the machine's
// load, and rounds alternate between the builds (A, B, A, B, ...).
//   npm run bench -- gossip-cpu [peers=12] [messages=300] [rounds=3]
// GOSSIP_BENCH_B_DIST=<another build's dist/> is build B (default: this
// build's dist/ for both); GOSSIP_BENCH_RATE messages a second (default 20).
// GOSSIP_BENCH_MODE=peer runs whole proofswarm peers instead of bare hosts
// (Peer.start with the default services, as scale-host.ts: every protocol
// topic, metrics, DHT, keeper, trimmer, graylist check, control API), the
// first the others' bootstrap peer, and publishes on 'announce' through each
// peer's router: what a peer of the swarm scale bench pays per message and idle.
// GOSSIP_BENCH_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/p") goes to each child.
// SCALE_BENCH_NO_WRITE=1 leaves docs/ alone.
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { machine, writeSection } from './report.js'
import { BENCH_DIR, ROOT, nativeScriptArgs } from './ts-script.js'

const sleep = async (ms: number): Promise<void> => await new Promise(resolve => setTimeout(resolve, ms))
const mean = (xs: number[]): number => xs.reduce((s, x) => s + x, 0) / xs.length
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}
const writes = (): number => Number(/syscw:\s+(\d+)/.exec(readFileSync('/proc/self/io', 'utf8'))?.[1] ?? NaN)
const cpuMs = (): number => { const u = process.cpuUsage(); return (u.user + u.system) / 1000 }

interface Result {
  build: string
  peers: number
  messages: number
  delivered: number
  expected: number
  idleMsPerS: number
  idleWritesPerS?: number
  cpuMsPerMsgPerPeer: number
  writesPerMsgPerPeer: number
  windowS: number
  meshMean: number
  load: number[]
}

const MODE = process.env.GOSSIP_BENCH_MODE === 'peer' ? 'peer' : 'host'

if (process.argv[2] === '--child' && MODE === 'peer') await peerChild(process.argv[3], Number(process.argv[4]), Number(process.argv[5]), Number(process.argv[6]))
else if (process.argv[2] === '--child') await child(process.argv[3], Number(process.argv[4]), Number(process.argv[5]), Number(process.argv[6]))
else await parent()

async function child (dist: string, peers: number, messages: number, rate: number): Promise<void> {
  const load = [loadavg()[0]]
  const imp = async <M>(p: string): Promise<M> => await import(pathToFileURL(join(dist, p)).href) as M
  await imp('node/polyfill.js') // as the CLI does, before libp2p loads
  const { createHost } = await imp<typeof import('../../node/p2p/host.js')>('node/p2p/host.js')
  const { GossipRouter } = await imp<typeof import('../../node/p2p/gossip.js')>('node/p2p/gossip.js')
  const { createLogger } = await imp<typeof import('../../node/log.js')>('node/log.js')
  const { generateKeyPair } = await import('@libp2p/crypto/keys')
  const logger = createLogger('bench', { level: 'error' })
  const network = 'bench'
  const topic = `/proofswarm/${network}/announce/1`
  const got: number[] = new Array(peers).fill(0)
  const nodes = await Promise.all(Array.from({ length: peers }, async () => await createHost({
    privateKey: await generateKeyPair('Ed25519'), listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap: [], privateNetwork: true, scoredTopics: [topic]
  })))
  const routers = nodes.map((h, i) => {
    const r = new GossipRouter(h.services.pubsub, network, logger)
    r.register('announce', {
      decode: (d: Uint8Array) => { const v = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(d)) as unknown; if (v == null || typeof v !== 'object') throw new Error('not an object'); return v },
      handle: () => { got[i]++ }
    })
    return r
  })
  // each host dials 6 others (a ring and chords): meshes of D = 6 form as in a swarm
  for (let i = 0; i < peers; i++) {
    for (const k of [1, 2, 3]) await nodes[i].dial(nodes[(i + k) % peers].getMultiaddrs()[0]).catch(() => {})
  }
  // gossipsub's class has getMeshPeers; its exported interface does not (as node/peer.ts reads it)
  const mesh = (h: (typeof nodes)[number]): number => (h.services.pubsub as unknown as { getMeshPeers: (t: string) => string[] }).getMeshPeers(topic).length
  const dLo = Math.min(4, peers - 1)
  const meshDeadline = Date.now() + 60_000
  while (Date.now() < meshDeadline && nodes.some(h => mesh(h) < dLo)) await sleep(500)
  await sleep(3000) // scoring, identify and the first heartbeats settle
  const meshMean = mean(nodes.map(mesh))
  const r = await measure(peers, messages, rate, async (m, data) => await routers[m % peers].publish('announce', data), () => got.reduce((s, x) => s + x, 0), 3)
  load.push(loadavg()[0])
  const out: Result = { build: dist, peers, messages, meshMean, load, ...r }
  process.stdout.write(JSON.stringify(out) + '\n')
  await Promise.allSettled(nodes.map(async h => await h.stop()))
  process.exit(0)
}

/** publishes `messages` through `publish(m)` at `rate`/s, waits for `delivered()` to reach `expected` (bounded); CPU and writes over that window less the idle rate */
async function measure (peers: number, messages: number, rate: number, publish: (m: number, data: Uint8Array) => Promise<unknown>, delivered: () => number, idleS: number): Promise<Omit<Result, 'build' | 'peers' | 'messages' | 'meshMean' | 'load'>> {
  console.error(`[gossip-cpu] pid ${process.pid}: idle window of ${idleS} s`)
  const i0 = cpuMs(); const iw0 = writes(); const it0 = performance.now()
  await sleep(idleS * 1000)
  console.error(`[gossip-cpu] pid ${process.pid}: publishing`)
  const idleWindowS = (performance.now() - it0) / 1000
  const idleMsPerS = (cpuMs() - i0) / idleWindowS
  const idleWritesPerS = (writes() - iw0) / idleWindowS
  const c0 = cpuMs(); const w0 = writes(); const t0 = performance.now()
  for (let m = 0; m < messages; m++) {
    const data = new TextEncoder().encode(JSON.stringify({ nonce: `m${m}`, sentAt: Date.now(), pad: 'x'.repeat(120) }))
    await publish(m, data).catch(() => {})
    await sleep(1000 / rate)
  }
  const expected = messages * (peers - 1)
  const deadline = Date.now() + 120_000
  while (Date.now() < deadline && delivered() < expected) await sleep(100)
  await sleep(1000) // the last forwards and IHAVEs
  const windowS = (performance.now() - t0) / 1000
  const cpu = cpuMs() - c0 - idleMsPerS * windowS
  const w = writes() - w0 - idleWritesPerS * windowS
  return {
    delivered: delivered(), expected, idleMsPerS: idleMsPerS / peers, idleWritesPerS: idleWritesPerS / peers,
    cpuMsPerMsgPerPeer: cpu / messages / peers, writesPerMsgPerPeer: w / messages / peers, windowS
  }
}

async function peerChild (dist: string, peers: number, messages: number, rate: number): Promise<void> {
  const load = [loadavg()[0]]
  const imp = async <M>(p: string): Promise<M> => await import(pathToFileURL(join(dist, p)).href) as M
  await imp('node/polyfill.js')
  const { tunePeerHeap } = await imp<typeof import('../../node/cli/peer-heap.js')>('node/cli/peer-heap.js')
  tunePeerHeap() // as the CLI does for `join`, before libp2p loads
  const { Peer } = await imp<typeof import('../../node/peer.js')>('node/peer.js')
  const { defaultServices } = await imp<typeof import('../../node/services.js')>('node/services.js')
  const { createLogger } = await imp<typeof import('../../node/log.js')>('node/log.js')
  const dir = mkdtempSync(join(tmpdir(), 'ps-gossip-cpu-'))
  try {
    const start = async (i: number, bootstrap: string[]): Promise<Awaited<ReturnType<typeof Peer.start>>> => await Peer.start({
      kind: i === 0 ? 'bootstrap' : 'peer', dataDir: join(dir, `p${i}`), listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap, bootstrapAttempts: 8,
      services: defaultServices({}), logger: createLogger('bench', { level: 'error' })
    })
    const boot = await start(0, [])
    const nodes = [boot]
    for (let i = 1; i < peers; i++) nodes.push(await start(i, [boot.status().listenAddrs[0]]))
    const dLo = Math.min(4, peers - 1)
    const meshMin = (p: (typeof nodes)[number]): number => Math.min(...p.status().topics.map(t => t.meshPeers))
    const meshDeadline = Date.now() + 90_000
    while (Date.now() < meshDeadline && nodes.some(p => meshMin(p) < dLo)) await sleep(500)
    await sleep(Number(process.env.GOSSIP_BENCH_SETTLE_S ?? 5) * 1000) // identify, scoring, the keeper's first rounds
    const meshMean = mean(nodes.flatMap(p => p.status().topics.map(t => t.meshPeers)))
    const since = Date.now()
    const got = (): number => nodes.reduce((s, p) => s + p.gossip.received({ topic: 'announce', since }).length, 0)
    const r = await measure(peers, messages, rate, async (m, data) => await nodes[m % peers].gossip.publish('announce', data), got, Number(process.env.GOSSIP_BENCH_IDLE_S ?? 5))
    load.push(loadavg()[0])
    process.stdout.write(JSON.stringify({ build: dist, peers, messages, meshMean, load, ...r }) + '\n')
    await Promise.allSettled(nodes.map(async p => await p.stop()))
  } finally { rmSync(dir, { recursive: true, force: true }) }
  process.exit(0)
}

async function parent (): Promise<void> {
  const peers = Number(process.argv[2] ?? 12)
  const messages = Number(process.argv[3] ?? 300)
  const rounds = Number(process.argv[4] ?? 3)
  const rate = Number(process.env.GOSSIP_BENCH_RATE ?? 20)
  if (![peers, messages, rounds, rate].every(n => Number.isFinite(n) && n > 0) || peers < 2 || peers > 40) { console.error('peers 2..40, messages, rounds, rate > 0'); process.exit(2) }
  const builds = { A: join(ROOT, 'dist'), B: process.env.GOSSIP_BENCH_B_DIST ?? join(ROOT, 'dist') }
  const results: Record<string, Result[]> = { A: [], B: [] }
  for (let r = 0; r < rounds; r++) {
    for (const b of process.env.GOSSIP_BENCH_B_DIST === 'none' ? ['A'] as const : ['A', 'B'] as const) {
      const nodeArgs = (process.env.GOSSIP_BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean)
      const args = await nativeScriptArgs(join(BENCH_DIR, 'gossip-cpu.bench.ts'), ['--child', builds[b], String(peers), String(messages), String(rate)], nodeArgs)
      const res = await new Promise<Result>((resolve, reject) => {
        const c = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'], cwd: ROOT })
        let out = ''
        const kill = setTimeout(() => c.kill('SIGKILL'), Number(process.env.GOSSIP_BENCH_CHILD_LIMIT_S ?? 300) * 1000)
        c.stdout.on('data', (d: Buffer) => { out += d })
        c.on('exit', code => { clearTimeout(kill); try { resolve(JSON.parse(out.trim().split('\n').pop() ?? '')) } catch { reject(new Error(`build ${b} exited ${code}: ${out}`)) } })
      })
      results[b].push(res)
      console.error(`[gossip-cpu] round ${r + 1} ${b}: ${JSON.stringify(res)}`)
    }
  }
  console.log(JSON.stringify({ builds, results }))
  const f = (x: number, d = 2): string => Number.isFinite(x) ? x.toFixed(d) : '–'
  const row = (b: 'A' | 'B'): string => {
    const rs = results[b]
    return `| ${b} (${builds[b].replace(ROOT + '/', '')}) | ${rs.map(x => f(x.cpuMsPerMsgPerPeer)).join(', ')} | **${f(median(rs.map(x => x.cpuMsPerMsgPerPeer)))}** | ${f(median(rs.map(x => x.cpuMsPerMsgPerPeer + x.idleMsPerS * x.windowS / x.messages)))} | ${f(median(rs.map(x => x.writesPerMsgPerPeer)), 1)} | ${f(median(rs.map(x => x.idleMsPerS)), 1)} ms/s | ${f(median(rs.map(x => x.idleWritesPerS ?? NaN)), 1)} /s | ${f(median(rs.map(x => x.meshMean)), 1)} | ${rs.map(x => `${x.delivered}/${x.expected}`).join(', ')} | ${rs.map(x => x.load.map(l => l.toFixed(0)).join('→')).join(', ')} |`
  }
  const what = MODE === 'peer'
    ? `${peers} proofswarm peers as \`proofswarm join\` runs them (Peer.start with the default services: every protocol topic, metrics, DHT,
peer keeper, connection trimmer, graylist check, control API), the first the others' bootstrap peer; meshes form, then ${messages}`
    : `${peers} libp2p hosts as the node builds them (node/p2p/host.ts: TCP on 127.0.0.1, noise, yamux,
gossipsub with the node's settings and scoring, a GossipRouter decoding JSON on the topic); each dials 3 others, meshes form, then ${messages}`
  const body = `Machine: ${machine()}. One process runs ${what}
messages (~190 bytes) are published at ${rate}/s from rotating publishers, and the window closes 1 s after every peer has every message.
CPU per message per peer = (process CPU time over the window − its idle rate × the window) / messages / peers; write syscalls likewise
(/proc/self/io). Rounds alternate between the builds. Run: \`${MODE === 'peer' ? 'GOSSIP_BENCH_MODE=peer ' : ''}npm run bench -- gossip-cpu ${peers} ${messages} ${rounds}\`${process.env.GOSSIP_BENCH_B_DIST != null ? ' with `GOSSIP_BENCH_B_DIST=<the other build\'s dist/>`' : ''}.

| build | CPU per message per peer, each round (ms) | median | all CPU in the window per message per peer, idle included (median) | write syscalls per message per peer | idle CPU per peer (median) | idle write syscalls per peer (median) | mesh peers (mean) | delivered | 1-min load (start→end, each round) |
|---|---|---|---|---|---|---|---|---|---|
${row('A')}
${row('B')}

B / A, CPU per message per peer (medians): ${f(median(results.B.map(x => x.cpuMsPerMsgPerPeer)) / median(results.A.map(x => x.cpuMsPerMsgPerPeer)))}.`
  if (process.env.SCALE_BENCH_NO_WRITE !== '1') writeSection(MODE === 'peer' ? 'Gossip CPU per message, whole peers (side by side)' : 'Gossip CPU per message (side by side)', body)
  else console.log(body)
}
