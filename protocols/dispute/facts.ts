import { ZERO_HASH, bytesEqual, leafHash, sha256, toHex } from '../commit/merkle.js'
import { axisLayout, combineRoots } from '../commit/tensor.js'
import { decodeEntry } from './entry.js'
import { treeKey, type Msg, type TensorTree, type TreeId } from './messages.js'
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
 * A tensor's dtype and shape as a fact: a commitment binds them (combineRoots), and the row and
 * column trees of [a, b] and [a, 1, b] (or of float32 and int32 bytes) are the same, so roots
 * stating another header than the entry's open a commitment no claim under the entry's could.
 */
export function headerOf (dtype: string, shape: readonly number[]): Uint8Array {
  return new TextEncoder().encode(`${dtype}:${shape.join(',')}`)
}

/**
 * Facts asserted by a set of the defender's messages, and whether one message
 * contradicts itself. Depths come from the messages: the tape depth from
 * `commit`, a tensor tree's depth from `roots` (its shape).
 */
export function factsOf (msgs: readonly Msg[]): { facts: Fact[], selfContradiction?: string } {
  const facts: Fact[] = []
  const commit = msgs.find(m => m.t === 'commit') as Extract<Msg, { t: 'commit' }> | undefined
  const rootsMsgs = msgs.filter(m => m.t === 'roots') as Array<Extract<Msg, { t: 'roots' }>>
  const depthOfTree = (t: TreeId): number | undefined => {
    if (t.e === -1) return commit?.depth
    const tt = t as TensorTree
    const r = rootsMsgs.find(x => x.tree.e === tt.e && x.tree.io === tt.io && x.tree.k === tt.k)
    if (r === undefined) return undefined
    try { return depthOf(axisLayout(r.dtype, r.shape, tt.axis === 'col' ? 'col' : 'row').leaves) } catch { return undefined }
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
        // the depth a node answer states is what makes a query after it answerable (transcript.ts)
        facts.push({ key: `depth:${treeKey(m.tree)}`, value: Uint8Array.of(m.depth) })
        facts.push({ key: node(m.tree, m.level, m.index), value: m.node })
        facts.push({ key: node(m.tree, m.level + 1, 2 * m.index), value: m.left })
        facts.push({ key: node(m.tree, m.level + 1, 2 * m.index + 1), value: m.right })
        break
      case 'entry': {
        const depth = depthOfTree({ e: -1 })
        if (depth !== undefined) facts.push({ key: node({ e: -1 }, depth, m.index), value: m.entry === undefined ? ZERO_HASH : sha256(m.entry) })
        if (m.entry !== undefined) {
          // the commitments an entry names are facts too (a later `roots` must agree)
          const e = decodeEntry(m.entry)
          if (e === undefined) break
          e.inputs.forEach((x, k) => facts.push({ key: `commit:${m.index}/in/${k}`, value: hexBytes(x.commitment) }, { key: `head:${m.index}/in/${k}`, value: headerOf(x.dtype, x.shape) }))
          e.outputs.forEach((x, k) => facts.push({ key: `commit:${m.index}/out/${k}`, value: hexBytes(x.commitment) }, { key: `head:${m.index}/out/${k}`, value: headerOf(x.dtype, x.shape) }))
        }
        break
      }
      case 'roots': {
        let combined: Uint8Array
        try { combined = combineRoots(m.dtype, m.shape, m.rowRoot, m.colRoot) } catch { return { facts, selfContradiction: 'roots with an invalid shape' } }
        if (!bytesEqual(combined, m.commitment)) return { facts, selfContradiction: `roots of ${treeKey(m.tree)} do not combine to the commitment` }
        facts.push({ key: `commit:${m.tree.e}/${m.tree.io}/${m.tree.k}`, value: m.commitment })
        // the roots open the commitment under the header they state: it must be the one the entry declares
        facts.push({ key: `head:${m.tree.e}/${m.tree.io}/${m.tree.k}`, value: headerOf(m.dtype, m.shape) })
        facts.push({ key: node({ ...m.tree, axis: 'row' }, 0, 0), value: m.rowRoot })
        facts.push({ key: node({ ...m.tree, axis: 'col' }, 0, 0), value: m.colRoot })
        for (const axis of ['row', 'col'] as const) {
          facts.push({ key: `depth:${treeKey({ ...m.tree, axis })}`, value: Uint8Array.of(depthOf(axisLayout(m.dtype, m.shape, axis).leaves)) })
        }
        break
      }
      case 'slice': {
        const depth = depthOfTree(m.tree)
        if (depth !== undefined) facts.push({ key: node(m.tree, depth, m.index), value: leafHash(m.bytes) })
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
