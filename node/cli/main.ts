#!/usr/bin/env node
import '../polyfill.js'
import { Command, CommanderError } from 'commander'
import { commands } from './commands/index.js'
import { CliError } from './errors.js'

const program = new Command()
program
  .name('proofswarm')
  .description('Peer-to-peer node for verifiable, decentralized ML training')
  .version('0.1.0')
  .showHelpAfterError('(run with --help for usage)')
  .exitOverride()

for (const register of commands) register(program)

try {
  await program.parseAsync(process.argv)
} catch (err) {
  if (err instanceof CommanderError) {
    process.exitCode = err.exitCode
  } else if (err instanceof CliError) {
    process.stderr.write(`error: ${err.message}\n`)
    process.exitCode = err.exitCode
  } else {
    process.stderr.write(`error: ${(err as Error)?.stack ?? String(err)}\n`)
    process.exitCode = 1
  }
}
