import { leafHash, merkleProof, merkleRoot } from './merkle.js'
import { commitTensor, type TensorData } from './tensor.js'

// The model state root: a Merkle tree whose leaves are the commitments of the
// state tensors in program order (weights, then optimizer slots) followed by
// the leaf of the step counter. A tensor's membership in an agreed state root
// is one short path, which is how a dispute ties an op's state inputs to the
// step both parties agreed on.

export function stepLeaf (step: number): Uint8Array {
  const b = new Uint8Array(8)
  new DataView(b.buffer).setBigUint64(0, BigInt(step), true)
  return leafHash(b)
}

export function stateLeaves (tensors: readonly TensorData[], step: number): Uint8Array[] {
  return [...tensors.map(t => commitTensor(t).root), stepLeaf(step)]
}

export function stateRoot (tensors: readonly TensorData[], step: number): Uint8Array {
  return merkleRoot(stateLeaves(tensors, step))
}

export function proveStateTensor (tensors: readonly TensorData[], step: number, index: number): Uint8Array[] {
  return merkleProof(stateLeaves(tensors, step), index)
}
