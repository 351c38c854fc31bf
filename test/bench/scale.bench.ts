// Swarm scale bench: N peers (default 100) + 1 bootstrap peer on this machine,
// joining over time; then gossip load from several publishers, DHT provider
// lookups, and 10 % churn. The peers that churn, and the bootstrap peer, are
// separate processes started through the CLI (a crash is a real SIGKILL; they
// also give the one-peer-per-process figures); the others run
// SCALE_BENCH_PEERS_PER_PROCESS (default 10; 1 = all through the CLI) to a
// process (scale-host.ts: the same node code, each peer with its own identity,
// libp2p host, port, datastore and control API), so 100 fit on 2 cores.
//   npm run bench -- scale [peers=100] [stagger-ms=400]
// Figures come from what an operator sees: the control API (/v1/status:
// per-topic mesh sizes; /v1/gossip/messages: receive times; /v1/dht/providers:
// lookup time and hops) and /proc (RSS, CPU time). SCALE_BENCH_NO_WRITE=1
// leaves docs/ alone. Every process started is killed on exit or failure.
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { CID } from 'multiformats/cid'
import * as raw from 'multiformats/codecs/raw'
import { sha256 } from 'multiformats/hashes/sha2'
import { machine, pct, writeSection } from './report.js'
import { PeerHost, SwarmProc, type SwarmPeer, tempDirToRemove, cpuMs, memAvailableMiB, meshMins, nodeArgs, pool, rssMiB, rssSplitMiB, sleep, syscalls } from './scale-swarm.js'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const CLI = join(root, 'dist/node/cli/main.js')
const N = Number(process.argv[2] ?? 100)
const STAGGER_MS = Number(process.argv[3] ?? 400)
const D_LO = 4 // gossipsub D_lo (libp2p default, node/peer.ts MESH_D_LO)
const PUBLISHERS = Math.min(5, N)
const MESSAGES = Number(process.env.SCALE_BENCH_MESSAGES ?? 60)
// a protocol-like rate (tasks, proofs, verdicts); 2 cores cannot carry much more for 100 peers
const PUBLISH_EVERY_MS = Number(process.env.SCALE_BENCH_PUBLISH_EVERY_MS ?? 500)
const PROVIDERS = Math.min(5, N)
const LOOKUPS = 20
const CHURN = Math.max(1, Math.round(N / 10))
const MESH_WAIT_MS = 180_000
const SETTLE_MS = 60_000
const IDLE_S = 10
const MAX_STARTING = 6
// how long the gossip CPU window may stay open after the last publish, waiting for the swarm to go back to idle
const GOSSIP_DRAIN_MAX_S = Number(process.env.SCALE_BENCH_GOSSIP_DRAIN_S ?? 120)
const PEERS_PER_PROCESS = Number(process.env.SCALE_BENCH_PEERS_PER_PROCESS ?? 10)
if (!Number.isInteger(PEERS_PER_PROCESS) || PEERS_PER_PROCESS < 1) { console.error('SCALE_BENCH_PEERS_PER_PROCESS: a positive integer'); process.exit(2) }
if (!Number.isInteger(N) || N < 5 || N > 200) { console.error('peers: an integer in 5..200'); process.exit(2) }

// never crowd out the other users of a shared machine: ~95 MiB a peer, and a margin
const needMiB = (N + 1) * 130 + 2048
if (memAvailableMiB() < needMiB) { console.error(`need ~${needMiB} MiB available for ${N} peers, have ${memAvailableMiB().toFixed(0)}`); process.exit(2) }

const dir = tempDirToRemove(mkdtempSync(join(tmpdir(), 'ps-scale-bench-')))
const t0 = performance.now()
const at = () => ((performance.now() - t0) / 1000).toFixed(1) + ' s'
const log = (msg: string): void => console.error(`[scale ${at()}] ${msg}`)
const load = [loadavg()[0]]
// the figures, as JSON (printed, and rendered by report())
const res: Record<string, any> = { peers: N, staggerMs: STAGGER_MS, peersPerProcess: PEERS_PER_PROCESS }

