import { nodeHash, toHex } from '../commit/merkle.js'

// The task's dataset_root binds both the inputs and the labels, so a batch
// row of either can be proven on chain: nodeHash(xRoot, yRoot) where xRoot is
// the commitment of the normalised float32 rows [N, rowSize] and yRoot the
// commitment of the one-hot float32 labels [N, classes].

export function datasetRootOf (xRoot: Uint8Array, yRoot: Uint8Array): Uint8Array {
  return nodeHash(xRoot, yRoot)
}

export function datasetRootHex (xRoot: Uint8Array, yRoot: Uint8Array): string {
  return toHex(datasetRootOf(xRoot, yRoot))
}
