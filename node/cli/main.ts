#!/usr/bin/env node
import '../polyfill.js'
import { Command, CommanderError } from 'commander'
import { installProcessPolicy } from '../process-policy.js'
import { commandModules as nodeCommands } from './commands/index.js'
import { CliError } from './errors.js'
import { tunePeerHeap } from './peer-heap.js'

// before anything can fail: a stray rejection is logged, an uncaught exception exits 1 (process-policy.ts)
installProcessPolicy('proofswarm')

const program = new Command()
program
  .name('proofswarm')
  .description('Peer-to-peer node for verifiable, decentralized ML training')
  .version('0.1.0')
  .showHelpAfterError('(run with --help for usage)')
  .exitOverride()

// The node's commands and the devnet's (the only import of devnet/ outside it).
const commandModules: typeof nodeCommands = {
  ...nodeCommands,
  chain: async () => await import('../../devnet/cli/chain-command.js'),
  dashboard: async () => await import('../../devnet/cli/dashboard-command.js'),
  devnet: async () => await import('../../devnet/cli/devnet-command.js')
}

// Load only the command being run; everything for help and suggestions.
const name = process.argv.slice(2).find(a => !a.startsWith('-'))
// long-running peers: V8 heap sized for a daemon that streams checkpoints (peer-heap.ts), set before libp2p loads
if (name === 'join' || name === 'bootstrap') tunePeerHeap()
const wanted = name != null && name in commandModules ? [name] : Object.keys(commandModules)
for (const n of wanted) (await commandModules[n]()).register(program)

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