let boot: SwarmProc | undefined
const peers: SwarmPeer[] = []
const hosts: PeerHost[] = []
let nextDir = 0
// Side by side in one swarm: with SCALE_BENCH_B_CLI (another build's dist/node/cli/main.js) and/or
// SCALE_BENCH_B_NODE_ARGS, every second one-peer process runs as "B" (the rest, the bootstrap peer and
// the shared processes as A), so both see the same swarm, load and moment; their idle memory is
// reported apart.
const B_CLI = process.env.SCALE_BENCH_B_CLI
const B_NODE_ARGS = process.env.SCALE_BENCH_B_NODE_ARGS
const SIDE_BY_SIDE = B_CLI != null || B_NODE_ARGS != null
let ownStarted = 0
const startPeer = (dataDir = join(dir, `p${nextDir++}`)): SwarmProc => {
  const b = SIDE_BY_SIDE && ownStarted++ % 2 === 1
  const args = ['join', '--json', '--bootstrap', res.bootAddr, '--listen', '/ip4/127.0.0.1/tcp/0', '--bootstrap-retries', '8']
  return b ? new SwarmProc(B_CLI ?? CLI, args, dataDir, B_NODE_ARGS != null ? nodeArgs(B_NODE_ARGS) : undefined, 'B') : new SwarmProc(CLI, args, dataDir)
}
// the peers that will leave in the churn test: chosen now, so that they get processes of their own
const churnIdx = [...new Set(Array.from({ length: CHURN }, (_, i) => (i * 37 + 5) % N))]
const hostedCount = PEERS_PER_PROCESS === 1 ? 0 : N - churnIdx.length
const hostCount = Math.ceil(hostedCount / PEERS_PER_PROCESS)
let nextHosted = 0
// round robin over the hosts: they grow together, so that no process carries all the joining at once
const startAny = (i: number): SwarmPeer => hostCount === 0 || churnIdx.includes(i) ? startPeer() : hosts[nextHosted++ % hostCount].start(join(dir, `p${nextDir++}`), res.bootAddr)
const starting = (ps: SwarmPeer[]): number => ps.filter(p => p.api == null && p.alive).length
const own = (ps: SwarmPeer[]): SwarmPeer[] => ps.filter(p => p.share === 1)
const shared = (ps: SwarmPeer[]): SwarmPeer[] => ps.filter(p => p.share > 1)
// a peer that failed to start is counted and left out (its error is printed), rather than losing the run
const dropFailed = (ps: SwarmPeer[]): number => {
  const failed = ps.filter(p => p.api == null)
  for (const p of failed) { ps.splice(ps.indexOf(p), 1); p.ready.catch((err: Error) => log(`start failed: ${err.message.slice(0, 600)}`)) }
  return failed.length
}
const meshStats = (mins: number[]): { below: number, min: number, unreadable: number } => ({
  below: mins.filter(m => !(m >= D_LO)).length, min: Math.min(...mins.filter(Number.isFinite)), unreadable: mins.filter(Number.isNaN).length
})

