import { toHex } from '../../protocols/commit/merkle.js'
import { stateRoot } from '../../protocols/commit/state.js'
import { encodeExactness, forcedState, proveExactness } from '../../protocols/dispute/forced-exact.js'
import { STATE_PSEUDO_KERNEL } from '../../protocols/tape/tape.js'
import type { TapeFile } from '../engine/tape-file.js'

// The solver's exactness proof for a revealed forced error, from its own
// tape of the forced step (taped with the forced error, which is applied
// after the step, so its @state entry holds the honest post-state) and its
// committed per-step state roots (protocols/dispute/forced-exact.ts).

/** The proof bytes, or why this run's committed post-state is not the forced error of that tape. */
export function exactnessFromTape (tape: TapeFile, stateRoots: readonly string[]): { bytes: Uint8Array } | { error: string } {
  const i = tape.entries.length - 1
  if (tape.entries[i]?.kernel !== STATE_PSEUDO_KERNEL) return { error: 'the tape has no @state entry' }
  const honest = tape.values[i].inputs
  const forced = forcedState(honest)
  const committed = stateRoots[tape.step + 1]?.replace(/^0x/, '')
  if (committed !== toHex(stateRoot(forced, tape.step + 1))) return { error: `the committed post-state of step ${tape.step} is not the honest one with the forced element` }
  return { bytes: encodeExactness(proveExactness(honest, forced, tape.step, stateRoots)) }
}
