import type { DType } from '../commit/tensor.js'

// Parts shared by the dispute claim (claim.ts) and the initial-state claim
// (init-claim.ts), apart so that neither imports the other for them.

/** A SliceProof on chain: `bytes` is the whole leaf holding row (column) `index` (commitment v2 groups rows/columns per leaf). */
export interface ClaimSlice { dtype: DType, shape: number[], axis: 'row' | 'col', index: number, bytes: Uint8Array, siblings: Uint8Array[], otherRoot: Uint8Array }
/** A tensor commitment's preimage: the chain hashes it itself, so an inner node of a tree can never pass for a tensor. */
export interface TensorHead { dtype: DType, shape: number[], rowRoot: Uint8Array, colRoot: Uint8Array }
/** A chunked commitment's preimage (commit/chunked.ts: a state tensor under a chunked state root), hashed by the chain likewise. */
export interface ChunkedHead { dtype: DType, shape: number[], chunkRoot: Uint8Array }
/** A ChunkProof on chain (commit/chunked.ts): `bytes` is the whole chunk, `index` the chunk's. */
export interface ClaimChunk { dtype: DType, shape: number[], index: number, bytes: Uint8Array, siblings: Uint8Array[] }