try {
  boot = new SwarmProc(CLI, ['bootstrap', '--json', '--listen', '/ip4/127.0.0.1/tcp/0'], join(dir, 'boot'))
  res.bootAddr = (await boot.ready).multiaddrs[0]
  for (let h = 0; h < hostCount; h++) hosts.push(await PeerHost.spawn())
  res.hostBaselineRssMiB = hosts.length > 0 ? mean(await Promise.all(hosts.map(async h => (await h.hello).rssMiB))) : NaN
  res.hosts = hosts.length
  res.ownProcess = N - hostedCount

  // ---- joining over time ----
  log(`starting ${N} peers, ${STAGGER_MS} ms apart`)
  // at most MAX_STARTING peers starting at once: each needs ~0.4 s of CPU to load libp2p, and on a
  // loaded machine 100 processes starting together starve the bootstrap peer (dial timeouts)
  // on a machine too loaded to start all N in time, stop joining at the deadline and say so
  const joinDeadline = performance.now() + Number(process.env.SCALE_BENCH_JOIN_DEADLINE_S ?? 3600) * 1000
  for (let i = 0; i < N && performance.now() < joinDeadline; i++) {
    peers.push(startAny(i))
    const t = performance.now()
    for (let w = 0; w < 600 && starting(peers) >= MAX_STARTING; w++) await sleep(100)
    await sleep(Math.max(0, STAGGER_MS - (performance.now() - t)))
    if (i % 10 === 9) log(`${i + 1} peers started`)
  }
  const lastStart = performance.now()
  await Promise.allSettled(peers.map(p => p.ready))
  res.startFailures = dropFailed(peers)
  res.joined = peers.length
  await sleep(500)
  log(`all peers ready (${res.startFailures} failed to start)`)

  // ---- mesh formation: every peer with ≥ D_lo mesh peers on each topic it subscribes to ----
  const all = [boot, ...peers]
  let mins: number[] = []
  let polls = 0
  while (performance.now() - lastStart < MESH_WAIT_MS) {
    mins = await meshMins(all)
    polls++
    if (mins.every(m => m >= D_LO)) break
    await sleep(1000)
  }
  res.mesh = {
    ...meshStats(mins),
    afterLastStartMs: Math.round(performance.now() - lastStart),
    afterFirstStartMs: Math.round(performance.now() - peers[0].t0),
    topics: peers[0].status?.topics.map((t: { topic: string }) => t.topic)
  }
  // each peer's own milestone: process start → its meshes on every topic reached D_lo
  const ownMesh = peers.map(p => {
    const m = Object.values(p.status?.milestones.meshMs ?? {}) as number[]; return m.length === (p.status?.topics.length ?? -1)
      ? Math.max(...m) - p.offsetMs
      : NaN
  })
  const joining = ownMesh.slice(D_LO) // the first peers wait for D_lo others to exist at all
  res.mesh.perPeerMs = { p50: pct(joining, 50), p95: pct(joining, 95), max: Math.max(...joining) }
  res.startup = {
    readyMs: pct(peers.map(p => (p.status?.milestones.readyMs ?? NaN) - p.offsetMs), 50),
    firstConnectionMs: pct(peers.map(p => (p.status?.milestones.firstConnectionMs ?? NaN) - p.offsetMs), 50)
  }
  const connections = (): Record<string, number> => {
    const n = peers.map(p => p.status?.connectedPeers.length ?? NaN)
    const trimmed = peers.map(p => p.status?.connectionsTrimmed ?? NaN)
    return { p50: pct(n, 50), max: Math.max(...n.filter(Number.isFinite)), bootstrap: boot?.status?.connectedPeers.length ?? NaN, trimmedP50: pct(trimmed, 50) }
  }
  res.connections = connections()
  log(`mesh: ${JSON.stringify(res.mesh)} after ${polls} polls`)

  // ---- idle: CPU over IDLE_S seconds, RSS ----
  await sleep(5000)
  const idle0 = peers.map(p => cpuMs(p.pid))
  const idleIo0 = peers.map(p => syscalls(p.pid))
  await sleep(IDLE_S * 1000)
  // a shared process's CPU time and RSS divided among its peers
  const idleCpu = peers.map((p, i) => (cpuMs(p.pid) - idle0[i]) / IDLE_S / p.share)
  const idleWrites = peers.map((p, i) => (syscalls(p.pid).writes - idleIo0[i].writes) / IDLE_S / p.share)
  const idleRss = peers.map(p => rssMiB(p.pid) / p.share)
  const byProc = (ps: SwarmPeer[], xs: number[]): number[] => ps.map(p => xs[peers.indexOf(p)])
  res.idle = {
    cpuMsPerS: { mean: mean(idleCpu), max: Math.max(...idleCpu) },
    // write syscalls (frames sent: each yamux frame is its own write) per second and peer
    writesPerS: mean(idleWrites),
    rssMiB: { mean: mean(idleRss), p95: pct(idleRss, 95), max: Math.max(...idleRss) },
    bootstrapRssMiB: rssMiB(boot.pid),
    own: stats(byProc(own(peers), idleRss), byProc(own(peers), idleCpu)),
    shared: stats(byProc(shared(peers), idleRss), byProc(shared(peers), idleCpu)),
    hostRssMiB: hosts.map(h => rssMiB(h.pid))
  }
  const split = own(peers).map(p => rssSplitMiB(p.pid))
  res.idle.own.anonMiB = mean(split.map(x => x.anon))
  res.idle.own.fileMiB = mean(split.map(x => x.file))
  // what one more peer costs in a shared process: its RSS less the process's own baseline, per peer
  res.idle.shared.marginalRssMiB = mean(hosts.map(h => (rssMiB(h.pid) - res.hostBaselineRssMiB) / h.peers.length))
  // connections once the trimmer has had its grace period and a round (node/p2p/conn-trim.ts: 30 s, 10 s)
  res.idle.meshBelow = meshStats(await meshMins(all)).below
  res.idle.connections = connections()
  // where a one-peer process's memory is (its /v1/status, read by meshMins just now): V8 heap, outside it
  const memoryMiB = (ps: SwarmPeer[]): Record<string, number> => {
    const mem = ps.map(p => p.status?.memory as Record<string, number> | undefined).filter(m => m != null)
    return Object.fromEntries(['heapTotal', 'heapPhysical', 'heapUsed', 'v8Malloced', 'external', 'arrayBuffers'].map(k => [k, mean(mem.map(m => m[k] / 2 ** 20))]))
  }
  res.idle.own.memoryMiB = memoryMiB(own(peers))
  if (SIDE_BY_SIDE) {
    res.idle.sideBySide = Object.fromEntries(['A', 'B'].map(v => {
      const ps = own(peers).filter(p => (p as SwarmProc).variant === v)
      const rss = ps.map(p => rssMiB(p.pid))
      const sp = ps.map(p => rssSplitMiB(p.pid))
      const cpu = ps.map(p => idleCpu[peers.indexOf(p)])
      const writes = ps.map(p => idleWrites[peers.indexOf(p)])
      return [v, {
        n: ps.length, rssMiB: { mean: mean(rss), max: Math.max(...rss) }, anonMiB: mean(sp.map(x => x.anon)), memoryMiB: memoryMiB(ps),
        cpuMsPerS: mean(cpu), writesPerS: mean(writes)
      }]
    }))
    res.idle.sideBySide.cli = { A: CLI, B: B_CLI ?? CLI, bNodeArgs: B_NODE_ARGS ?? '' }
  }
  // mesh peers per topic, over every peer and topic: each is a copy of every message the peer receives and forwards
  const meshSizes = peers.flatMap(p => (p.status?.topics ?? []).map((t: { meshPeers: number }) => t.meshPeers))
  res.idle.meshPeers = { p50: pct(meshSizes, 50), mean: mean(meshSizes), max: Math.max(...meshSizes) }
  log(`idle: ${JSON.stringify(res.idle)}`)

  // ---- gossip load: MESSAGES from PUBLISHERS peers, publish → delivery at every other peer ----
  res.gossip = await gossipRound(peers, MESSAGES, 'load', true)
  log(`gossip: ${JSON.stringify(res.gossip)}`)

  // ---- DHT: PROVIDERS peers each provide a CID; LOOKUPS lookups from other peers (one at a time) ----
  const cids = []
  for (let i = 0; i < PROVIDERS; i++) {
    const cid = CID.createV1(raw.code, await sha256.digest(randomBytes(32))).toString()
    const p = peers[(i * 13 + 3) % peers.length]
    const q0 = performance.now()
    // a provide or lookup that times out (an overloaded swarm) is counted as failed, not fatal
    const ok = await p.api('POST', '/v1/dht/provide', { cid }, 30_000).then(() => true, () => false)
    cids.push({ cid, provider: p, provideMs: ok ? performance.now() - q0 : NaN })
  }
  const lookups = []
  for (let i = 0; i < LOOKUPS; i++) {
    const { cid, provider } = cids[i % cids.length]
    const asker = peers[(i * 17 + 11) % peers.length] === provider ? peers[(i * 17 + 12) % peers.length] : peers[(i * 17 + 11) % peers.length]
    const q0 = performance.now()
    const r = await asker.api('GET', `/v1/dht/providers?cid=${cid}&max=1&timeoutMs=10000`, undefined, 15_000).catch(() => ({ providers: [] }))
    lookups.push({ wallMs: performance.now() - q0, found: r.providers.some((x: { peerId: string }) => x.peerId === provider.status?.peerId), ...r.lookup })
  }
  const found = lookups.filter(l => l.found)
  res.dht = {
    provideMs: { p50: pct(cids.map(c => c.provideMs).filter(Number.isFinite), 50), max: Math.max(...cids.map(c => c.provideMs).filter(Number.isFinite)) },
    provideFailures: cids.filter(c => Number.isNaN(c.provideMs)).length,
    lookups: LOOKUPS,
    found: found.length,
    firstProviderMs: {
      p50: pct(found.map(l => l.firstProviderMs), 50), p95: pct(found.map(l => l.firstProviderMs), 95), max: Math.max(...found.map(l => l.firstProviderMs))
    },
    hops: { p50: pct(found.map(l => l.hops), 50), max: Math.max(...found.map(l => l.hops)) },
    queried: { p50: pct(lookups.map(l => l.queried), 50), max: Math.max(...lookups.map(l => l.queried)) }
  }
  log(`dht: ${JSON.stringify(res.dht)}`)

  // ---- churn: CHURN peers leave (half crash, half stop cleanly); half of them come back
  //      with the same identity, the other half are replaced by new peers ----
  const leaving = own(peers).filter(p => churnIdx.some(i => dirOf(p) === `p${i}`)).slice(0, CHURN)
  log(`churn: ${leaving.length} peers leave and are restarted or replaced`)
  const churnT0 = performance.now()
  for (let i = 0; i < leaving.length; i++) {
    const p = leaving[i]
    await p.stop(i % 2 === 0 ? 'SIGKILL' : 'SIGTERM')
    const back = i % 2 === 0 ? startPeer(p.dataDir) : startPeer()
    peers[peers.indexOf(p)] = back
    await sleep(STAGGER_MS)
  }
  await Promise.allSettled(peers.map(p => p.ready))
  res.churnStartFailures = dropFailed(peers)
  await sleep(500)
  const afterChurnStart = performance.now()
  let settledMs = NaN
  let churnMins: number[] = []
  while (performance.now() - afterChurnStart < SETTLE_MS) {
    churnMins = await meshMins([boot, ...peers])
    if (Number.isNaN(settledMs) && churnMins.every(m => m >= D_LO)) settledMs = performance.now() - churnT0
    if (!Number.isNaN(settledMs) && performance.now() - churnT0 > settledMs + 10_000) break // stays settled 10 s
    await sleep(1000)
  }
  res.churn = { left: leaving.length, settledMs, ...meshStats(churnMins), afterMs: Math.round(performance.now() - churnT0) }
  res.churn.gossip = await gossipRound(peers, 30, 'churn', false)
  log(`churn: ${JSON.stringify(res.churn)}`)
} finally {
  const all = [boot, ...own(peers)].filter((p): p is SwarmPeer => p !== undefined)
  await Promise.all([...all.map(async p => await p.stop('SIGTERM')), ...hosts.map(async h => await h.stop())])
  rmSync(dir, { recursive: true, force: true })
}
load.push(loadavg()[0])
res.load = load.map(x => Math.round(x * 10) / 10)
res.minutes = Math.round((performance.now() - t0) / 6000) / 10

