import type { Command } from 'commander'
import { ControlClient } from '../../control/client.js'
import { CliError } from '../errors.js'
import { addDataDir, addJson, dataDirOf, parseIntOption, printJson } from '../options.js'

// Operator tools: announce and look up provider records in the swarm's DHT.
export function register (program: Command): void {
  const d = program.command('dht').description('DHT provider records through a running peer')
  const provide = d.command('provide <cid>').description('announce that this peer provides a CID')
  addDataDir(provide, 'peer'); addJson(provide)
  provide.action(async (cid: string, o: { dataDir?: string, json?: boolean }) => {
    try {
      const c = await ControlClient.fromDataDir(dataDirOf(o, 'peer'))
      const r = await c.post('/v1/dht/provide', { cid })
      if (o.json === true) printJson(r)
      else process.stdout.write(`providing ${cid}\n`)
    } catch (err) { throw new CliError((err as Error).message) }
  })
  const find = d.command('find-providers <cid>').description('find peers providing a CID')
    .option('--timeout <ms>', 'how long to search', parseIntOption('--timeout', 100, 60_000), 10_000)
  addDataDir(find, 'peer'); addJson(find)
  find.action(async (cid: string, o: { dataDir?: string, json?: boolean, timeout: number }) => {
    try {
      const c = await ControlClient.fromDataDir(dataDirOf(o, 'peer'))
      const r = await c.get<{ providers: Array<{ peerId: string, addrs: string[] }>, lookup?: { ms: number, queried: number, hops?: number } }>(`/v1/dht/providers?cid=${encodeURIComponent(cid)}&timeoutMs=${o.timeout}`)
      if (o.json === true) { printJson(r); return }
      if (r.providers.length === 0) process.stdout.write('no providers found\n')
      for (const p of r.providers) process.stdout.write(`${p.peerId} ${p.addrs.join(' ')}\n`)
      if (r.lookup != null) process.stdout.write(`(${r.lookup.ms} ms, ${r.lookup.queried} peers queried${r.lookup.hops != null ? `, first provider ${r.lookup.hops} hop(s) away` : ''})\n`)
    } catch (err) { throw new CliError((err as Error).message) }
  })
}
