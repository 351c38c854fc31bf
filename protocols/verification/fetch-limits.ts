import { sizeOf } from '../commit/tensor.js'
import { leafCount } from '../pol/segments.js'
import { MAX_PROGRAM_BYTES } from '../program/bytes.js'
import { initLayout } from '../program/init.js'
import type { TaskProgram } from '../program/program.js'

// How large each artefact of a run can honestly be, so a verifier (or a
// defender, a submitter) refuses a larger one before fetching a block of it.
// A shard's manifest may list one block many times, so a solver naming a
// 1 MiB block 25,000 times would otherwise have its verifiers write 25 GiB to
// disk (or hold it in memory) from one block, and miss their deadline doing it.

const KiB = 1024
const MiB = 1024 * KiB

/** task.json: the chain admits no larger program. */
export const MAX_PROGRAM_FETCH_BYTES = MAX_PROGRAM_BYTES

/** A run index: at most 100,000 checkpoint entries (validateRunIndex), each well under 1 KiB of JSON. */
export const MAX_RUN_INDEX_BYTES = 100_000 * KiB + 64 * KiB

/** A checkpoint's manifest.json: one entry (name, shape, dtype, roots) per state tensor. */
export const MAX_CHECKPOINT_MANIFEST_BYTES = 4 * MiB

/**
 * proof.json of a task with `steps` steps and a root every `rootEvery`: one
 * 64-hex-digit root per committed step and at most one checkpoint entry each
 * (whitespace and key names included, 256 bytes cover both), plus the header.
 */
export function proofMaxBytes (steps: number, rootEvery: number): number {
  return leafCount(steps, rootEvery) * 256 + 64 * KiB
}

/**
 * A checkpoint's state.bin: the program's state tensors (weights, optimizer
 * slots, Adam's β powers), float32 back to back. Undefined when the program's
 * initial state cannot be laid out here (no bound is then known).
 */
export function checkpointMaxBytes (program: TaskProgram): number | undefined {
  try {
    return initLayout(program).reduce((n, t) => n + sizeOf(t.shape) * 4, 0)
  } catch {
    return undefined
  }
}
