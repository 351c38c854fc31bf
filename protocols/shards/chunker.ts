import { MAX_BLOCK_BYTES, cidOf } from './cid.js'
import { MANIFEST_FORMAT, MANIFEST_VERSION, MAX_MANIFEST_BLOCKS, encodeManifest, manifestCid, type Manifest, type ManifestBlock, type ShardKind } from './manifest.js'
import type { CID } from 'multiformats/cid'

// Fixed-size chunking: simple, and checkpoints rarely share shifted content,
// so content-defined chunking would buy nothing here.

export interface ShardMeta { name?: string, kind?: ShardKind, labels?: Record<string, string> }

export interface Chunk { cid: CID, bytes: Uint8Array }

/** Splits content into ≤ blockSize chunks with their CIDs (views, no copies). */
export function* chunk (bytes: Uint8Array, blockSize = MAX_BLOCK_BYTES): Generator<Chunk> {
  if (blockSize < 1 || blockSize > MAX_BLOCK_BYTES) throw new Error(`block size must be in [1, ${MAX_BLOCK_BYTES}]`)
  for (let off = 0; off < bytes.length; off += blockSize) {
    const b = bytes.subarray(off, Math.min(off + blockSize, bytes.length))
    yield { cid: cidOf(b), bytes: b }
  }
}

export function maxContentBytes (blockSize = MAX_BLOCK_BYTES): number {
  return MAX_MANIFEST_BLOCKS * blockSize
}

export function buildManifest (blocks: ManifestBlock[], meta: ShardMeta, blockSize = MAX_BLOCK_BYTES): { manifest: Manifest, bytes: Uint8Array, cid: CID } {
  const manifest: Manifest = {
    format: MANIFEST_FORMAT,
    version: MANIFEST_VERSION,
    kind: meta.kind ?? 'file',
    name: meta.name ?? '',
    size: blocks.reduce((s, b) => s + b.size, 0),
    blockSize,
    blocks,
    labels: meta.labels ?? {}
  }
  const bytes = encodeManifest(manifest)
  return { manifest, bytes, cid: manifestCid(bytes) }
}
