import { setFlagsFromString } from 'node:v8'

/**
 * Called by the CLI entry (main.ts) for the commands that run a peer, before
 * any other module is loaded: a long-running peer keeps V8's young generation
 * at its initial 1 MiB semi-spaces instead of letting it grow to 2 × 16 MiB.
 * A peer allocates little that lives long (gossip RPCs, stream buffers); the
 * grown young generation was 25–30 MiB of RSS per peer for no measurable CPU
 * saving (docs/operators-guide.md, "Memory of a peer"). The growth factor is
 * read each time V8 resizes the young generation, so setting it at run time
 * takes effect; --max-semi-space-size would need a re-exec, since V8 reads it
 * once at start. Training runs in child processes, which keep V8's default.
 * An explicit --max-semi-space-size / --semi-space-growth-factor (argv or
 * NODE_OPTIONS) or PROOFSWARM_YOUNG_GEN=default leaves V8's default.
 */
export function limitYoungGeneration (): boolean {
  const explicit = [...process.execArgv, process.env.NODE_OPTIONS ?? '']
    .some(a => /--(max-semi-space-size|min-semi-space-size|semi-space-growth-factor)/.test(a))
  if (explicit || process.env.PROOFSWARM_YOUNG_GEN === 'default') return false
  setFlagsFromString('--semi-space-growth-factor=1')
  return true
}