const goals: Array<[string, number, number, boolean]> = [
  ['gossip p95 < 100 ms', res.gossip.latencyMs.p95, 100, res.gossip.latencyMs.p95 < 100],
  ['idle RSS per peer ≤ 100 MiB (max)', res.idle.rssMiB.max, 100, res.idle.rssMiB.max <= 100],
  ...(res.idle.own.rssMiB.n > 0 && res.idle.shared.rssMiB.n > 0 ? [['… one peer per process (max)', res.idle.own.rssMiB.max, 100, res.idle.own.rssMiB.max <= 100] as [string, number, number, boolean]] : []),
  ['peers below D_lo after churn = 0', res.churn.below, 0, res.churn.below === 0]
]
console.log(JSON.stringify(res))
for (const [name, v, goal, ok] of goals) console.log(`goal ${ok ? 'MET   ' : 'MISSED'} ${name}: ${f(v)} (${goal === 0 ? `goal ${goal}` : `ratio ${(v / goal).toFixed(2)}`})`)

if (process.env.SCALE_BENCH_NO_WRITE !== '1') writeSection('Swarm scale', report(res, goals))

async function gossipRound (peers: SwarmPeer[], messages: number, tag: string, measure: boolean): Promise<Record<string, any>> {
  const since = Date.now()
  const sent = new Map<string, { sentAt: number, from: SwarmPeer }>()
  const cpu0 = peers.map(p => cpuMs(p.pid))
  const io0 = peers.map(p => syscalls(p.pid))
  const g0 = performance.now()
  const pending: Array<Promise<unknown>> = []
  let rssLoad: number[] = []
  const publishMs: number[] = []
  for (let r = 0; r < messages; r++) {
    const from = peers[(r % PUBLISHERS) * Math.floor(peers.length / PUBLISHERS)]
    const nonce = `${tag}${r}`
    const sentAt = Date.now()
    sent.set(nonce, { sentAt, from })
    pending.push(from.api('POST', '/v1/gossip/publish', { topic: 'announce', data: JSON.stringify({ nonce, sentAt }) }).then(() => publishMs.push(Date.now() - sentAt), () => {}))
    if (measure && r === Math.floor(messages / 2)) rssLoad = peers.map(p => rssMiB(p.pid) / p.share)
    await sleep(PUBLISH_EVERY_MS)
  }
  await Promise.all(pending)
  await sleep(2000)
  // On a loaded machine the swarm is still receiving and forwarding when the last publish
  // returns: the CPU window stays open until the peers' CPU falls back near idle (bounded),
  // so that the per-message figures count the whole work, not what fitted in the window.
  if (measure) {
    const swarmCpu = (): number => peers.reduce((s, p) => s + cpuMs(p.pid) / p.share, 0)
    const idleRate = res.idle.cpuMsPerS.mean * peers.length
    const drainEnd = performance.now() + GOSSIP_DRAIN_MAX_S * 1000
    let before = swarmCpu()
    while (performance.now() < drainEnd) {
      const t = performance.now()
      await sleep(1000)
      const now = swarmCpu()
      const rate = (now - before) / ((performance.now() - t) / 1000)
      before = now
      if (rate <= idleRate * 1.5) break
    }
  }
  const seconds = (performance.now() - g0) / 1000
  const cpu = peers.map((p, i) => (cpuMs(p.pid) - cpu0[i]) / seconds / p.share)
  const writes = peers.map((p, i) => (syscalls(p.pid).writes - io0[i].writes) / seconds / p.share)
  const lat: number[] = []
  const latOwn: number[] = []
  const latShared: number[] = []
  const latFirst: number[] = []
  const latLast: number[] = []
  await pool(peers, 25, async p => {
    const msgs = await p.api('GET', `/v1/gossip/messages?topic=announce&since=${since}`).catch(() => [])
    for (const m of msgs) {
      const s = sent.get(m.msg?.nonce)
      if (s != null && m.msg.sentAt === s.sentAt && s.from !== p) {
        lat.push(m.receivedAt - s.sentAt)
        ;(p.share > 1 ? latShared : latOwn).push(m.receivedAt - s.sentAt)
        ;(Number(String(m.msg.nonce).slice(tag.length)) < messages / 2 ? latFirst : latLast).push(m.receivedAt - s.sentAt)
      }
    }
  })
  const out: Record<string, any> = {
    messages, publishers: PUBLISHERS, delivered: lat.length, expected: messages * (peers.length - 1),
    latencyMs: { p50: pct(lat, 50), p95: pct(lat, 95), p99: pct(lat, 99), max: Math.max(...lat) },
    // the publish call's own answer time: a publisher slow to answer delays every delivery
    publishCallMs: { p50: pct(publishMs, 50), max: Math.max(...publishMs) },
    // p50 / p95 at receivers with a process of their own and sharing one; for the first and second half of the messages (a backlog grows)
    latencyByReceiverMs: { own: [pct(latOwn, 50), pct(latOwn, 95)], shared: [pct(latShared, 50), pct(latShared, 95)] },
    latencyByHalfMs: { first: [pct(latFirst, 50), pct(latFirst, 95)], last: [pct(latLast, 50), pct(latLast, 95)] }
  }
  if (measure) {
    out.cpuMsPerS = { mean: mean(cpu), max: Math.max(...cpu) }
    // what receiving, checking and forwarding one message costs a peer, idle CPU taken out: barely load-dependent
    out.cpuMsPerMsgPerPeer = (mean(cpu) - res.idle.cpuMsPerS.mean) * seconds / messages
    // frames sent per message and peer (write syscalls, idle rate taken out): what the settings change, whatever the load
    out.writesPerMsgPerPeer = (mean(writes) - res.idle.writesPerS) * seconds / messages
    // the same, for peers with a process of their own and for peers sharing one (side by side, same messages)
    const perMsg = (ps: SwarmPeer[], idle: number): number => (mean(ps.map(p => cpu[peers.indexOf(p)])) - idle) * seconds / messages
    out.cpuMsPerMsgPerPeerOwn = perMsg(own(peers), res.idle.own.cpuMsPerS.mean)
    out.cpuMsPerMsgPerPeerShared = perMsg(shared(peers), res.idle.shared.cpuMsPerS.mean)
    out.rssMiB = { mean: mean(rssLoad), max: Math.max(...rssLoad) }
    if (SIDE_BY_SIDE) {
      // one-peer processes of each build, same swarm and messages: CPU and write syscalls per message, each less its own idle
      out.sideBySide = Object.fromEntries(['A', 'B'].map(v => {
        const ps = own(peers).filter(p => (p as SwarmProc).variant === v)
        const w = (mean(ps.map(p => writes[peers.indexOf(p)])) - res.idle.sideBySide[v].writesPerS) * seconds / messages
        return [v, { n: ps.length, cpuMsPerMsgPerPeer: perMsg(ps, res.idle.sideBySide[v].cpuMsPerS), writesPerMsgPerPeer: w }]
      }))
    }
  }
  return out
}

