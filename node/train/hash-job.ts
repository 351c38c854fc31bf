import { merkleRoot, toHex } from '../../protocols/commit/merkle.js'
import { stepLeaf } from '../../protocols/commit/state.js'
import type { TensorData } from '../../protocols/commit/tensor.js'
import { fastStateRoot, fastTensorRoot } from './fast-commit.js'
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

export interface HashResult { id: number, root?: Uint8Array, manifestHash?: string, error?: string }

// the first checkpoint a thread writes is committed by protocols/commit itself:
// a cross-check of the fast implementation on the real state, once (it costs ~5× more)
let crossChecked = false

export function runHashJob (j: HashJob): { root: Uint8Array, manifestHash?: string } {
  if (j.checkpoint === undefined) return { root: fastStateRoot(j.tensors, j.step) }
  const c = j.checkpoint
  // a checkpoint's tensor commitments are the state root's leaves: computed once for both
  const roots = new Map(j.tensors.map(t => [t, fastTensorRoot(t)]))
  const root = merkleRoot([...roots.values(), stepLeaf(j.step)])
  const ck = writeCheckpoint(
    c.runDir, c.programHash, j.step, c.names, j.tensors, crossChecked ? { tensorRoot: t => roots.get(t) ?? fastTensorRoot(t) } : { reference: true }
  )
  crossChecked = true
  if (ck.manifest.stateRoot !== toHex(root)) throw new Error(`internal error: fast state root of step ${j.step} differs from the checkpoint's`)
  return { root, manifestHash: ck.manifestHash }
}
