import type { Command } from 'commander'
import { ControlClient } from '../../control/client.js'
import { CliError } from '../errors.js'
import { addDataDir, addJson, dataDirOf, printJson } from '../options.js'

// Operator tools: publish on / read from a gossip topic through a running peer.
export function register (program: Command): void {
  const g = program.command('gossip').description('publish and read gossip messages through a running peer')
  const pub = g.command('publish <topic> <json>').description('publish a JSON object on a topic (e.g. announce)')
  addDataDir(pub, 'peer'); addJson(pub)
  pub.action(async (topic: string, data: string, o: { dataDir?: string, json?: boolean }) => {
    try {
      const c = await ControlClient.fromDataDir(dataDirOf(o, 'peer'))
      const r = await c.post<{ recipients: number }>('/v1/gossip/publish', { topic, data })
      if (o.json === true) printJson(r)
      else process.stdout.write(`published to ${r.recipients} peer(s)\n`)
    } catch (err) { throw new CliError((err as Error).message) }
  })
  const ls = g.command('messages').description('messages this peer received').option('--topic <topic>', 'only this topic (short name)')
  addDataDir(ls, 'peer'); addJson(ls)
  ls.action(async (o: { dataDir?: string, json?: boolean, topic?: string }) => {
    try {
      const c = await ControlClient.fromDataDir(dataDirOf(o, 'peer'))
      const q = o.topic != null ? `?topic=${encodeURIComponent(o.topic)}` : ''
      const msgs = await c.get<Array<{ topic: string, from: string, receivedAt: number, msg: unknown }>>('/v1/gossip/messages' + q)
      if (o.json === true) { printJson(msgs); return }
      for (const m of msgs) process.stdout.write(`${new Date(m.receivedAt).toISOString()} ${m.topic} from ${m.from}: ${JSON.stringify(m.msg)}\n`)
    } catch (err) { throw new CliError((err as Error).message) }
  })
}