function dirOf (p: SwarmPeer): string { return p.dataDir.slice(p.dataDir.lastIndexOf('/') + 1) }
function stats (rss: number[], cpu: number[]): Record<string, any> {
  return { rssMiB: { n: rss.length, mean: mean(rss), max: Math.max(...rss) }, cpuMsPerS: { mean: mean(cpu), max: Math.max(...cpu) } }
}
function mean (xs: number[]): number { const v = xs.filter(Number.isFinite); return v.reduce((a, b) => a + b, 0) / v.length }
function f (x: number): string { return Number.isFinite(x) ? (Math.abs(x) < 10 && !Number.isInteger(x) ? x.toFixed(1) : x.toFixed(0)) : 'n/a' }

function report (r: Record<string, any>, goals: Array<[string, number, number, boolean]>): string {
  return `
Machine: ${machine()}; shared with other engineers' builds and tests while it ran (1-min load average
${r.load[0]} at the start, ${r.load[1]} at the end, on 2 cores), so times include queueing for CPU. ${r.joined} peers${r.joined < r.peers ? ` (of ${r.peers} asked: the join deadline passed)` : ''} + 1 bootstrap peer,
${r.hosts > 0 ? `${r.peers - r.ownProcess} of them ${r.peersPerProcess} to a process (${r.hosts} processes running the same node code as \`proofswarm join\`, test/bench/scale-host.ts, each peer with its own identity, libp2p host, TCP port, LevelDB and control API), the other ${r.ownProcess} (those that churn) and the bootstrap peer each a process of its own started with the CLI` : 'each a separate process started with the CLI (`proofswarm join`, one peer per process)'},
joining ${r.staggerMs} ms apart on 127.0.0.1, at most ${MAX_STARTING} starting at a time. Run: \`npm run bench -- scale\` (${r.minutes} min).${r.startFailures + r.churnStartFailures > 0 ? ` **${r.startFailures + r.churnStartFailures} peers failed to start** (left out).` : ''} Figures from the peers' control API and /proc only.

| goal | result | goal | result / goal | |
|---|---|---|---|---|
${goals.map(([name, v, goal, ok]) => `| ${name} | ${f(v)} | ${goal} | ${goal === 0 ? '' : (v / goal).toFixed(2)} | ${ok ? 'met' : 'MISSED'} |`).join('\n')}

| measure | result |
|---|---|
| mesh formation: last peer started → every peer ≥ D_lo = ${D_LO} mesh peers on each of its topics (${(r.mesh.topics ?? []).length}) | ${r.mesh.below === 0 ? `${f(r.mesh.afterLastStartMs)} ms` : `not reached: ${r.mesh.below} peers below after ${f(r.mesh.afterLastStartMs)} ms`} |
| … first peer started → all meshes | ${f(r.mesh.afterFirstStartMs)} ms |
| … each peer's own start → its meshes on every topic (p50 / p95 / max, the ${r.peers - D_LO} peers that joined with ≥ D_lo others up) | ${f(r.mesh.perPeerMs.p50)} / ${f(r.mesh.perPeerMs.p95)} / ${f(r.mesh.perPeerMs.max)} ms |
| process start → ready / first connection (p50) | ${f(r.startup.readyMs)} / ${f(r.startup.firstConnectionMs)} ms |
| connections per peer (p50 / max) / of the bootstrap peer, at mesh formation | ${f(r.connections.p50)} / ${f(r.connections.max)} / ${f(r.connections.bootstrap)} |
| … after the idle measurement (p50 / max) / of the bootstrap peer; connections trimmed per peer (p50) | ${f(r.idle.connections?.p50)} / ${f(r.idle.connections?.max)} / ${f(r.idle.connections?.bootstrap)}; ${f(r.idle.connections?.trimmedP50)} |
| gossip mesh peers per topic, every peer and topic (p50 / mean / max), after the idle measurement | ${f(r.idle.meshPeers?.p50)} / ${f(r.idle.meshPeers?.mean)} / ${f(r.idle.meshPeers?.max)} |
| gossip publish → delivery p50 / p95 / p99 / max (${r.gossip.messages} messages from ${r.gossip.publishers} publishers, ${f(1000 / PUBLISH_EVERY_MS)}/s) | ${f(r.gossip.latencyMs.p50)} / ${f(r.gossip.latencyMs.p95)} / ${f(r.gossip.latencyMs.p99)} / ${f(r.gossip.latencyMs.max)} ms (${r.gossip.delivered}/${r.gossip.expected} delivered) |
| DHT provide (p50 / max) | ${f(r.dht.provideMs.p50)} / ${f(r.dht.provideMs.max)} ms${r.dht.provideFailures > 0 ? ` (${r.dht.provideFailures} of ${PROVIDERS} timed out)` : ''} |
| DHT provider lookup → first provider (p50 / p95 / max; ${r.dht.found}/${r.dht.lookups} found) | ${f(r.dht.firstProviderMs.p50)} / ${f(r.dht.firstProviderMs.p95)} / ${f(r.dht.firstProviderMs.max)} ms |
| … hops to the peer that named the provider (p50 / max); peers queried (p50 / max) | ${f(r.dht.hops.p50)} / ${f(r.dht.hops.max)}; ${f(r.dht.queried.p50)} / ${f(r.dht.queried.max)} |
| RSS per peer idle (mean / p95 / max; a shared process's RSS divided by its peers); bootstrap peer | ${f(r.idle.rssMiB.mean)} / ${f(r.idle.rssMiB.p95)} / ${f(r.idle.rssMiB.max)} MiB; ${f(r.idle.bootstrapRssMiB)} MiB |${r.hosts > 0
  ? `
| … one peer per process (${r.idle.own.rssMiB.n} peers; mean / max) | ${f(r.idle.own.rssMiB.mean)} / ${f(r.idle.own.rssMiB.max)} MiB |
| … ${r.peersPerProcess} peers per process (${r.idle.shared.rssMiB.n} peers; mean / max) | ${f(r.idle.shared.rssMiB.mean)} / ${f(r.idle.shared.rssMiB.max)} MiB |
| … of which the process baseline (node, libp2p and the node code loaded, no peer), and each peer's share above it | ${f(r.hostBaselineRssMiB)} MiB a process; ${f(r.idle.shared.marginalRssMiB)} MiB a peer |`
  : ''}
