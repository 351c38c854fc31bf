import { ControlClient } from '../node/control/client.js'
import type { PeerStatus } from '../node/peer.js'
import { alive, readState, removeState } from './state-file.js'

// `devnet status` and `devnet down`: a running devnet as its devnet.json
// describes it, asked for its state or stopped.

export async function status (dir: string, json: boolean): Promise<void> {
  const s = readState(dir)
  if (s == null || !alive(s.pid)) {
    if (json) process.stdout.write(JSON.stringify({ running: false, dir }) + '\n')
    else process.stdout.write(`no devnet running in ${dir}\n`)
    return
  }
  const peers = await Promise.all(s.processes.filter(p => p.dataDir != null).map(async p => {
    try {
      const st = await (await ControlClient.fromDataDir(p.dataDir!)).get<PeerStatus>('/v1/status')
      return { name: p.name, up: true, peerId: st.peerId, roles: st.roles, connected: st.connectedPeers.length }
    } catch { return { name: p.name, up: false } }
  }))
  const out = { running: true, dir, pid: s.pid, startedAt: s.startedAt, chain: s.chainUrl, dashboard: s.dashboardUrl, taskId: s.taskId, phase: s.phase, peers }
  if (json) { process.stdout.write(JSON.stringify(out, null, 2) + '\n'); return }
  process.stdout.write(`devnet running since ${s.startedAt} (pid ${s.pid})\nchain: ${s.chainUrl ?? '-'}\ndashboard: ${s.dashboardUrl ?? '-'}\ntask: ${s.taskId ?? '-'} ${s.phase ?? ''}\n`)
  for (const p of peers) process.stdout.write(`  ${p.name.padEnd(24)} ${p.up ? `up, roles ${(p as { roles: string[] }).roles.join(',')}, ${(p as { connected: number }).connected} peers` : 'DOWN'}\n`)
}

export async function down (dir: string): Promise<void> {
  const s = readState(dir)
  if (s == null) { process.stdout.write(`no devnet in ${dir}\n`); return }
  if (alive(s.pid)) {
    process.kill(s.pid, 'SIGTERM')
    const deadline = Date.now() + 20_000
    while (alive(s.pid) && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 200))
  }
  // whatever the launcher did not stop (it was killed, say)
  for (const p of s.processes) if (alive(p.pid)) { try { process.kill(p.pid, 'SIGTERM') } catch {} }
  removeState(dir)
  process.stdout.write('devnet stopped\n')
}
