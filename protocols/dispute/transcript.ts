import { ZERO_HASH, bytesEqual, sha256 } from '../commit/merkle.js'
import { MAX_ENTRY_BYTES } from '../tape/tape.js'
import { decodeEntry } from './entry.js'
import { MAX_SLICE_BYTES, type Msg, type Signed, type TensorTree, type TreeId } from './messages.js'
import { treeLayout } from './schemes.js'
import { depthOf } from './tree.js'

// The transcript rule: which message may follow which. It is what the chain
// checks when a party forces a move (its own move must continue the other
// side's last message) and when the addressee answers (its answer must
// continue the forced move), so that
//   - a forced query is always answerable by an honest defender (the node
//     it names exists in the tree the defender itself described), and
//   - a forced answer is of the kind the query asks for (same tree, level,
//     index); whether its content is true is a separate, `lie` claim.
// Only `refuse` never continues anything: on chain a query is either
// answerable or refused at force time.

/**
 * A segment dispute's shape, which the chain knows from the task (steps, m)
 * and the disputed segment j: its first step c_j and its L transitions.
 */
export interface SegmentRule { j: number, first: number, length: number }

/**
 * Why `next` cannot follow `prev` (undefined: it can). `prev` undefined: `next`
 * opens the transcript. `seg`: the dispute is over segment `seg.j` (a proof
 * with a root every m > 1 steps): it opens with the defender's `segment` of
 * exactly L − 1 roots, the challenger's `open` names a step inside it, the
 * defender commits that step's tape, and the challenger then asks for the
 * tape root's children (the role `open` plays in a one-step dispute).
 */
