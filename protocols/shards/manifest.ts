import { decode, encode, Token, Type } from 'cborg'
import { CID } from 'multiformats/cid'
import { DAG_CBOR_CODEC, MAX_BLOCK_BYTES, RAW_CODEC, SHA256_CODE, cidOf } from './cid.js'

// The root of a shard is a manifest block: dag-cbor (codec 0x71) so it is a
// valid IPLD node whose links (CBOR tag 42) are the data blocks in order.
// One manifest lists up to MAX_MANIFEST_BLOCKS blocks (~25 GiB with 1 MiB
// blocks); larger objects are out of scope for checkpoints and datasets.

export const MANIFEST_VERSION = 1
export const MANIFEST_FORMAT = 'proofswarm/shard'
export const MAX_MANIFEST_BYTES = MAX_BLOCK_BYTES
export const MAX_MANIFEST_BLOCKS = 25_000
export const MAX_NAME_LENGTH = 256
export const SHARD_KINDS = ['checkpoint', 'dataset', 'model', 'file'] as const
export type ShardKind = typeof SHARD_KINDS[number]

export interface ManifestBlock { cid: CID, size: number }

export interface Manifest {
  format: typeof MANIFEST_FORMAT
  version: number
  kind: ShardKind
  name: string
  /** total length of the content in bytes */
  size: number
  /** nominal block size used by the chunker (the last block may be shorter) */
  blockSize: number
  blocks: ManifestBlock[]
  /** free-form small string labels (task id, step, ...) */
  labels: Record<string, string>
}

const CID_TAG = 42

// dag-cbor encodes a link as tag 42 over the CID bytes with a 0x00 prefix
function encodeCid (obj: unknown): Token[] | null {
  const cid = CID.asCID(obj)
  if (cid == null) return null
  const bytes = new Uint8Array(cid.bytes.length + 1)
  bytes.set(cid.bytes, 1)
  return [new Token(Type.tag, CID_TAG), new Token(Type.bytes, bytes)]
}

function decodeCid (bytes: Uint8Array): CID {
  if (!(bytes instanceof Uint8Array) || bytes[0] !== 0) throw new Error('invalid CID link in manifest')
  return CID.decode(bytes.subarray(1))
}

export function encodeManifest (m: Manifest): Uint8Array {
  validateManifest(m)
  const bytes = encode({
    format: m.format,
    version: m.version,
    kind: m.kind,
    name: m.name,
    size: m.size,
    blockSize: m.blockSize,
    blocks: m.blocks.map(b => [b.cid, b.size]),
    labels: m.labels
  }, { typeEncoders: { Object: encodeCid } })
  if (bytes.length > MAX_MANIFEST_BYTES) throw new Error(`manifest over ${MAX_MANIFEST_BYTES} bytes`)
  return bytes
}

export function manifestCid (bytes: Uint8Array): CID {
  return cidOf(bytes, DAG_CBOR_CODEC)
}

/** Decodes and validates a manifest block; throws a descriptive error on anything malformed. */
export function decodeManifest (bytes: Uint8Array): Manifest {
  if (bytes.length > MAX_MANIFEST_BYTES) throw new Error(`manifest over ${MAX_MANIFEST_BYTES} bytes`)
  // decoded CBOR is untyped until each field is checked below
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const tags: Array<(inner: any) => any> = []
  tags[CID_TAG] = decodeCid
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  let raw: any
  try {
    raw = decode(bytes, { tags, strict: true, rejectDuplicateMapKeys: true })
  } catch (err) {
    throw new Error(`manifest is not valid dag-cbor: ${(err as Error).message}`)
  }
  if (raw == null || typeof raw !== 'object' || !Array.isArray(raw.blocks)) throw new Error('manifest has no block list')
  const m: Manifest = {
    format: raw.format,
    version: raw.version,
    kind: raw.kind,
    name: raw.name,
    size: raw.size,
    blockSize: raw.blockSize,
    blocks: (raw.blocks as unknown[]).map(b => {
      if (!Array.isArray(b) || b.length !== 2) throw new Error('manifest block entry must be [cid, size]')
      return { cid: b[0] as CID, size: b[1] as number }
    }),
    labels: raw.labels ?? {}
  }
  validateManifest(m)
  return m
}

export function validateManifest (m: Manifest): void {
  if (m.format !== MANIFEST_FORMAT) throw new Error(`not a shard manifest (format "${String(m.format)}")`)
  if (m.version !== MANIFEST_VERSION) throw new Error(`unsupported manifest version ${String(m.version)}`)
  if (!SHARD_KINDS.includes(m.kind)) throw new Error(`unknown shard kind "${String(m.kind)}"`)
  if (typeof m.name !== 'string' || m.name.length > MAX_NAME_LENGTH) throw new Error(`manifest name must be a string of at most ${MAX_NAME_LENGTH} chars`)
  if (!Number.isSafeInteger(m.blockSize) || m.blockSize < 1 || m.blockSize > MAX_BLOCK_BYTES) throw new Error(`manifest block size must be in [1, ${MAX_BLOCK_BYTES}]`)
  if (m.blocks.length > MAX_MANIFEST_BLOCKS) throw new Error(`manifest lists over ${MAX_MANIFEST_BLOCKS} blocks`)
  let total = 0
  for (const b of m.blocks) {
    const cid = CID.asCID(b.cid)
    if (cid == null || cid.version !== 1 || cid.code !== RAW_CODEC || cid.multihash.code !== SHA256_CODE) throw new Error('manifest block CIDs must be CIDv1 raw sha256')
    if (!Number.isSafeInteger(b.size) || b.size < 0 || b.size > m.blockSize) throw new Error(`manifest block size ${String(b.size)} out of range`)
    total += b.size
  }
  if (!Number.isSafeInteger(m.size) || m.size !== total) throw new Error(`manifest size ${String(m.size)} differs from the sum of its blocks (${total})`)
  if (typeof m.labels !== 'object' || m.labels == null || Array.isArray(m.labels)) throw new Error('manifest labels must be a map')
  const entries = Object.entries(m.labels)
  if (entries.length > 32) throw new Error('manifest has over 32 labels')
  for (const [k, v] of entries) if (typeof v !== 'string' || k.length > 64 || v.length > 256) throw new Error(`manifest label "${k}" must be a string of at most 256 chars`)
}

/** Byte offsets of each block in the content (for ranged reads and resume). */
export function blockOffsets (m: Manifest): number[] {
  const out: number[] = []
  let off = 0
  for (const b of m.blocks) { out.push(off); off += b.size }
  return out
}
