import { describe, expect, it } from 'vitest'
import { ZERO_HASH, nodeHash } from '../../../protocols/commit/merkle.js'
import { conflictOf, continuationError, decodeMsg, encodeMsg, factsOf, type Msg } from '../../../protocols/dispute/index.js'

// The transcript rule (protocols/dispute/transcript.ts), pure: which message
// may follow which. The chain applies it to every forced move and answer.

const h = (b: number): Uint8Array => new Uint8Array(32).fill(b)
const L = (seq: number): { seq: number, prev: Uint8Array } => ({ seq, prev: seq === 0 ? ZERO_HASH : h(seq) })
const commit: Msg = { t: 'commit', d: 0, step: 4, traceRoot: h(1), depth: 3, ...L(0) }
const open: Msg = { t: 'open', d: 0, step: 4, pre: h(2), post: h(3), ...L(1) }
const nodes = (level: number, index: number, depth = 3, tree: Msg extends never ? never : Extract<Msg, { t: 'nodes' }>['tree'] = { e: -1 }, right = h(7)): Msg => ({ t: 'nodes', d: 0, tree, level, index, depth, node: h(5), left: h(6), right, ...L(2) })
const query = (want: 'children' | 'entry' | 'roots' | 'slice', level: number, index: number, tree: Extract<Msg, { t: 'query' }>['tree'] = { e: -1 }, seq = 3): Msg => ({ t: 'query', d: 0, want, tree, level, index, ...L(seq) })

describe('transcript: which message may follow which', () => {
  it('the commit opens it, the opening follows the commit, the root\'s children follow the opening', () => {
    expect(continuationError(undefined, commit)).toBeUndefined()
    expect(continuationError(undefined, open)).toMatch(/starts with the defender/)
    expect(continuationError(commit, open)).toBeUndefined()
    expect(continuationError(commit, { ...open, step: 5 })).toMatch(/another step/)
    expect(continuationError(commit, query('children', 1, 0, { e: -1 }, 1))).toMatch(/answered by the opening/)
    expect(continuationError(open, nodes(0, 0))).toBeUndefined()
    expect(continuationError(open, nodes(1, 0))).toMatch(/children of the tape root/)
    expect(continuationError(commit, { ...open, seq: 3 })).toMatch(/does not follow/)
  })

  it('a query names a child of the answered node; children above the leaves, the entry at the tape leaves', () => {
    const n = { ...nodes(1, 1), seq: 2 }
    expect(continuationError(n, query('children', 2, 2))).toBeUndefined()
    expect(continuationError(n, query('children', 2, 3))).toBeUndefined()
    expect(continuationError(n, query('children', 2, 1))).toMatch(/child of the answered node/)
    expect(continuationError(n, query('entry', 2, 2))).toMatch(/ask for children/)
    const leaves = nodes(2, 1)
    expect(continuationError(leaves, query('entry', 3, 2))).toBeUndefined()
    expect(continuationError(leaves, query('children', 3, 2))).toMatch(/ask for the entry/)
    expect(continuationError(leaves, query('slice', 3, 2))).toMatch(/ask for the entry/)
  })

  it('a tensor tree ends in a slice, never of an empty leaf; its root query depends on the roots\' shape', () => {
    const tree = { e: 4, io: 'out' as const, k: 0, axis: 'row' as const }
    const n = nodes(0, 0, 1, tree, ZERO_HASH)
    expect(continuationError(n, query('slice', 1, 0, tree))).toBeUndefined()
    expect(continuationError(n, query('slice', 1, 1, tree))).toMatch(/empty leaf/)
    const roots = (shape: number[]): Msg => ({ t: 'roots', d: 0, tree: { e: 4, io: 'out', k: 0 }, dtype: 'float32', shape, commitment: h(1), rowRoot: h(2), colRoot: h(3), ...L(2) })
    // 1024 rows of 512 bytes: 4 rows per leaf, 256 leaves → children; one row → one leaf → the slice at once
    expect(continuationError(roots([1024, 128]), query('children', 0, 0, tree))).toBeUndefined()
    expect(continuationError(roots([1024, 128]), query('slice', 0, 0, tree))).toMatch(/wrong query/)
    expect(continuationError(roots([1, 4]), query('slice', 0, 0, tree))).toBeUndefined()
    expect(continuationError(roots([1024, 128]), query('children', 0, 0, { e: 4, io: 'out', k: 0 }))).toMatch(/row or column/)
  })

  it('a slice ends the bisection and a refusal continues nothing', () => {
    const slice: Msg = { t: 'slice', d: 0, tree: { e: 4, io: 'out', k: 0, axis: 'row' }, index: 0, bytes: new Uint8Array(8), ...L(2) }
    expect(continuationError(slice, query('children', 0, 0))).toMatch(/claims/)
    expect(continuationError({ t: 'refuse', d: 0, reason: 'x', ...L(2) }, query('children', 0, 0))).toMatch(/continues nothing/)
    expect(continuationError(query('children', 1, 0, { e: -1 }, 1), { t: 'refuse', d: 0, reason: 'x', ...L(2) })).toMatch(/children of the queried node/)
  })

  it('author parity is part of a message: an opening at an even seq does not decode', () => {
    expect(() => decodeMsg(encodeMsg({ ...open, seq: 2 }))).toThrow(/parity/)
    expect(() => decodeMsg(encodeMsg({ ...commit, seq: 2 }))).toThrow(/message 0/)
    expect(decodeMsg(encodeMsg(open))).toMatchObject({ t: 'open', seq: 1 })
  })

  it('a node answer that states another depth than the commit is a contradiction (a lie)', () => {
    const consistent = { ...nodes(0, 0, 4), node: nodeHash(h(6), h(7)) } as Msg
    const { facts, selfContradiction } = factsOf([{ ...commit, traceRoot: nodeHash(h(6), h(7)) } as Msg, consistent])
    expect(selfContradiction).toBeUndefined()
    expect(conflictOf(facts)).toMatch(/depth:tape/)
    expect(factsOf([{ ...nodes(3, 0, 3), node: nodeHash(h(6), h(7)) } as Msg]).selfContradiction).toMatch(/tree of depth 3/)
  })
})
