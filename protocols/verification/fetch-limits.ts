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

/** A bundle (the JSON list naming a directory's files: a dataset's, a trained model's), a name and a CID per file. */
export const MAX_BUNDLE_BYTES = 64 * KiB
/** Files a bundle may list (a dataset's four IDX parts, raw and gzipped; a model's two). */
export const MAX_BUNDLE_FILES = 16

/** What the dataset loader reads of one IDX file at most (node/train/dataset.ts). */
export const MAX_IDX_FILE_BYTES = 1024 * MiB

/** The four IDX files of a dataset, each named as the loader reads it: values per row, rows. */
const IDX_FILES: Record<string, (d: IdxSizes) => [number, number]> = {
  'train-images-idx3-ubyte': d => [d.rowSize, d.trainSize],
  'train-labels-idx1-ubyte': d => [1, d.trainSize],
  't10k-images-idx3-ubyte': d => [d.rowSize, d.testSize],
  't10k-labels-idx1-ubyte': d => [1, d.testSize]
}

interface IdxSizes { trainSize: number, testSize: number, rowSize: number }

/**
 * The most an honest file `name` of an IDX dataset of these sizes can be (the
 * program commits them), gzipped (`.gz`) or not; undefined for any other name
 * (the loader reads no other file: it is not fetched). Raw: a header of at
 * most four dimensions and one byte per value. Gzipped: incompressible data
 * goes into deflate's stored blocks, 5 bytes each (blocks of at least 1 KiB
 * allowed; zlib's are up to 64 KiB, as large as its output buffer); a gzip
 * header may carry a file name and a comment (64 KiB allowed). Never over the
 * loader's MAX_IDX_FILE_BYTES.
 */
export function idxFileMaxBytes (d: IdxSizes, name: string): number | undefined {
  const gz = name.endsWith('.gz')
  const sizes = IDX_FILES[gz ? name.slice(0, -3) : name]
  if (sizes === undefined) return undefined
  const [perRow, rows] = sizes(d)
  const raw = 4 + 4 * 4 + perRow * rows
  return Math.min(MAX_IDX_FILE_BYTES, gz ? raw + Math.ceil(raw / KiB) * 5 + 64 * KiB : raw)
}

/** A trained model's files (node/train/saved-model.ts): model.json (the topology, the weights' names and shapes) and weights.bin (the weights, float32). */
export function modelFileMaxBytes (program: TaskProgram, name: string): number | undefined {
  if (name === 'model.json') return MAX_PROGRAM_BYTES + 4 * MiB
  // the weights are part of the state (the optimizer's slots are the rest); a state not laid out here: 1 GiB
  if (name === 'weights.bin') return checkpointMaxBytes(program) ?? 1024 * MiB
  return undefined
}
