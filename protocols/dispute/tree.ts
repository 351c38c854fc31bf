import { ZERO_HASH, bytesEqual, nodeHash } from '../commit/merkle.js'

// The Merkle trees of protocols/commit seen as full binary trees: a node that
// does not exist (right of the last leaf at its level) is the zero hash. The
// bisection walks such a tree top-down; each answer of the defender is checked
// against the node it expands.

export type Levels = Uint8Array[][]

/** levels[0] = leaves, levels[depth] = [root]; same pairing as merkleRoot. */
export function treeLevels (leaves: readonly Uint8Array[]): Levels {
  const levels: Levels = [leaves.length === 0 ? [ZERO_HASH] : leaves.slice()]
  while (levels[levels.length - 1].length > 1) {
    const l = levels[levels.length - 1]
    const next: Uint8Array[] = []
    for (let i = 0; i < l.length; i += 2) next.push(nodeHash(l[i], i + 1 < l.length ? l[i + 1] : ZERO_HASH))
    levels.push(next)
  }
  return levels
}

export function depthOf (n: number): number { return n <= 1 ? 0 : Math.ceil(Math.log2(n)) }

/** Node at `level` counted from the root (0) down to the leaves (depth). */
export function nodeAt (levels: Levels, level: number, index: number): Uint8Array {
  const depth = levels.length - 1
  return levels[depth - level]?.[index] ?? ZERO_HASH
}

/** A node and its two children are consistent (an empty subtree is all zero hashes). */
export function childrenMatch (node: Uint8Array, left: Uint8Array, right: Uint8Array): boolean {
  if (bytesEqual(node, ZERO_HASH) && bytesEqual(left, ZERO_HASH) && bytesEqual(right, ZERO_HASH)) return true
  return bytesEqual(nodeHash(left, right), node)
}

/**
 * Path (siblings, leaf upwards) of leaf `index` in the other party's tree,
 * from our own levels with the nodes it revealed substituted: every node left
 * of the bisection path agrees with ours, every other sibling was revealed.
 */
export function pathWith (levels: Levels, revealed: ReadonlyMap<string, Uint8Array>, index: number): Uint8Array[] {
  const depth = levels.length - 1
  const out: Uint8Array[] = []
  let i = index
  for (let h = 0; h < depth; h++) {
    const level = depth - h
    const sib = i ^ 1
    out.push(revealed.get(`${level}:${sib}`) ?? nodeAt(levels, level, sib))
    i >>= 1
  }
  return out
}
