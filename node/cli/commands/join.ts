import type { Command } from 'commander'
import { DEFAULT_NETWORK, parseRoles } from '../../config.js'
import { CliError } from '../errors.js'
import { addChainOptions, chainInit, addDataDir, addJson, addLogLevel, collect, dataDirOf, parseIntOption } from '../options.js'

export function register (program: Command): void {
  const cmd = program.command('join')
    .description('join a swarm through one or more bootstrap peers')
    .requiredOption('--bootstrap <multiaddr>', 'bootstrap peer multiaddr with /p2p/<id> (repeatable)', collect)
    .option('--roles <roles>', 'comma-separated roles: submitter,solver,verifier,whistleblower (stored; default: the stored roles)')
    .option('--listen <multiaddr>', 'address to listen on (repeatable)', collect)
    .option('--network <name>', 'swarm name used in gossip topics', DEFAULT_NETWORK)
    .option('--control-port <port>', 'control API port on 127.0.0.1 (default: a free port, recorded in the data dir)', parseIntOption('--control-port', 0, 65535))
    .option('--bootstrap-retries <n>', 'dial attempts (exponential backoff) before giving up', parseIntOption('--bootstrap-retries', 1, 100), 5)
  addChainOptions(cmd)
  addDataDir(cmd, 'peer'); addJson(cmd); addLogLevel(cmd)
  cmd.action(async (o: { bootstrap: string[], roles?: string, listen?: string[], network: string, controlPort?: number, bootstrapRetries: number, dataDir?: string, json?: boolean, logLevel: string, chain?: string, account?: string, stake?: string, datasetDir?: string }) => {
    let roles
    try { roles = o.roles == null ? undefined : parseRoles(o.roles) } catch (err) { throw new CliError((err as Error).message, 2) }
    // loaded on use: libp2p and friends cost ~0.5 s of startup for every other command
    const { runPeer } = await import('../run-peer.js')
    await runPeer({
      kind: 'peer',
      dataDir: dataDirOf(o, 'peer'),
      listen: o.listen ?? ['/ip4/127.0.0.1/tcp/0'],
      bootstrap: o.bootstrap,
      roles,
      network: o.network,
      controlPort: o.controlPort,
      bootstrapAttempts: o.bootstrapRetries,
      logLevel: o.logLevel,
      json: o.json,
      chain: chainInit(o)
    })
  })
}
