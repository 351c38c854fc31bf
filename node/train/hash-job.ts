import { merkleRoot, toHex } from '../../protocols/commit/merkle.js'
import { stepLeaf } from '../../protocols/commit/state.js'
import type { TensorData } from '../../protocols/commit/tensor.js'
import type { CommitScheme } from '../../protocols/commit/scheme.js'
import { fastStateRootUnder, fastTensorRootUnder } from './fast-commit.js'
import { writeCheckpoint } from './store.js'

// One unit of the state hasher's work: the state root of step `step` and, at
// checkpoint steps, the checkpoint files (written by the hashing thread, so
// the training thread never waits for the checkpoint's commitments or disk).

export interface HashJob {
  id: number
  step: number
  tensors: TensorData[]
  checkpoint?: { runDir: string, programHash: string, names: string[] }
  /** the program's state commitment (absent: row + column) */
  stateCommitment?: CommitScheme
}

export interface HashResult { id: number, root?: Uint8Array, manifestHash?: string, error?: string }

// the first checkpoint a thread writes is committed by protocols/commit itself:
// a cross-check of the fast implementation on the real state, once per scheme (it costs ~5× more)
const crossChecked = new Set<CommitScheme>()

export function runHashJob (j: HashJob): { root: Uint8Array, manifestHash?: string } {
  const scheme = j.stateCommitment ?? 'rowcol'
  if (j.checkpoint === undefined) return { root: fastStateRootUnder(scheme, j.tensors, j.step) }
  const c = j.checkpoint
  // a checkpoint's tensor commitments are the state root's leaves: computed once for both
  const tensorRoot = fastTensorRootUnder(scheme)
  const roots = new Map(j.tensors.map(t => [t, tensorRoot(t)]))
  const root = merkleRoot([...roots.values(), stepLeaf(j.step)])
  const ck = writeCheckpoint(
    c.runDir, c.programHash, j.step, c.names, j.tensors,
    crossChecked.has(scheme) ? { stateCommitment: scheme, tensorRoot: t => roots.get(t) ?? tensorRoot(t) } : { stateCommitment: scheme, reference: true }
  )
  crossChecked.add(scheme)
  if (ck.manifest.stateRoot !== toHex(root)) throw new Error(`internal error: fast state root of step ${j.step} differs from the checkpoint's`)
  return { root, manifestHash: ck.manifestHash }
}
