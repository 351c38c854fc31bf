import type { DType } from '../commit/tensor.js'
import { stateReadEntry, stateWriteEntry } from './state-io.js'
import { STATE_PSEUDO_KERNEL, type InputRef, type TapeEntry } from './tape.js'

// A step's tape under chunked state roots (docs/training.md "Chunked roots:
// design", step 2), from the tape the recorder takes under row + column
// commitments: S @StateRead entries at the head (one per state tensor, in
// state order), every state reference of an op rewired to its read, one
// @StateWrite per updated state tensor before @state, and @state listing the
// writes' chunked commitments, so the `state` claim recomputes the chunked
// post-state root. No op of the chunked tape references the state directly:
// the pre-state's chunked leaves are reached only through the reads, whose
// element claim is the cross-check (dispute/judge-state-io.ts).

/** A state tensor under both commitments (hex). */
export interface StateSides { dtype: DType, shape: readonly number[], chunked: string, fine: string }

export interface ConvertedTape {
  entries: TapeEntry[]
  /** the state tensor each @StateWrite writes, in tape order (entry S + kernels + w is the write of writes[w]) */
  writes: number[]
}

/**
 * The chunked tape of a step from its row + column tape `raw` (its kernels,
 * then @state): `pre` the pre-state tensors' two commitments, `postChunked`
 * the post-state tensors' chunked commitments (hex), both in state order.
 * Tensor t is written when @state takes it from an op output; any other
 * source stays as it was (a state ref: the tensor unchanged, under its chunked
 * commitment as the pre-state's leaf).
 */
export function withStateConversions (raw: readonly TapeEntry[], pre: readonly StateSides[], postChunked: readonly string[]): ConvertedTape {
  const S = pre.length
  const last = raw[raw.length - 1]
  if (last === undefined || last.kernel !== STATE_PSEUDO_KERNEL) throw new Error(`a tape ends with its ${STATE_PSEUDO_KERNEL} entry`)
  if (last.inputs.length !== S || postChunked.length !== S) throw new Error(`the ${STATE_PSEUDO_KERNEL} entry lists ${last.inputs.length} tensors, the state has ${S}`)
  const kernels = raw.length - 1
  const shift = (r: InputRef): InputRef => {
    if (r.kind === 'state') {
      if (!(r.index >= 0 && r.index < S)) throw new Error(`state ref ${r.index} out of range`)
      return { kind: 'op', index: r.index, output: 0 }
    }
    return r.kind === 'op' ? { kind: 'op', index: r.index + S, output: r.output } : r
  }
  const entries: TapeEntry[] = pre.map((s, t) => stateReadEntry(t, t, s.dtype, s.shape, s.chunked, s.fine))
  for (const e of raw.slice(0, kernels)) {
    entries.push({ ...e, index: e.index + S, inputs: e.inputs.map(i => ({ ...i, ref: shift(i.ref) })) })
  }
  const writes: number[] = []
  const stateInputs = last.inputs.map((inp, t) => {
    if (inp.ref.kind !== 'op') return { ...inp, commitment: postChunked[t] }
    const from = { kind: 'op' as const, index: inp.ref.index + S, output: inp.ref.output }
    const index = entries.length
    entries.push(stateWriteEntry(index, from, inp.dtype, inp.shape, inp.commitment, postChunked[t]))
    writes.push(t)
    return { ...inp, ref: { kind: 'op' as const, index, output: 0 }, commitment: postChunked[t] }
  })
  entries.push({ ...last, index: entries.length, inputs: stateInputs })
  return { entries, writes }
}
