import { toHex } from '../../protocols/commit/merkle.js'
import type { TensorData } from '../../protocols/commit/tensor.js'
import { fastStateRoot } from './fast-commit.js'
import { writeCheckpoint } from './store.js'

// One unit of the state hasher's work: the state root of step `step` and, at
// checkpoint steps, the checkpoint files (written by the hashing thread, so
// the training thread never waits for the checkpoint's commitments or disk).

export interface HashJob {
  id: number
  step: number
  tensors: TensorData[]
  checkpoint?: { runDir: string, programHash: string, names: string[] }
}

/** `views`: the job's tensor values handed back (their buffers transferred) for reuse */
export interface HashResult { id: number, root?: Uint8Array, manifestHash?: string, error?: string, views?: TensorData['values'][] }

export function runHashJob (j: HashJob): { root: Uint8Array, manifestHash?: string } {
  const root = fastStateRoot(j.tensors, j.step)
  if (j.checkpoint === undefined) return { root }
  const c = j.checkpoint
  // the checkpoint's state root comes from protocols/commit: a cross-check of the fast implementation
  const ck = writeCheckpoint(c.runDir, c.programHash, j.step, c.names, j.tensors)
  if (ck.manifest.stateRoot !== toHex(root)) throw new Error(`internal error: fast state root of step ${j.step} differs from the checkpoint's`)
  return { root, manifestHash: ck.manifestHash }
}
