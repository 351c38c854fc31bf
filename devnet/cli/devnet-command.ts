import { spawn } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Command } from 'commander'

// `proofswarm devnet [status|down] [options]`: the devnet launcher (what
// `npm run devnet` runs), reachable from the installed CLI too.
const LAUNCHER = join(dirname(fileURLToPath(import.meta.url)), '..', 'cli.js')

export function register (program: Command): void {
  program.command('devnet')
    .description('run a devnet on this machine (chain, bootstrap, peers, a task with a dispute), or "devnet status" / "devnet down"; see "proofswarm devnet --help"')
    .helpOption(false)
    .allowUnknownOption()
    .argument('[args...]', 'passed to the devnet launcher')
    .action(async (args: string[]) => {
      const child = spawn(process.execPath, [LAUNCHER, ...args], { stdio: 'inherit' })
      // the launcher handles Ctrl-C itself (it stops every process it started)
      process.on('SIGINT', () => {})
      process.on('SIGTERM', () => { child.kill('SIGTERM') })
      const code = await new Promise<number | null>(resolve => child.on('exit', code => resolve(code)))
      process.exitCode = code ?? 1
    })
}
