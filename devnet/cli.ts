#!/usr/bin/env node
import '../node/polyfill.js'
import { Command } from 'commander'
import { mkdir, rm } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { ControlClient } from '../node/control/client.js'
import type { PeerStatus } from '../node/peer.js'
import { spawnCli, stopChild, type ChildHandle } from './processes.js'
import { startDashboard, type Dashboard } from './dashboard/server.js'

// `npm run devnet`: a whole swarm on one machine, every peer a separate
// process with its own data dir and ports on 127.0.0.1.

const DEFAULT_ROLES = ['submitter', 'solver', 'solver', 'verifier', 'verifier', 'whistleblower']

const program = new Command()
  .name('devnet')
  .description('run a proofswarm devnet on this machine')
  .option('--peers <n>', 'number of peers besides the bootstrap peer', v => Number(v), 6)
  .option('--dir <dir>', 'devnet directory (data dirs and logs)', '.devnet')
  .option('--keep', 'keep the data dirs from a previous run instead of starting fresh')
  .option('--exit-after <seconds>', 'stop the devnet after this many seconds (CI smoke runs)', v => Number(v))
  .option('--json', 'print status as JSON lines')
  .option('--dashboard-port <port>', 'port of the dashboard on 127.0.0.1 (0 picks a free one)', v => Number(v), 0)
  .parse()

const o = program.opts<{ peers: number, dir: string, keep?: boolean, exitAfter?: number, json?: boolean, dashboardPort: number }>()
const dir = resolve(o.dir)
if (!Number.isInteger(o.peers) || o.peers < 1 || o.peers > 64) {
  process.stderr.write(`--peers must be an integer in [1, 64], got ${o.peers}\n`)
  process.exit(2)
}
if (!Number.isInteger(o.dashboardPort) || o.dashboardPort < 0 || o.dashboardPort > 65535) {
  process.stderr.write(`--dashboard-port must be an integer in [0, 65535], got ${o.dashboardPort}\n`)
  process.exit(2)
}
if (o.keep !== true) await rm(dir, { recursive: true, force: true })
const logDir = join(dir, 'logs')
await mkdir(logDir, { recursive: true })

const say = (msg: string, data: Record<string, unknown> = {}): void => {
  if (o.json === true) process.stdout.write(JSON.stringify({ time: new Date().toISOString(), msg, ...data }) + '\n')
  else process.stdout.write(`[devnet] ${msg}\n`)
}

const children: ChildHandle[] = []
let dashboard: Dashboard | undefined
let stopping = false
async function shutdown (code: number): Promise<never> {
  if (!stopping) {
    stopping = true
    say('stopping every process…')
    await dashboard?.close().catch(() => {})
    await Promise.all(children.map(async c => await stopChild(c)))
    say(o.keep === true ? `stopped; data kept in ${dir}` : `stopped; data dirs in ${dir} (use --keep to reuse them)`)
  }
  process.exit(code)
}
process.on('SIGINT', () => { void shutdown(0) })
process.on('SIGTERM', () => { void shutdown(0) })

try {
  const boot = spawnCli('bootstrap', ['bootstrap', '--json', '--listen', '/ip4/127.0.0.1/tcp/0', '--data-dir', join(dir, 'bootstrap')], logDir)
  children.push(boot)
  const ready = await boot.ready
  const bootAddr: string = ready.multiaddrs[0]
  say(`bootstrap peer ready: ${bootAddr}`, { bootstrap: bootAddr })

  const peers = Array.from({ length: o.peers }, (_, i) => {
    const role = DEFAULT_ROLES[i % DEFAULT_ROLES.length]
    const name = `peer${i + 1}-${role}`
    const h = spawnCli(name, ['join', '--json', '--bootstrap', bootAddr, '--roles', role, '--listen', '/ip4/127.0.0.1/tcp/0', '--data-dir', join(dir, name)], logDir)
    children.push(h)
    return { name, role, h, dataDir: join(dir, name) }
  })
  for (const p of peers) {
    const r = await p.h.ready
    say(`${p.name} ready: ${r.peerId}`, { peer: p.name, peerId: r.peerId, role: p.role })
  }

  // --- dashboard (devnet/dashboard): pass chainUrl once the devnet runs the chain ---
  dashboard = await startDashboard({
    peers: [{ name: 'bootstrap', dataDir: join(dir, 'bootstrap'), role: 'bootstrap' }, ...peers.map(p => ({ name: p.name, dataDir: p.dataDir, role: p.role }))],
    port: o.dashboardPort
  })
  say(`dashboard: ${dashboard.url}`, { dashboard: dashboard.url })
  // --- end dashboard ---

  // progress: wait until every peer sees every other one
  const deadline = Date.now() + 30_000
  let full = false
  while (!full && Date.now() < deadline) {
    const statuses = await Promise.all(peers.map(async p => await (await ControlClient.fromDataDir(p.dataDir)).get<PeerStatus>('/v1/status')))
    const min = Math.min(...statuses.map(s => s.connectedPeers.length))
    full = min >= o.peers
    if (!full) await new Promise(resolve => setTimeout(resolve, 500))
    else say(`swarm formed: every peer connected to all ${o.peers} others`, { connected: min })
  }
  if (!full) say('warning: the swarm did not fully connect within 30 s; see the logs in ' + logDir)
  say(`logs: ${logDir}; status of a peer: node dist/node/cli/main.js status --data-dir ${peers[0].dataDir}`)
  say('training tasks, verification, disputes and the dashboard arrive with the next milestones (see README "Status"); Ctrl-C stops the devnet')
  if (o.exitAfter != null) setTimeout(() => { void shutdown(0) }, o.exitAfter * 1000)
  void Promise.race(children.map(async c => await c.exited.then(code => ({ c, code })))).then(({ c, code }) => {
    if (!stopping) { say(`${c.name} exited unexpectedly (code ${code}); see ${c.logFile}`); void shutdown(1) }
  })
} catch (err) {
  say(`error: ${(err as Error).message}`)
  await shutdown(1)
}