| … one-peer processes' RSS: anonymous / file pages (mean; the file pages are mostly the node binary, shared by every node process) | ${f(r.idle.own.anonMiB)} / ${f(r.idle.own.fileMiB)} MiB |
| … one-peer processes' memory (mean): V8 heap committed / resident / used; V8 malloc'd; external (of which ArrayBuffers) | ${f(r.idle.own.memoryMiB?.heapTotal)} / ${f(r.idle.own.memoryMiB?.heapPhysical)} / ${f(r.idle.own.memoryMiB?.heapUsed)}; ${f(r.idle.own.memoryMiB?.v8Malloced)}; ${f(r.idle.own.memoryMiB?.external)} (${f(r.idle.own.memoryMiB?.arrayBuffers)}) MiB |
${r.idle.sideBySide != null
  ? ['A', 'B'].map(v => {
      const x = r.idle.sideBySide[v]
      return `| … side by side, ${v} (${x.n} one-peer processes${v === 'B' ? `; ${r.idle.sideBySide.cli.B === r.idle.sideBySide.cli.A ? 'this build' : 'another build'}${r.idle.sideBySide.cli.bNodeArgs !== '' ? `, node ${r.idle.sideBySide.cli.bNodeArgs}` : ''}` : ''}): RSS mean / max; anonymous; V8 heap committed / used | ${f(x.rssMiB.mean)} / ${f(x.rssMiB.max)} MiB; ${f(x.anonMiB)} MiB; ${f(x.memoryMiB.heapTotal)} / ${f(x.memoryMiB.heapUsed)} MiB |\n`
    }).join('')
  : ''}| RSS per peer under gossip load (mean / max) | ${f(r.gossip.rssMiB.mean)} / ${f(r.gossip.rssMiB.max)} MiB |
