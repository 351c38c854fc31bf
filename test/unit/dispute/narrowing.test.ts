import { describe, expect, it } from 'vitest'
import { encode } from 'cborg'
import { ZERO_HASH } from '../../../protocols/commit/merkle.js'
import { narrowingOf, type Msg } from '../../../protocols/dispute/index.js'

// The dashboard's picture of a bisection (protocols/dispute/narrowing.ts):
// the defender's messages of a game over a step whose tape has 8 leaves,
// narrowed to op 5 (a MatMul), its output 0 of 4 × 8, row group 2 of 4.

const h = (b: number): Uint8Array => new Uint8Array(32).fill(b)
const link = (seq: number): { seq: number, prev: Uint8Array } => ({ seq, prev: seq === 0 ? ZERO_HASH : h(seq) })
const nodes = (seq: number, level: number, index: number, depth: number, tree: Extract<Msg, { t: 'nodes' }>['tree'] = { e: -1 }): Msg => ({ t: 'nodes', d: 0, tree, level, index, depth, node: h(1), left: h(2), right: h(3), ...link(seq) })
const entry = encode({ index: 5, kernel: 'MatMul', attrs: {}, inputs: [], outputs: [] })
const rowTree = { e: 5, io: 'out' as const, k: 0, axis: 'row' as const }

const transcript: Msg[] = [
  { t: 'commit', d: 0, step: 41, traceRoot: h(9), depth: 3, ...link(0) },
  nodes(2, 0, 0, 3),
  nodes(4, 1, 1, 3),
  nodes(6, 2, 2, 3),
  { t: 'entry', d: 0, index: 5, entry, ...link(8) },
  { t: 'roots', d: 0, tree: { e: 5, io: 'out', k: 0 }, dtype: 'float32', shape: [4, 8], commitment: h(4), rowRoot: h(5), colRoot: h(6), ...link(10) },
  nodes(12, 0, 0, 2, rowTree),
  nodes(14, 1, 1, 2, rowTree),
  { t: 'slice', d: 0, tree: rowTree, index: 2, bytes: new Uint8Array(32), ...link(16) }
]

describe('the narrowing of a bisection', () => {
  it('is the range each message leaves in dispute: ops of the tape, the op, its tensor, rows, the slice', () => {
    const n = narrowingOf(transcript)
    expect(n.map(s => s.stage)).toEqual(['tape', 'tape', 'tape', 'tape', 'entry', 'tensor', 'rows', 'rows', 'slice'])
    expect(n.slice(0, 4).map(s => [s.lo, s.hi, s.of])).toEqual([[0, 8, 8], [0, 8, 8], [4, 8, 8], [4, 6, 8]])
    // every tape range holds the next one, and the last holds the op the game ends on
    for (let i = 1; i < 4; i++) expect(n[i].lo >= n[i - 1].lo && n[i].hi <= n[i - 1].hi).toBe(true)
    expect(n[4]).toMatchObject({ stage: 'entry', entry: 5, lo: 5, hi: 6, note: 'MatMul' })
    expect(n[5]).toMatchObject({ stage: 'tensor', entry: 5, tensor: 'output 0', lo: 0, hi: 32, note: 'float32[4×8]' })
    expect(n.slice(6, 8).map(s => [s.lo, s.hi, s.of, s.tensor])).toEqual([[0, 4, 4, 'output 0'], [2, 4, 4, 'output 0']])
    expect(n[8]).toMatchObject({ stage: 'slice', lo: 2, hi: 3, note: 'row group 2' })
    expect(n.map(s => s.seq)).toEqual([0, 2, 4, 6, 8, 10, 12, 14, 16])
  })

  it('counts a message heard twice (after a forced move) once, and skips queries and refusals', () => {
    const again = [transcript[0], transcript[1], transcript[1], { t: 'refuse', d: 0, reason: 'no', ...link(4) } as Msg, { t: 'query', d: 0, want: 'children', tree: { e: -1 }, level: 1, index: 0, ...link(3) } as Msg]
    expect(narrowingOf(again).map(s => s.seq)).toEqual([0, 2])
  })

  it('names no kernel for an entry it cannot decode', () => {
    const n = narrowingOf([{ t: 'entry', d: 0, index: 3, entry: Uint8Array.of(1, 2, 3), ...link(8) }])
    expect(n[0].note).toBeUndefined()
    expect(n[0]).toMatchObject({ stage: 'entry', entry: 3 })
  })
})