export function continuationError (prev: Msg | undefined, next: Msg, seg?: SegmentRule): string | undefined {
  if (prev === undefined) {
    if (seg === undefined) return next.t === 'commit' ? undefined : 'the transcript starts with the defender\'s commit'
    if (next.t !== 'segment') return 'a segment dispute starts with the defender\'s segment'
    if (next.j !== seg.j) return `the segment is ${next.j}, the dispute's ${seg.j}`
    return next.roots.length === seg.length - 1 ? undefined : `segment ${seg.j} has ${seg.length - 1} roots inside it, not ${next.roots.length}`
  }
  if (next.seq !== prev.seq + 1) return `seq ${next.seq} does not follow ${prev.seq}`
  if (seg !== undefined) {
    if (prev.t === 'segment') {
      if (next.t !== 'open') return 'the segment is answered by the opening'
      return next.step >= seg.first && next.step < seg.first + seg.length ? undefined : `the opening names step ${next.step}, outside segment ${seg.j} (steps ${seg.first} … ${seg.first + seg.length - 1})`
    }
    if (prev.t === 'open') return next.t === 'commit' && next.step === prev.step ? undefined : 'the opening is answered by the commit of the step it names'
    if (prev.t === 'commit') {
      if (prev.depth < 1) return 'a tape of depth 0 has no children to ask for'
      return next.t === 'query' && next.want === 'children' && next.tree.e === -1 && next.level === 0 && next.index === 0 ? undefined : 'the commit is answered by a query for the tape root\'s children'
    }
  } else if (prev.t === 'segment' || next.t === 'segment') return 'a segment belongs to a segment dispute only'
  const sameTree = (a: TreeId, b: TreeId): boolean => a.e === b.e && (a.e === -1 || (
    (a as TensorTree).io === (b as TensorTree).io && (a as TensorTree).k === (b as TensorTree).k && (a as TensorTree).axis === (b as TensorTree).axis))
  switch (prev.t) {
    case 'commit':
      if (next.t !== 'open') return 'the commit is answered by the opening'
      if (prev.depth < 1) return 'a tape of depth 0 has no children to ask for'
      return next.step === prev.step ? undefined : 'the opening names another step'
    case 'open':
      return next.t === 'nodes' && next.tree.e === -1 && next.level === 0 && next.index === 0 ? undefined : 'the opening asks for the children of the tape root'
    case 'query':
      switch (prev.want) {
        case 'children': return next.t === 'nodes' && sameTree(next.tree, prev.tree) && next.level === prev.level && next.index === prev.index ? undefined : 'expected the children of the queried node'
        case 'entry':
          if (next.t !== 'entry' || next.index !== prev.index) return 'expected the queried entry'
          // a claim carries the entry (a skeleton claim on a malformed one): no entry is longer
          return next.entry === undefined || next.entry.length <= MAX_ENTRY_BYTES ? undefined : `an entry is at most ${MAX_ENTRY_BYTES} bytes`
        case 'roots': {
          // answered by the row + column roots or, for a tensor under a chunked commitment (a state
          // conversion's chunked side), its chunk root: the defender knows which its commitment is, and
          // a scheme other than the entry's is a lie (facts.ts)
          const t = prev.tree as TensorTree
          return (next.t === 'roots' || next.t === 'chunks') && next.tree.e === t.e && next.tree.io === t.io && next.tree.k === t.k ? undefined : 'expected the roots of the queried tensor'
        }
        case 'slice':
          if (next.t !== 'slice' || !sameTree(next.tree, prev.tree) || next.index !== prev.index) return 'expected the queried slice'
          // a claim carries the slice (a lie claim, beside the roots): no leaf is longer
          return next.bytes.length <= MAX_SLICE_BYTES ? undefined : `a slice is at most ${MAX_SLICE_BYTES} bytes`
      }
      return 'unknown query'
    case 'nodes': {
      if (next.t !== 'query' || !sameTree(next.tree, prev.tree)) return 'a node answer is followed by a query into the same tree'
      const level = prev.level + 1
      if (next.level !== level || (next.index !== 2 * prev.index && next.index !== 2 * prev.index + 1)) return 'the query must name a child of the answered node'
      const child = next.index === 2 * prev.index ? prev.left : prev.right
      if (level < prev.depth) return next.want === 'children' ? undefined : 'above the leaves, ask for children'
      if (level > prev.depth) return 'below the leaves'
      if (prev.tree.e === -1) return next.want === 'entry' ? undefined : 'at the tape leaves, ask for the entry'
      // a padding leaf holds no rows: nothing to reveal there
      if (bytesEqual(child, ZERO_HASH)) return 'an empty leaf has no slice'
      return next.want === 'slice' ? undefined : 'at the tensor leaves, ask for the slice'
    }
    case 'entry': {
      if (next.t !== 'query' || next.want !== 'roots' || next.tree.e !== prev.index) return 'an entry is followed by a query for the roots of one of its tensors'
      const e = prev.entry === undefined ? undefined : decodeEntry(prev.entry)
      const t = next.tree as TensorTree
      const list = e === undefined ? undefined : t.io === 'in' ? e.inputs : e.outputs
      return list !== undefined && t.k < list.length && next.level === 0 && next.index === 0 ? undefined : 'the entry has no such tensor'
    }
    case 'roots':
    case 'chunks': {
      if (next.t !== 'query' || next.tree.e !== prev.tree.e) return `${prev.t} are followed by a query into that tensor`
      const t = next.tree as TensorTree
      const axisOk = prev.t === 'roots' ? t.axis === 'row' || t.axis === 'col' : t.axis === 'chunk'
      if (t.io !== prev.tree.io || t.k !== prev.tree.k || t.axis === undefined || !axisOk || next.level !== 0 || next.index !== 0) {
        return `the query must start at the root of the ${prev.t === 'roots' ? 'row or column' : 'chunk'} tree`
      }
      let leaves: number
      try { leaves = treeLayout(prev.dtype, prev.shape, t.axis).leaves } catch { return `${prev.t} of an invalid shape` }
      // an empty tensor's tree has no leaf: an honest defender could answer nothing there
      if (leaves === 0) return 'an empty tensor has no rows, columns or chunks to ask for'
      return next.want === (depthOf(leaves) > 0 ? 'children' : 'slice') ? undefined : 'wrong query at the tensor root'
    }
    case 'slice': return 'a slice ends the bisection: the challenger claims'
    case 'refuse': return 'a refusal continues nothing'
  }
}

/** Whether signed `next` is linked to `prev` (its seq and prev hash). */
export function linksTo (prev: Signed | undefined, next: Msg): boolean {
  if (prev === undefined) return next.seq === 0 && bytesEqual(next.prev, ZERO_HASH)
  return bytesEqual(next.prev, sha256(prev.m))
}
