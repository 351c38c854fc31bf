import { toHex } from '../../protocols/commit/merkle.js'
import { stateRoot } from '../../protocols/commit/state.js'
import { encodeExactness, forcedState, proveExactness } from '../../protocols/dispute/forced-exact.js'
import { STATE_PSEUDO_KERNEL } from '../../protocols/trace/trace.js'
import type { TraceFile } from '../engine/trace-file.js'

// The solver's exactness proof for a revealed forced error, from its own
// trace of the forced step (traced with the forced error, which is applied
// after the step, so its @state entry holds the honest post-state) and its
// committed per-step state roots (protocols/dispute/forced-exact.ts).

/** The proof bytes, or why this run's committed post-state is not the forced error of that trace. */
export function exactnessFromTrace (trace: TraceFile, stateRoots: readonly string[]): { bytes: Uint8Array } | { error: string } {
  const i = trace.entries.length - 1
  if (trace.entries[i]?.kernel !== STATE_PSEUDO_KERNEL) return { error: 'the trace has no @state entry' }
  const honest = trace.values[i].inputs
  const forced = forcedState(honest)
  const committed = stateRoots[trace.step + 1]?.replace(/^0x/, '')
  if (committed !== toHex(stateRoot(forced, trace.step + 1))) return { error: `the committed post-state of step ${trace.step} is not the honest one with the forced element` }
  return { bytes: encodeExactness(proveExactness(honest, forced, trace.step, stateRoots)) }
}
