import { openCheckpoint, type CommitOptions } from '../pol/checkpoint.js'
import type { TensorData } from '../commit/tensor.js'

// What a verifier checks about a fetched checkpoint before it replays from it:
// the manifest and data agree (sizes, sha256, every tensor commitment), the
// checkpoint is of the step it was fetched for, and its state root is the
// solver's committed root of that step (leaf step / m with a root every m
// steps). Any failure means the interval cannot be replayed from what the
// solver published: a data-availability problem (docs/disputes.md,
// "Withheld checkpoints"), not a wrong step.

const bare = (h: string): string => h.replace(/^0x/, '').toLowerCase()

/** The state tensors of a checkpoint, only if it is the committed state at `step` (else throws with the reason). */
export function committedCheckpointTensors (
  manifest: unknown, data: Uint8Array, step: number, committedStateRoot: string, programHash?: string, o: CommitOptions = {}
): TensorData[] {
  const { manifest: m, tensors } = openCheckpoint(manifest, data, programHash !== undefined ? { programHash: bare(programHash) } : undefined, o)
  if (m.step !== step) throw new Error(`the checkpoint is of step ${m.step}, not ${step}`)
  if (bare(m.stateRoot) !== bare(committedStateRoot)) throw new Error(`the checkpoint's state root ${m.stateRoot.slice(0, 16)}… is not the committed root of step ${step}`)
  return tensors
}

/** The reason a fetched checkpoint is unusable, or undefined if it is the committed state at `step`. */
export function checkpointProblem (
  manifest: unknown, data: Uint8Array, step: number, committedStateRoot: string, programHash?: string, o: CommitOptions = {}
): string | undefined {
  try {
    committedCheckpointTensors(manifest, data, step, committedStateRoot, programHash, o)
    return undefined
  } catch (e) {
    return (e as Error).message
  }
}
