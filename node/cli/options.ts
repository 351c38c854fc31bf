import { Option, type Command } from 'commander'
import { resolveDataDir } from '../config.js'

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
