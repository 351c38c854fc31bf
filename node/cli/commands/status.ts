import type { Command } from 'commander'
import { ControlClient } from '../../control/client.js'
import type { PeerStatus } from '../../peer.js'
import type { ChainStatus, Failure } from '../../roles/observability.js'
import type { JobsView } from './tasks.js'

interface Health { chain: ChainStatus, failures: Failure[] }
import { CliError } from '../errors.js'
import { addDataDir, addJson, dataDirOf, printJson } from '../options.js'

const mib = (b: number): number => Math.round(b / 2 ** 20)

export function register (program: Command): void {
  const cmd = program.command('status')
    .description('ask a running peer for its id, addresses, connections, DHT and gossip state, roles and uptime')
  addDataDir(cmd, 'peer'); addJson(cmd)
  cmd.action(async (o: { dataDir?: string, json?: boolean }) => {
    let s: PeerStatus
    let health: Health | undefined
    let jobs: JobsView | undefined
    try {
      const client = await ControlClient.fromDataDir(dataDirOf(o, 'peer'))
      s = await client.get<PeerStatus>('/v1/status')
      // a peer without role services has no chain link to report
      health = await client.get<Health>('/v1/health').catch(() => undefined)
      jobs = await client.get<JobsView>('/v1/jobs').catch(() => undefined)
    } catch (err) {
      throw new CliError((err as Error).message)
    }
    if (o.json === true) { printJson({ ...s, ...(health ?? {}), ...(jobs != null ? { jobs } : {}) }); return }
    const c = health?.chain
    const lines = [
      `peer id:        ${s.peerId} (${s.kind}, network "${s.network}")`,
      `uptime:         ${s.uptimeSeconds} s`,
      `roles:          ${s.roles.length > 0 ? s.roles.join(', ') : '(none)'}`,
      'listening on:', ...s.listenAddrs.map(a => '  ' + a),
      `connected peers: ${s.connectedPeers.length}`, ...s.connectedPeers.map(p => `  ${p.peerId}  ${p.addrs.join(' ')}`),
      `DHT routing table: ${s.dhtRoutingTableSize} peers`,
      'gossip topics:', ...s.topics.map(t => `  ${t.topic}  mesh=${t.meshPeers} subscribers=${t.subscribers}`),
      `gossip messages: ${s.gossip.accepted} accepted, ${s.gossip.rejected} rejected`,
      `private addresses: ${s.privateAddrs.kept ? 'kept' : 'dropped'} (${s.privateAddrs.reason})`,
      ...(s.privateAddrs.warning != null ? [`WARNING: ${s.privateAddrs.warning}`] : []),
      c == null || c.state === 'none'
        ? 'chain:          none (no --account: this peer takes no tasks)'
        : `chain:          ${c.url ?? '-'}  ${c.state.toUpperCase()} since ${c.since}${c.head != null ? `, head #${c.head}` : ''}${c.state !== 'connected' && c.lastError != null ? ` (${c.lastError})` : ''}`,
      ...(c?.account != null ? [`account:        ${c.account}`] : []),
      ...(jobs != null ? [`jobs:           ${jobs.running.length}/${jobs.limits.maxJobs} running, ${jobs.queued.length} queued, ~${mib(jobs.memoryInUse)}/${mib(jobs.limits.maxMemory)} MiB${jobs.queued.length > 0 ? ` (waiting: ${jobs.queued.map(j => `${j.kind} task ${j.taskId}`).join(', ')})` : ''}`] : []),
      `unhandled rejections: ${s.unhandledRejections.count}${s.unhandledRejections.last != null ? ` (last at ${s.unhandledRejections.last.at}: ${s.unhandledRejections.last.message})` : ''}`,
      `recent failures: ${health == null || health.failures.length === 0 ? 'none' : ''}`,
      ...(health?.failures ?? []).map(f => `  ${f.at}  ${f.kind}${f.taskId != null ? ` task ${f.taskId}` : ''}: ${f.message}`)
    ]
    process.stdout.write(lines.join('\n') + '\n')
  })
}
