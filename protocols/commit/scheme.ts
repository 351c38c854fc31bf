import { chunkedStateLeaves, chunkedStateRoot, commitChunked } from './chunked.js'
import { stateLeaves, stateRoot } from './state.js'
import { commitTensor, type TensorData } from './tensor.js'

// Which commitment a program's state roots are under (docs/training.md
// "Chunked roots: design"): 'rowcol', every state tensor under its row +
// column commitment (tensor.ts, every program without the field), or
// 'chunked' (chunked.ts). Both state roots are the same tree over the
// tensors' commitments then the step's leaf; only the leaves differ.

export type CommitScheme = 'rowcol' | 'chunked'

/** A state tensor's commitment root (a leaf of the state root) under `c`. */
export function tensorCommitmentRoot (c: CommitScheme, t: TensorData): Uint8Array {
  return c === 'chunked' ? commitChunked(t).root : commitTensor(t).root
}

/** The state root's leaves (each tensor's commitment, then the step's leaf) under `c`. */
export function stateLeavesUnder (c: CommitScheme, tensors: readonly TensorData[], step: number): Uint8Array[] {
  return c === 'chunked' ? chunkedStateLeaves(tensors, step) : stateLeaves(tensors, step)
}

/** The state root of `tensors` after `step` steps under `c`. */
export function stateRootUnder (c: CommitScheme, tensors: readonly TensorData[], step: number): Uint8Array {
  return c === 'chunked' ? chunkedStateRoot(tensors, step) : stateRoot(tensors, step)
}
