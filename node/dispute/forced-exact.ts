import { toHex } from '../../protocols/commit/merkle.js'
import { stateRoot } from '../../protocols/commit/state.js'
import { encodeExactness, forcedState, proveExactness } from '../../protocols/dispute/forced-exact.js'
import { leafOfStep } from '../../protocols/pol/segments.js'
import { STATE_PSEUDO_KERNEL } from '../../protocols/tape/tape.js'
import type { TapeFile } from '../engine/tape-file.js'

// The solver's exactness proof for a revealed forced error, from its own
// tape of the forced step (taped with the forced error, which is applied
// after the step, so its @state entry holds the honest post-state) and its
// committed state roots (protocols/dispute/forced-exact.ts). With a root
// every m > 1 steps the forced step ends a segment, so its post-state is a
// committed leaf, (step + 1) / m.

/** The proof bytes, or why this run's committed post-state is not the forced error of that tape. */
export function exactnessFromTape (
  tape: TapeFile, stateRoots: readonly string[], shape: { steps: number, rootEvery: number } = { steps: stateRoots.length - 1, rootEvery: 1 }
): { bytes: Uint8Array } | { error: string } {
  const i = tape.entries.length - 1
  if (tape.entries[i]?.kernel !== STATE_PSEUDO_KERNEL) return { error: 'the tape has no @state entry' }
  let leaf: number
  try { leaf = leafOfStep(tape.step + 1, shape.steps, shape.rootEvery) } catch { return { error: `the post-state of step ${tape.step} is not a committed leaf` } }
  const honest = tape.values[i].inputs
  const forced = forcedState(honest)
  const committed = stateRoots[leaf]?.replace(/^0x/, '')
  if (committed !== toHex(stateRoot(forced, tape.step + 1))) return { error: `the committed post-state of step ${tape.step} is not the honest one with the forced element` }
  return { bytes: encodeExactness(proveExactness(honest, forced, tape.step, stateRoots, leaf)) }
}
