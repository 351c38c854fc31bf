import { createHash } from 'node:crypto'
import { CID } from 'multiformats/cid'
import { create as createDigest } from 'multiformats/hashes/digest'

// Content identifiers for shard blocks: CIDv1, sha256 multihash. Data blocks
// use the raw codec; the manifest (root) block is dag-cbor (see manifest.ts),
// so any IPFS tool can decode both.

export const RAW_CODEC = 0x55
export const DAG_CBOR_CODEC = 0x71
export const SHA256_CODE = 0x12

/** Largest block we store, serve or accept (bitswap-compatible size). */
export const MAX_BLOCK_BYTES = 1024 * 1024

export function sha256Bytes (bytes: Uint8Array): Uint8Array {
  return new Uint8Array(createHash('sha256').update(bytes).digest())
}

export function cidOf (bytes: Uint8Array, codec: number = RAW_CODEC): CID {
  return CID.createV1(codec, createDigest(SHA256_CODE, sha256Bytes(bytes)))
}

/** True iff `bytes` hash to `cid` (sha256 only; any other hash is refused). */
export function blockMatches (cid: CID, bytes: Uint8Array): boolean {
  if (cid.multihash.code !== SHA256_CODE || bytes.length > MAX_BLOCK_BYTES) return false
  const h = sha256Bytes(bytes)
  const d = cid.multihash.digest
  if (d.length !== h.length) return false
  for (let i = 0; i < h.length; i++) if (d[i] !== h[i]) return false
  return true
}

/** blockMatches over a block given as the chunks it arrived in (no copy into one buffer). */
export function chunksMatch (cid: CID, chunks: Uint8Array[]): boolean {
  if (cid.multihash.code !== SHA256_CODE) return false
  let n = 0
  const hash = createHash('sha256')
  for (const c of chunks) { n += c.length; hash.update(c) }
  if (n > MAX_BLOCK_BYTES) return false
  const h = hash.digest()
  const d = cid.multihash.digest
  if (d.length !== h.length) return false
  for (let i = 0; i < h.length; i++) if (d[i] !== h[i]) return false
  return true
}

/** Parses a CID string, or throws an error that names it. Only CIDv1 sha256. */
export function parseShardCid (s: string): CID {
  let cid: CID
  try {
    cid = CID.parse(s.trim())
  } catch {
    throw new Error(`invalid CID "${s}"`)
  }
  if (cid.version !== 1 || cid.multihash.code !== SHA256_CODE) throw new Error(`unsupported CID "${s}": shards use CIDv1 with a sha256 multihash`)
  if (cid.code !== RAW_CODEC && cid.code !== DAG_CBOR_CODEC) throw new Error(`unsupported CID "${s}": codec 0x${cid.code.toString(16)} is neither raw nor dag-cbor`)
  return cid
}
