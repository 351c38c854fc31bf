import { basename } from 'node:path'
import type { Command } from 'commander'
import { readControlFiles } from '../../node/control/files.js'
import { CliError } from '../../node/cli/errors.js'
import { addDataDir, addJson, dataDirOf, parseIntOption } from '../../node/cli/options.js'

// One peer's own view of the swarm in a browser: the devnet dashboard served
// for a single peer (its roles, actors and their statecharts, traces, and the
// chain when --chain is given).
export function register (program: Command): void {
  const cmd = program.command('dashboard')
    .description('serve a live web dashboard of a running peer on 127.0.0.1 (roles, actors with their statecharts, traces; chain tasks, disputes and balances with --chain)')
    .option('--port <port>', 'port on 127.0.0.1 (0 = any free port)', parseIntOption('--port', 0, 65535), 0)
    .option('--chain <ws-url>', 'also show the chain: tasks, disputes, balances and stakes (e.g. ws://127.0.0.1:9944)')
    .option('--name <name>', 'display name of the peer (default: the data dir\'s name)')
  addDataDir(cmd, 'peer'); addJson(cmd)
  cmd.action(async (o: { port: number, chain?: string, name?: string, dataDir?: string, json?: boolean }) => {
    const dataDir = dataDirOf(o, 'peer')
    try { await readControlFiles(dataDir) } catch (err) { throw new CliError((err as Error).message) }
    if (o.chain != null && !/^wss?:\/\/./.test(o.chain)) throw new CliError(`--chain must be a ws:// or wss:// URL, got "${o.chain}"`, 2)
    const { startDashboard } = await import('../dashboard/server.js')
    let dash
    try {
      dash = await startDashboard({ peers: [{ name: o.name ?? basename(dataDir), dataDir }], chainUrl: o.chain, port: o.port })
    } catch (err) { throw new CliError((err as Error).message) }
    process.stdout.write(o.json === true ? JSON.stringify({ url: dash.url, dataDir }) + '\n' : `dashboard: ${dash.url} (Ctrl-C stops it)\n`)
    await new Promise<void>(resolve => {
      const stop = (): void => { dash.close().then(resolve, resolve) }
      process.once('SIGINT', stop)
      process.once('SIGTERM', stop)
    })
  })
}
