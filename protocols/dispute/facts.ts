import { ZERO_HASH, bytesEqual, sha256, toHex } from '../commit/merkle.js'
import { combineChunked } from '../commit/chunked.js'
import { combineRoots } from '../commit/tensor.js'
import { decodeEntry } from './entry.js'
import { treeKey, type Msg, type TensorTree, type TreeId } from './messages.js'
import { leafHashOf, schemeOf, treeLayout, type Scheme, type TreeLayout } from './schemes.js'
import { childrenMatch, depthOf } from './tree.js'

// What a defender's signed messages assert about node positions in its trees
// (and about its segment and the commitments its entries name): two messages
// that assert different values at one position, or one message that
// contradicts itself, are a lie claim (judge-step.ts), and the transcript's
// rules (transcript.ts) read the depths they state.

function hexBytes (h: string): Uint8Array {
  return /^[0-9a-f]{64}$/.test(h) ? new Uint8Array(Buffer.from(h, 'hex')) : new Uint8Array(0)
}

export interface Fact { key: string, value: Uint8Array }

/**
 * The commitment scheme of a tensor as a fact: the entry's kernel fixes it (schemes.ts), a `roots`
 * or `chunks` answer states it. An op tensor under a chunked commitment would open to no row or
 * column, so no element claim could reach it: a `chunks` answer for it contradicts its entry.
 */
const schemeFact = (s: Scheme): Uint8Array => new TextEncoder().encode(s)

/**
 * A tensor's dtype and shape as a fact: a commitment binds them (combineRoots), and the row and
 * column trees of [a, b] and [a, 1, b] (or of float32 and int32 bytes) are the same, so roots
 * stating another header than the entry's open a commitment no claim under the entry's could.
 */
export function headerOf (dtype: string, shape: readonly number[]): Uint8Array {
  return new TextEncoder().encode(`${dtype}:${shape.join(',')}`)
}

/**
 * Whether node (level, index) of a tensor tree laid out as `l` is the zero hash,
 * or a real node, as its position says: a node above at least one of the
 * header's leaves is a hash of bytes (never zero), a node only above padding
 * is zero. A cheater's tree that breaks this hides an element from every claim:
 * a zero leaf where rows are (no slice of an empty leaf can be asked for on
 * chain), or a padding leaf with bytes (no row of the header is there).
 */
function positionError (l: TreeLayout, level: number, index: number, node: Uint8Array): string | undefined {
  const depth = depthOf(l.leaves)
  if (level > depth) return undefined
  const real = index * 2 ** (depth - level) < l.leaves
  if (real === bytesEqual(node, ZERO_HASH)) return `node ${level}:${index} is ${real ? 'zero above rows' : 'not zero above padding'} of ${l.leaves} leaves`
  return undefined
}

/** Why a slice does not fit the leaf of the layout it names: every leaf holds its rows' (columns', chunk's) bytes exactly. */
function sliceError (l: TreeLayout, index: number, bytes: Uint8Array): string | undefined {
  if (index >= l.leaves) return `slice ${index} of ${l.leaves} leaves`
  const want = l.leafBytes(index)
  return bytes.length === want ? undefined : `slice ${index} has ${bytes.length} bytes, its leaf ${want}`
}

/**
 * Facts asserted by a set of the defender's messages, and whether one message
 * contradicts itself (or a tensor tree's answer the layout its `roots` state).
 * Depths come from the messages: the tape depth from `commit`, a tensor tree's
 * depth from `roots` (its shape).
 */
