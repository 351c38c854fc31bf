import type { Command } from 'commander'
import { DEFAULT_NETWORK } from '../../config.js'
import { addChainOptions, chainInit, checkChainUrl, addDataDir, addJson, addLogLevel, collect, dataDirOf, parseIntOption } from '../options.js'

export function register (program: Command): void {
  const cmd = program.command('bootstrap')
    .description('run a bootstrap peer and print its full dialable multiaddrs')
    .option('--listen <multiaddr>', 'address to listen on (repeatable; /ip4/0.0.0.0/tcp/4001 to serve a public host)', collect)
    .option('--network <name>', 'swarm name used in gossip topics', DEFAULT_NETWORK)
    .option('--control-port <port>', 'control API port on 127.0.0.1 (default: a free port, recorded in the data dir)', parseIntOption('--control-port', 0, 65535))
    .option('--bootstrap <multiaddr>', 'other bootstrap peers to connect to (repeatable)', collect)
    .option('--private-addrs', 'keep loopback and private addresses in DHT records: for a LAN or one-machine swarm (default: only when every address of this peer is private)')
    .option('--no-private-addrs', 'drop loopback and private addresses from DHT records: for a public swarm')
  addChainOptions(cmd)
  // without --account the bootstrap peer does not use the chain, but --chain still goes into the join command it prints
  cmd.addHelpText('after', '\n--chain without --account: the chain URL the printed join command names (the bootstrap peer itself takes no tasks).')
  addDataDir(cmd, 'bootstrap'); addJson(cmd); addLogLevel(cmd)
  cmd.action(async (
    o: {
      listen?: string[]
      network: string
      controlPort?: number
      bootstrap?: string[]
      dataDir?: string
      json?: boolean
      logLevel: string
      chain?: string
      account?: string
      stake?: string
      datasetDir?: string
      privateAddrs?: boolean
    }
  ) => {
    if (o.account == null && o.chain != null) checkChainUrl(o.chain)
    // loaded on use: libp2p and friends cost ~0.5 s of startup for every other command
    const { runPeer } = await import('../run-peer.js')
    await runPeer({
      kind: 'bootstrap',
      dataDir: dataDirOf(o, 'bootstrap'),
      listen: o.listen ?? ['/ip4/127.0.0.1/tcp/4001'],
      privateNetwork: o.privateAddrs,
      hintChainUrl: o.chain,
      bootstrap: o.bootstrap ?? [],
      network: o.network,
      controlPort: o.controlPort,
      logLevel: o.logLevel,
      json: o.json,
      chain: chainInit(o.account == null ? { ...o, chain: undefined } : o)
    })
  })
}
