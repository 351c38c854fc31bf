import { bytesEqual, fromHex, leafHash, merkleProof, merkleRoot, rootFromProof, sizedRoot, toHex } from '../commit/merkle.js'
import { checkpointPosition, codingParams } from './params.js'

// Commitments to erasure-coded checkpoints.
//
// chunk root (one checkpoint): sizedRoot(n, merkleRoot(leafHash(chunk_i)))
// checkpoint leaf: leafHash("proofswarm/chunks/v1" ‖ u32le step ‖ u64le dataBytes ‖ chunk root)
// coded root (one run): sizedRoot(count, merkleRoot(checkpoint leaves in step order))
//
// The solver commits the coded root in commit_proof's checkpoint list as the
// entry "chunk-root:<64 hex>". The chain derives a checkpoint's leaf index and
// the tree's size from the task (steps, checkpoint_every), and n and the chunk
// size from dataBytes (params.ts): every path has a depth fixed by the chain,
// so no inner node can pass for a chunk or a checkpoint leaf.

export const CHUNK_ROOT_PREFIX = 'chunk-root:'
const TAG = new TextEncoder().encode('proofswarm/chunks/v1')

export interface CodedCheckpoint { step: number, dataBytes: number, chunkRoot: Uint8Array }

export function chunkLeaf (chunk: Uint8Array): Uint8Array { return leafHash(chunk) }

export function chunkRootOf (leaves: readonly Uint8Array[]): Uint8Array {
  return sizedRoot(leaves.length, merkleRoot(leaves))
}

export function chunkPath (leaves: readonly Uint8Array[], index: number): Uint8Array[] {
  return merkleProof(leaves, index)
}

/** True iff `chunk` is chunk `index` under `chunkRoot` of a tree of `total` chunks (path of depth ⌈log2 total⌉). */
export function chunkOnPath (chunkRoot: Uint8Array, total: number, index: number, chunk: Uint8Array, path: readonly Uint8Array[]): boolean {
  const depth = total <= 1 ? 0 : Math.ceil(Math.log2(total))
  if (path.length !== depth || !Number.isInteger(index) || index < 0 || index >= total) return false
  return bytesEqual(sizedRoot(total, rootFromProof(chunkLeaf(chunk), index, path)), chunkRoot)
}

export function checkpointLeaf (c: CodedCheckpoint): Uint8Array {
  const b = new Uint8Array(TAG.length + 4 + 8 + 32)
  const v = new DataView(b.buffer)
  b.set(TAG, 0)
  v.setUint32(TAG.length, c.step, true)
  v.setBigUint64(TAG.length + 4, BigInt(c.dataBytes), true)
  b.set(c.chunkRoot, TAG.length + 12)
  return leafHash(b)
}

/** The run's coded root over its checkpoints (in step order, every checkpoint step present). */
export function codedRoot (checkpoints: readonly CodedCheckpoint[]): Uint8Array {
  return sizedRoot(checkpoints.length, merkleRoot(checkpoints.map(checkpointLeaf)))
}

export function codedPath (checkpoints: readonly CodedCheckpoint[], index: number): Uint8Array[] {
  return merkleProof(checkpoints.map(checkpointLeaf), index)
}

/** True iff `c` is the coded checkpoint of its step under `root`, for a task of stepCount steps checkpointed every `every`. */
export function checkpointOnPath (root: Uint8Array, c: CodedCheckpoint, path: readonly Uint8Array[], stepCount: number, every: number): boolean {
  const pos = checkpointPosition(c.step, stepCount, every)
  if (pos === null) return false
  try { codingParams(c.dataBytes) } catch { return false }
  const depth = pos.count <= 1 ? 0 : Math.ceil(Math.log2(pos.count))
  if (path.length !== depth) return false
  return bytesEqual(sizedRoot(pos.count, rootFromProof(checkpointLeaf(c), pos.index, path)), root)
}

/** The commit_proof checkpoint-list entry carrying the coded root (UTF-8 bytes). */
export function chunkRootEntry (root: Uint8Array): string {
  return CHUNK_ROOT_PREFIX + toHex(root)
}

/** The coded root in a commit_proof checkpoint list (entries as UTF-8 strings), or null when there is none (or it is malformed). */
export function findChunkRoot (entries: readonly string[]): Uint8Array | null {
  for (const e of entries) {
    if (!e.startsWith(CHUNK_ROOT_PREFIX)) continue
    const h = e.slice(CHUNK_ROOT_PREFIX.length)
    return /^[0-9a-f]{64}$/.test(h) ? fromHex(h) : null
  }
  return null
}

/**
 * The off-chain list of one checkpoint's chunks, published with the run: the
 * leaf hash of every chunk (so any single fetched chunk is checked at once)
 * and the shard CID of every chunk block (where to fetch it).
 */
export interface ChunkList {
  version: 1
  step: number
  dataBytes: number
  /** hex of the chunk root */
  chunkRoot: string
  /** hex leaf hash of each chunk, in chunk order */
  leaves: string[]
  /** CID of each chunk's shard block, in chunk order */
  blocks: string[]
}

/** Checks a chunk list against itself and the chunk root; returns the leaf hashes. */
export function validateChunkList (v: unknown, expect?: CodedCheckpoint): { list: ChunkList, leaves: Uint8Array[] } {
  const l = v as ChunkList
  const bad = (why: string): never => { throw new Error(`invalid chunk list: ${why}`) }
  if (typeof l !== 'object' || l === null || l.version !== 1) bad('not a version 1 chunk list')
  if (!Number.isInteger(l.step) || l.step < 0) bad('step')
  let total = 0
  try { total = codingParams(l.dataBytes).total } catch (e) { bad((e as Error).message) }
  if (!Array.isArray(l.leaves) || l.leaves.length !== total || !l.leaves.every(x => typeof x === 'string' && /^[0-9a-f]{64}$/.test(x))) bad(`${total} hex leaf hashes expected`)
  if (!Array.isArray(l.blocks) || l.blocks.length !== total || !l.blocks.every(x => typeof x === 'string' && /^b[a-z2-7]{20,120}$/.test(x))) bad(`${total} block CIDs expected`)
  const leaves = l.leaves.map(fromHex)
  const root = chunkRootOf(leaves)
  if (typeof l.chunkRoot !== 'string' || toHex(root) !== l.chunkRoot) bad('the leaves do not make the chunk root')
  if (expect !== undefined && (expect.step !== l.step || expect.dataBytes !== l.dataBytes || !bytesEqual(expect.chunkRoot, root))) bad(`it is not the committed coding of step ${expect.step}`)
  return { list: l, leaves }
}