export function factsOf (msgs: readonly Msg[]): { facts: Fact[], selfContradiction?: string } {
  const facts: Fact[] = []
  const commit = msgs.find(m => m.t === 'commit') as Extract<Msg, { t: 'commit' }> | undefined
  const heads = msgs.filter(m => m.t === 'roots' || m.t === 'chunks') as Array<Extract<Msg, { t: 'roots' | 'chunks' }>>
  // the layout of a tensor's row or column tree by the header its roots state, of its chunk tree by its chunks'
  const layoutOf = (t: TensorTree): TreeLayout | undefined => {
    if (t.axis === undefined) return undefined
    const r = heads.find(x => x.tree.e === t.e && x.tree.io === t.io && x.tree.k === t.k && (x.t === 'chunks') === (t.axis === 'chunk'))
    if (r === undefined) return undefined
    try { return treeLayout(r.dtype, r.shape, t.axis) } catch { return undefined }
  }
  const node = (t: TreeId, level: number, index: number): string => `${treeKey(t)}@${level}:${index}`
  for (const m of msgs) {
    switch (m.t) {
      case 'segment':
        // two segment lists of one dispute must agree root by root, and in length
        facts.push({ key: `segment:${m.j}:length`, value: Uint8Array.of(m.roots.length) })
        m.roots.forEach((r, k) => facts.push({ key: `segment:${m.j}:${k + 1}`, value: r }))
        break
      case 'commit':
        facts.push({ key: node({ e: -1 }, 0, 0), value: m.traceRoot })
        facts.push({ key: 'depth:tape', value: Uint8Array.of(m.depth) })
        break
      case 'nodes':
        if (!childrenMatch(m.node, m.left, m.right)) return { facts, selfContradiction: `nodes at ${treeKey(m.tree)} ${m.level}:${m.index} do not hash to their parent` }
        if (m.level >= m.depth) return { facts, selfContradiction: `nodes at level ${m.level} of a tree of depth ${m.depth}` }
        if (m.tree.e !== -1) {
          const l = layoutOf(m.tree as TensorTree)
          const at = (level: number, index: number, h: Uint8Array): string | undefined => l === undefined ? undefined : positionError(l, level, index, h)
          const bad = at(m.level, m.index, m.node) ?? at(m.level + 1, 2 * m.index, m.left) ?? at(m.level + 1, 2 * m.index + 1, m.right)
          if (bad !== undefined) return { facts, selfContradiction: `nodes of ${treeKey(m.tree)} against its roots: ${bad}` }
        }
        // the depth a node answer states is what makes a query after it answerable (transcript.ts)
        facts.push({ key: `depth:${treeKey(m.tree)}`, value: Uint8Array.of(m.depth) })
        facts.push({ key: node(m.tree, m.level, m.index), value: m.node })
        facts.push({ key: node(m.tree, m.level + 1, 2 * m.index), value: m.left })
        facts.push({ key: node(m.tree, m.level + 1, 2 * m.index + 1), value: m.right })
        break
      case 'entry': {
        const depth = commit?.depth
        if (depth !== undefined) facts.push({ key: node({ e: -1 }, depth, m.index), value: m.entry === undefined ? ZERO_HASH : sha256(m.entry) })
        if (m.entry !== undefined) {
          // the commitments an entry names are facts too (a later `roots` must agree)
          const e = decodeEntry(m.entry)
          if (e === undefined) break
          for (const io of ['in', 'out'] as const) {
            (io === 'in' ? e.inputs : e.outputs).forEach((x, k) => {
              facts.push({ key: `commit:${m.index}/${io}/${k}`, value: hexBytes(x.commitment) }, { key: `head:${m.index}/${io}/${k}`, value: headerOf(x.dtype, x.shape) })
              const scheme = schemeOf(e, io, k)
              if (scheme !== undefined) facts.push({ key: `scheme:${m.index}/${io}/${k}`, value: schemeFact(scheme) })
            })
          }
        }
        break
      }
      case 'roots': {
        let combined: Uint8Array
        try { combined = combineRoots(m.dtype, m.shape, m.rowRoot, m.colRoot) } catch { return { facts, selfContradiction: 'roots with an invalid shape' } }
        if (!bytesEqual(combined, m.commitment)) return { facts, selfContradiction: `roots of ${treeKey(m.tree)} do not combine to the commitment` }
        const tensor = `${m.tree.e}/${m.tree.io}/${m.tree.k}`
        facts.push({ key: `commit:${tensor}`, value: m.commitment })
        // the roots open the commitment under the header they state: it must be the one the entry declares
        facts.push({ key: `head:${tensor}`, value: headerOf(m.dtype, m.shape) })
        facts.push({ key: `scheme:${tensor}`, value: schemeFact('rows') })
        facts.push({ key: node({ ...m.tree, axis: 'row' }, 0, 0), value: m.rowRoot })
        facts.push({ key: node({ ...m.tree, axis: 'col' }, 0, 0), value: m.colRoot })
        for (const axis of ['row', 'col'] as const) {
          const l = treeLayout(m.dtype, m.shape, axis)
          const bad = positionError(l, 0, 0, axis === 'row' ? m.rowRoot : m.colRoot)
          if (bad !== undefined) return { facts, selfContradiction: `the ${axis} root of ${treeKey(m.tree)}: ${bad}` }
          facts.push({ key: `depth:${treeKey({ ...m.tree, axis })}`, value: Uint8Array.of(depthOf(l.leaves)) })
        }
        break
      }
      case 'chunks': {
        // the chunked side of a state conversion: one tree, over the tensor's chunks (commit/chunked.ts)
        let combined: Uint8Array
        try { combined = combineChunked(m.dtype, m.shape, m.chunkRoot) } catch { return { facts, selfContradiction: 'chunks with an invalid shape' } }
        if (!bytesEqual(combined, m.commitment)) return { facts, selfContradiction: `the chunk root of ${treeKey(m.tree)} does not combine to the commitment` }
        const tensor = `${m.tree.e}/${m.tree.io}/${m.tree.k}`
        facts.push({ key: `commit:${tensor}`, value: m.commitment })
        facts.push({ key: `head:${tensor}`, value: headerOf(m.dtype, m.shape) })
        facts.push({ key: `scheme:${tensor}`, value: schemeFact('chunked') })
        const tree = { ...m.tree, axis: 'chunk' as const }
        const l = treeLayout(m.dtype, m.shape, 'chunk')
        const bad = positionError(l, 0, 0, m.chunkRoot)
        if (bad !== undefined) return { facts, selfContradiction: `the chunk root of ${treeKey(m.tree)}: ${bad}` }
        facts.push({ key: node(tree, 0, 0), value: m.chunkRoot })
        facts.push({ key: `depth:${treeKey(tree)}`, value: Uint8Array.of(depthOf(l.leaves)) })
        break
      }
      case 'slice': {
        const l = layoutOf(m.tree)
        if (l === undefined) break
        const bad = sliceError(l, m.index, m.bytes)
        if (bad !== undefined) return { facts, selfContradiction: `${treeKey(m.tree)} against its roots: ${bad}` }
        facts.push({ key: node(m.tree, depthOf(l.leaves), m.index), value: leafHashOf(m.tree.axis ?? 'row', m.bytes) })
        break
      }
      default: break
    }
  }
  return { facts }
}

/** The first position two facts disagree on, if any. */
export function conflictOf (facts: readonly Fact[]): string | undefined {
  const seen = new Map<string, Uint8Array>()
  for (const f of facts) {
    const prev = seen.get(f.key)
    if (prev !== undefined && !bytesEqual(prev, f.value)) return `${f.key}: ${toHex(prev).slice(0, 12)} vs ${toHex(f.value).slice(0, 12)}`
    seen.set(f.key, f.value)
  }
  return undefined
}