| CPU per peer idle (mean / max) | ${f(r.idle.cpuMsPerS.mean)} / ${f(r.idle.cpuMsPerS.max)} ms/s |${r.hosts > 0
  ? `
| … one peer per process / ${r.peersPerProcess} per process (mean) | ${f(r.idle.own.cpuMsPerS.mean)} / ${f(r.idle.shared.cpuMsPerS.mean)} ms/s |`
  : ''}
| write syscalls (frames sent) per peer idle; per message per peer under gossip load (less idle) | ${f(r.idle.writesPerS)} /s; ${f(r.gossip.writesPerMsgPerPeer)} |
| CPU per peer under gossip load (mean / max) | ${f(r.gossip.cpuMsPerS.mean)} / ${f(r.gossip.cpuMsPerS.max)} ms/s |
| … CPU per message per peer (load less idle) | ${r.gossip.cpuMsPerMsgPerPeer.toFixed(2)} ms |${r.hosts > 0
  ? `
| … one peer per process / ${r.peersPerProcess} per process | ${f(r.gossip.cpuMsPerMsgPerPeerOwn)} / ${f(r.gossip.cpuMsPerMsgPerPeerShared)} ms |`
  : ''}
| churn: ${r.churn.left} peers leave (half SIGKILL, half SIGTERM); half restart with their identity, half replaced by new peers | every peer ≥ D_lo again ${Number.isFinite(r.churn.settledMs) ? `${f(r.churn.settledMs)} ms after the first left` : 'not within the wait'} |
| … peers below D_lo on some topic after churn settled (${f(r.churn.afterMs / 1000)} s) | ${r.churn.below} (smallest mesh: ${r.churn.min}) |
| … gossip after churn p50 / p95 (${r.churn.gossip.messages} messages) | ${f(r.churn.gossip.latencyMs.p50)} / ${f(r.churn.gossip.latencyMs.p95)} ms (${r.churn.gossip.delivered}/${r.churn.gossip.expected} delivered) |

CPU = user + system time of each peer process (/proc/<pid>/stat; a shared process's divided by its peers), idle over ${IDLE_S} s once meshes formed, under load over the
gossip test (${MESSAGES} messages at ${f(1000 / PUBLISH_EVERY_MS)}/s, then until the swarm's CPU is back near idle, at most ${GOSSIP_DRAIN_MAX_S} s). RSS = VmRSS, idle after the mesh wait, under load in the middle of the gossip test.
Hops (from the lookup's own events, \`GET /v1/dht/providers\` → \`lookup\`): 1 = a peer in the asker's routing table named the provider.
A provider record is stored on the K = 20 peers closest to the CID, so in a swarm of ≤ 20 peers every peer holds it and lookups end locally (0 hops).
`
}
