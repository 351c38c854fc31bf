import { decodeEntry } from './entry.js'
import type { Msg, TensorTree } from './messages.js'

// How a bisection narrowed, for people: each of the defender's messages as
// the range it pins down — ops of the step's tape, then one op, one tensor,
// its rows or columns (or chunks), and the last slice the claim is built on. Derived from
// the messages alone (the range of node (level, index) of a tree of depth d is
// leaves [index · 2^(d − level), (index + 1) · 2^(d − level)) of 2^d).

export type NarrowStage = 'tape' | 'entry' | 'tensor' | 'rows' | 'cols' | 'chunks' | 'slice'

export interface NarrowStep {
  /** the message's place in the transcript */
  seq: number
  stage: NarrowStage
  /** the tape entry (op) the stage is inside, once known */
  entry?: number
  /** the tensor: input or output k of that entry */
  tensor?: string
  /** leaves [lo, hi) of `of` still in dispute after this message */
  lo: number
  hi: number
  of: number
  /** the op's kernel or the tensor's shape, when the message names them */
  note?: string
}

const tensorName = (t: TensorTree): string => `${t.io === 'in' ? 'input' : 'output'} ${t.k}`

/** The step one message of the defender's (or the challenger's opening) adds to the narrowing, if any. */
export function narrowStepOf (m: Msg): NarrowStep | undefined {
  const seq = m.seq
  switch (m.t) {
    case 'commit': return { seq, stage: 'tape', lo: 0, hi: 2 ** m.depth, of: 2 ** m.depth }
    case 'nodes': {
      const span = 2 ** Math.max(0, m.depth - m.level)
      const of = 2 ** m.depth
      const lo = m.index * span
      if (m.tree.e === -1) return { seq, stage: 'tape', lo, hi: Math.min(of, lo + span), of }
      const t = m.tree as TensorTree
      return { seq, stage: t.axis === 'col' ? 'cols' : t.axis === 'chunk' ? 'chunks' : 'rows', entry: t.e, tensor: tensorName(t), lo, hi: Math.min(of, lo + span), of }
    }
    case 'entry': {
      const note = m.entry !== undefined ? decodeEntry(m.entry)?.kernel : undefined
      return { seq, stage: 'entry', entry: m.index, lo: m.index, hi: m.index + 1, of: m.index + 1, ...(note !== undefined ? { note } : {}) }
    }
    case 'roots':
    case 'chunks': {
      const size = m.shape.reduce((a, b) => a * b, 1)
      return { seq, stage: 'tensor', entry: m.tree.e, tensor: tensorName(m.tree), lo: 0, hi: size, of: size, note: `${m.dtype}[${m.shape.join('×')}]` }
    }
    case 'slice': return { seq, stage: 'slice', entry: m.tree.e, tensor: tensorName(m.tree), lo: m.index, hi: m.index + 1, of: m.index + 1, note: m.tree.axis === 'chunk' ? `chunk ${m.index}` : `${m.tree.axis === 'col' ? 'column' : 'row'} group ${m.index}` }
    default: return undefined
  }
}

/** The narrowing of a transcript (repeated messages, after a forced move, counted once). */
export function narrowingOf (msgs: readonly Msg[]): NarrowStep[] {
  const out: NarrowStep[] = []
  const seen = new Set<number>()
  for (const m of msgs) {
    if (seen.has(m.seq)) continue
    seen.add(m.seq)
    const s = narrowStepOf(m)
    if (s !== undefined) out.push(s)
  }
  return out
}
