import type { Command } from 'commander'
import { ControlClient } from '../../control/client.js'
import type { PeerStatus } from '../../peer.js'
import { CliError } from '../errors.js'
import { addDataDir, addJson, dataDirOf, printJson } from '../options.js'

export function register (program: Command): void {
  const cmd = program.command('status')
    .description("ask a running peer for its id, addresses, connections, DHT and gossip state, roles and uptime")
  addDataDir(cmd, 'peer'); addJson(cmd)
  cmd.action(async (o: { dataDir?: string, json?: boolean }) => {
    let s: PeerStatus
    try {
      const client = await ControlClient.fromDataDir(dataDirOf(o, 'peer'))
      s = await client.get<PeerStatus>('/v1/status')
    } catch (err) {
      throw new CliError((err as Error).message)
    }
    if (o.json === true) { printJson(s); return }
    const lines = [
      `peer id:        ${s.peerId} (${s.kind}, network "${s.network}")`,
      `uptime:         ${s.uptimeSeconds} s`,
      `roles:          ${s.roles.length > 0 ? s.roles.join(', ') : '(none)'}`,
      'listening on:', ...s.listenAddrs.map(a => '  ' + a),
      `connected peers: ${s.connectedPeers.length}`, ...s.connectedPeers.map(p => `  ${p.peerId}  ${p.addrs.join(' ')}`),
      `DHT routing table: ${s.dhtRoutingTableSize} peers`,
      'gossip topics:', ...s.topics.map(t => `  ${t.topic}  mesh=${t.meshPeers} subscribers=${t.subscribers}`),
      `gossip messages: ${s.gossip.accepted} accepted, ${s.gossip.rejected} rejected`
    ]
    process.stdout.write(lines.join('\n') + '\n')
  })
}
