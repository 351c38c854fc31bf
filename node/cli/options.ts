import { Option, type Command } from 'commander'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { DEFAULT_CHAIN_URL, resolveDataDir } from '../config.js'
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

/** The one integer-option rule: decimal digits only, within [min, max]; the message names the option and the range. */
export function parseInteger (v: string, name: string, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const n = /^\s*\d+\s*$/.test(v) ? Number(v) : NaN
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new CliError(`${name} must be an integer in [${min}, ${max}], got "${v}"`)
  return n
}

/** parseInteger as a commander argument parser. */
export function parseIntOption (name: string, min = 0, max = Number.MAX_SAFE_INTEGER) {
  return (v: string): number => parseInteger(v, name, min, max)
}

export function addChainOptions (cmd: Command): Command {
  return cmd
    .option('--chain <ws-url>', 'chain JSON-RPC endpoint (default with --account: ws://127.0.0.1:9944, the dev chain)')
    .option('--account <suri|keyfile>', 'chain account: a secret URI (//Peer1 on the devnet), a mnemonic, or a file holding one (mode 0600); without it the peer joins the swarm but takes no tasks')
    .option('--stake <units>', 'stake to reserve when registering, in whole units (default: the chain minimum)')
    .option('--dataset-dir <dir>', 'local IDX dataset directory (default /usr/share/datasets/fashion-mnist)')
}

export function chainInit (
  o: { chain?: string, account?: string, stake?: string, datasetDir?: string }
): { chainUrl?: string, account?: string, stake?: bigint, datasetDir?: string } {
  if (o.chain != null && o.account == null) throw new CliError('--chain needs --account (the chain account that signs for this peer)', 2)
  const account = o.account != null ? readAccount(o.account) : undefined
  const chain = account != null ? (o.chain ?? DEFAULT_CHAIN_URL) : undefined
  if (chain != null) checkChainUrl(chain)
  let stake: bigint | undefined
  if (o.stake != null) {
    if (!/^\d+$/.test(o.stake)) throw new CliError(`--stake must be a whole number of units, got "${o.stake}"`, 2)
    stake = BigInt(o.stake) * 10n ** 12n
  }
  return { chainUrl: chain, account, stake, datasetDir: o.datasetDir }
}

export function checkChainUrl (chain: string): void {
  let ok = false
  try { const u = new URL(chain); ok = (u.protocol === 'ws:' || u.protocol === 'wss:') && u.hostname !== '' } catch {}
  if (!ok) throw new CliError(`--chain ${chain} is not a WebSocket URL: give ws://host:port (the dev chain prints it), e.g. ${DEFAULT_CHAIN_URL}`, 2)
}

/** A SURI/mnemonic given inline, or read from a key file (which should not be readable by others). */
export function readAccount (v: string): string {
  if (v.startsWith('//') || v.includes(' ')) return v
  // something shaped like a path that is not there is a mistyped key file, not a secret
  if (!existsSync(v)) {
    if (v.startsWith('/') || v.startsWith('./') || v.startsWith('~') || v.startsWith('../') || /\.(key|txt|json|secret)$/.test(v)) throw new CliError(`--account ${v}: no such key file (give a secret URI such as //Peer1, a mnemonic, or the path of a file holding one)`, 2)
    return v
  }
  const st = statSync(v)
  if (!st.isFile()) throw new CliError(`--account ${v} is not a file`, 2)
  if ((st.mode & 0o077) !== 0) process.stderr.write(`warning: the key file ${v} is readable by other users (chmod 600 it)\n`)
  const secret = readFileSync(v, 'utf8').trim()
  if (secret === '') throw new CliError(`the key file ${v} is empty`, 2)
  return secret
}
