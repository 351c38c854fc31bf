import { Option, type Command } from 'commander'
import { resolveDataDir } from '../config.js'
import { CliError } from './errors.js'

export function collect (value: string, previous: string[] = []): string[] {
  return [...previous, value]
}

export function addDataDir (cmd: Command, defaultName = 'default'): Command {
  return cmd.addOption(new Option('--data-dir <dir>', `peer data directory (default: ~/.proofswarm/${defaultName})`))
}

export function addJson (cmd: Command): Command {
  return cmd.option('--json', 'print machine-readable JSON on stdout')
}

export function addLogLevel (cmd: Command): Command {
  return cmd.addOption(new Option('--log-level <level>', 'log level').choices(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'))
}

export function dataDirOf (opts: { dataDir?: string }, defaultName = 'default'): string {
  return resolveDataDir(opts.dataDir, defaultName)
}

export function printJson (value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + '\n')
}

export function parseIntOption (name: string, min = 0, max = Number.MAX_SAFE_INTEGER) {
  return (v: string): number => {
    const n = Number(v)
    if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${name} must be an integer in [${min}, ${max}], got "${v}"`)
    return n
  }
}

export function addChainOptions (cmd: Command): Command {
  return cmd
    .option('--chain <ws-url>', 'chain JSON-RPC endpoint (the devnet chain: ws://127.0.0.1:9944); without it the peer joins the swarm but takes no tasks')
    .option('--account <suri>', 'chain account: a secret URI (//Peer1 on the devnet) or a mnemonic')
    .option('--stake <units>', 'stake to reserve when registering, in whole units (default: the chain minimum)')
    .option('--dataset-dir <dir>', 'local IDX dataset directory (default /usr/share/datasets/fashion-mnist)')
}

export function chainInit (o: { chain?: string, account?: string, stake?: string, datasetDir?: string }): { chainUrl?: string, account?: string, stake?: bigint, datasetDir?: string } {
  if ((o.chain == null) !== (o.account == null)) throw new CliError('--chain and --account go together', 2)
  let stake: bigint | undefined
  if (o.stake != null) {
    if (!/^\d+$/.test(o.stake)) throw new CliError(`--stake must be a whole number of units, got "${o.stake}"`, 2)
    stake = BigInt(o.stake) * 10n ** 12n
  }
  return { chainUrl: o.chain, account: o.account, stake, datasetDir: o.datasetDir }
}
