import { encode } from 'cborg'
import { merkleRoot, sha256, sizedRoot, toHex } from '../commit/merkle.js'
import { skeletonOf, type SkeletonEntry, type TapeEntry } from '../tape/tape.js'

// The skeleton a dispute checks an op against. It is protocols/tape's
// skeleton plus the commitment (and inline value) of every constant input:
// constants (learning rate, 1/batch, ...) are the same at every step, so
// committing them once on chain (skeleton_root) is what makes a wrong
// constant provable. Without them a solver could change a constant and stay
// consistent with everything else it signed.

export type DisputeSkeleton = SkeletonEntry & { inputs: Array<SkeletonEntry['inputs'][number] & { commitment?: string, value?: number[] }> }

export function disputeSkeletonOf (e: TapeEntry): DisputeSkeleton {
  const s = skeletonOf(e) as DisputeSkeleton
  s.inputs = s.inputs.map((inp, k) => {
    const src = e.inputs[k]
    if (src.ref.kind !== 'const') return inp
    return src.value !== undefined ? { ...inp, commitment: src.commitment, value: src.value } : { ...inp, commitment: src.commitment }
  })
  return s
}

export function skeletonLeaf (e: TapeEntry): Uint8Array {
  return sha256(encode(disputeSkeletonOf(e)))
}

export function skeletonLeaves (entries: readonly TapeEntry[]): Uint8Array[] {
  return entries.map(skeletonLeaf)
}

/** skeleton_root over given leaves: bound to their count, so the chain knows the tape's depth. */
export function skeletonRootOf (leaves: readonly Uint8Array[]): Uint8Array {
  return sizedRoot(leaves.length, merkleRoot(leaves))
}

/** What a submitter commits on chain as skeleton_root (hex, no 0x). */
export function disputeSkeletonRoot (entries: readonly TapeEntry[]): string {
  return toHex(skeletonRootOf(skeletonLeaves(entries)))
}
