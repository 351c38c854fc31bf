import { hash } from 'node:crypto'

// Binary Merkle tree over leaf hashes, padded to a power of two with the zero
// hash, so a proof is just the sibling list and the index fixes the direction.
// Domain separation: leaves are H(0x00 || bytes), inner nodes H(0x01 || l || r).

export const HASH_BYTES = 32
export const ZERO_HASH = new Uint8Array(HASH_BYTES)
const LEAF_PREFIX = Uint8Array.of(0)
const NODE_PREFIX = Uint8Array.of(1)
// 0x02 is the tensor commitment's tag (tensor.ts)
const SIZED_PREFIX = Uint8Array.of(3)

// one reused buffer to concatenate the parts: a one-shot crypto.hash over it
// costs about half of createHash().update()…digest() (per-call overhead
// dominates for the many small inputs of a Merkle tree)
let scratch = new Uint8Array(1 << 12)

export function sha256 (...parts: Uint8Array[]): Uint8Array {
  if (parts.length === 1) return new Uint8Array(hash('sha256', parts[0], 'buffer'))
  let n = 0
  for (const p of parts) n += p.length
  if (scratch.length < n) scratch = new Uint8Array(Math.max(n, scratch.length * 2))
  let o = 0
  for (const p of parts) { scratch.set(p, o); o += p.length }
  return new Uint8Array(hash('sha256', scratch.subarray(0, n), 'buffer'))
}

export function leafHash (bytes: Uint8Array): Uint8Array {
  return sha256(LEAF_PREFIX, bytes)
}

export function nodeHash (left: Uint8Array, right: Uint8Array): Uint8Array {
  return sha256(NODE_PREFIX, left, right)
}

/**
 * A root bound to its leaf count: sha256(0x03 || u32le count || merkleRoot).
 * Whoever checks a path under it knows the tree's depth, so an inner node can
 * never pass for a leaf (nor the zero node of a padded subtree for an empty leaf).
 */
export function sizedRoot (count: number, inner: Uint8Array): Uint8Array {
  if (!Number.isInteger(count) || count < 0 || count > 0xffffffff) throw new RangeError(`leaf count ${count} out of range`)
  const n = new Uint8Array(4)
  new DataView(n.buffer).setUint32(0, count, true)
  return sha256(SIZED_PREFIX, n, inner)
}

/** Root of an empty tree: the zero hash. Root of one leaf: the leaf itself. */
export function merkleRoot (leaves: readonly Uint8Array[]): Uint8Array {
  if (leaves.length === 0) return ZERO_HASH
  let level = leaves.slice()
  while (level.length > 1) {
    const next: Uint8Array[] = []
    for (let i = 0; i < level.length; i += 2) {
      next.push(nodeHash(level[i], i + 1 < level.length ? level[i + 1] : ZERO_HASH))
    }
    level = next
  }
  return level[0]
}

/** Siblings from the leaf up to (not including) the root. */
export function merkleProof (leaves: readonly Uint8Array[], index: number): Uint8Array[] {
  if (!Number.isInteger(index) || index < 0 || index >= leaves.length) {
    throw new RangeError(`merkle proof index ${index} out of range [0, ${leaves.length})`)
  }
  const proof: Uint8Array[] = []
  let level = leaves.slice()
  let i = index
  while (level.length > 1) {
    const sib = i ^ 1
    proof.push(sib < level.length ? level[sib] : ZERO_HASH)
    const next: Uint8Array[] = []
    for (let j = 0; j < level.length; j += 2) {
      next.push(nodeHash(level[j], j + 1 < level.length ? level[j + 1] : ZERO_HASH))
    }
    level = next
    i >>= 1
  }
  return proof
}

/** Recomputes the root from a leaf hash, its index and its siblings. */
export function rootFromProof (leaf: Uint8Array, index: number, siblings: readonly Uint8Array[]): Uint8Array {
  let h = leaf
  let i = index
  for (const s of siblings) {
    h = (i & 1) === 0 ? nodeHash(h, s) : nodeHash(s, h)
    i >>= 1
  }
  return h
}

export function verifyMerkleProof (root: Uint8Array, leaf: Uint8Array, index: number, siblings: readonly Uint8Array[]): boolean {
  if (!Number.isInteger(index) || index < 0 || index >= 2 ** siblings.length) return false
  return bytesEqual(rootFromProof(leaf, index, siblings), root)
}

export function bytesEqual (a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

export function toHex (b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex')
}

export function fromHex (s: string): Uint8Array {
  const h = s.startsWith('0x') ? s.slice(2) : s
  if (h.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(h)) throw new TypeError(`invalid hex string: ${s.slice(0, 20)}`)
  return new Uint8Array(Buffer.from(h, 'hex'))
}
