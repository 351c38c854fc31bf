import type { Command } from 'commander'
import { register as bootstrap } from './bootstrap.js'
import { register as join } from './join.js'
import { register as status } from './status.js'
import { register as gossip } from './gossip.js'
import { register as dht } from './dht.js'
import { register as chain } from './chain.js'
import { register as task } from './task.js'
import { register as train } from './train.js'
import { register as replay } from './replay.js'
import { register as evaluate } from './evaluate.js'
import { register as roles } from './roles.js'
import { register as trace } from './trace.js'
import { register as shards } from './shards.js'

// One module per command; each registers itself on the root program.
export type Register = (program: Command) => void

export const commands: Register[] = [
  bootstrap,
  join,
  status,
  gossip,
  dht,
  chain,
  task,
  train,
  replay,
  evaluate,
  roles,
  trace,
  shards,
]
