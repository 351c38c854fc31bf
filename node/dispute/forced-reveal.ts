import { fromHex, merkleRoot } from '../../protocols/commit/merkle.js'
import { stepLeaf } from '../../protocols/commit/state.js'
import { encodeForcedLeafProof, isForcedLeafOf, proveForcedLeaf } from '../../protocols/dispute/forced-leaf.js'
import { leafOfStep } from '../../protocols/pol/segments.js'
import { STATE_PSEUDO_KERNEL } from '../../protocols/tape/tape.js'
import type { TapeFile } from '../engine/tape-file.js'

// The solver's proof for a revealed forced error (protocols/dispute/forced-leaf.ts):
// the path of the leaf after the forced step in its committed roots, checked
// first against its own tape of that step, whose @state entry holds the honest
// post-state the challenger's `state` claim was decided on.

/** The proof bytes, or why this run's committed leaf after the tape's step is not the forced mark of its honest post-state. */
export function revealProofFromTape (
  tape: TapeFile, stateRoots: readonly string[], shape: { steps: number, rootEvery: number } = { steps: stateRoots.length - 1, rootEvery: 1 }
): { bytes: Uint8Array } | { error: string } {
  const i = tape.entries.length - 1
  if (tape.entries[i]?.kernel !== STATE_PSEUDO_KERNEL) return { error: 'the tape has no @state entry' }
  let leaf: number
  try { leaf = leafOfStep(tape.step + 1, shape.steps, shape.rootEvery) } catch { return { error: `the post-state of step ${tape.step} is not a committed leaf` } }
  // the root the `state` claim recomputes from the @state entry: its tensors' commitments (row + column,
  // or chunked under chunked state roots: the scheme the tape's post-state is under) and the step leaf
  const honest = merkleRoot([...tape.entries[i].inputs.map(x => fromHex(x.commitment)), stepLeaf(tape.step + 1)])
  const committed = stateRoots[leaf]
  if (committed === undefined || !isForcedLeafOf(fromHex(committed.replace(/^0x/, '')), honest)) return { error: `the committed leaf after step ${tape.step} is not the forced mark of its honest post-state` }
  return { bytes: encodeForcedLeafProof(proveForcedLeaf(stateRoots.map(r => r.replace(/^0x/, '')), tape.step, shape.steps, shape.rootEvery)) }
}
