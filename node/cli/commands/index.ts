import type { Command } from 'commander'

// One module per command of the node; each registers itself on the root
// program. The devnet's commands (chain, dashboard, devnet) live in devnet/cli
// and are composed by the entry point (main.ts), the one place allowed to
// import devnet/. Modules are loaded on demand: a peer process (`join`) must not pay for loading
// TensorFlow.js or polkadot.js at start-up (time and ~40 MB of RSS each).
export type Register = (program: Command) => void

export const commandModules: Record<string, () => Promise<{ register: Register }>> = {
  bootstrap: async () => await import('./bootstrap.js'),
  join: async () => await import('./join.js'),
  status: async () => await import('./status.js'),
  gossip: async () => await import('./gossip.js'),
  dht: async () => await import('./dht.js'),
  task: async () => await import('./task.js'),
  train: async () => await import('./train.js'),
  replay: async () => await import('./replay.js'),
  evaluate: async () => await import('./evaluate.js'),
  roles: async () => await import('./roles.js'),
  trace: async () => await import('./trace.js'),
  shards: async () => await import('./shards.js'),
  submit: async () => await import('./submit.js'),
  tasks: async () => await import('./tasks.js')
}
