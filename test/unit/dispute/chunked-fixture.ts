import { chunkedStateRoot, commitChunked } from '../../../protocols/commit/chunked.js'
import { toHex } from '../../../protocols/commit/merkle.js'
import { commitTensor, type TensorData } from '../../../protocols/commit/tensor.js'
import { skeletonLeaves } from '../../../protocols/dispute/index.js'
import { STATE_READ_KERNEL, STATE_WRITE_KERNEL, isStateConversion, stateReadEntry, stateWriteEntry } from '../../../protocols/tape/state-io.js'
import { STATE_PSEUDO_KERNEL, type InputRef, type TapeEntry } from '../../../protocols/tape/tape.js'
import { reexecuteOp, type OpValues } from '../../../node/train/tape-recorder.js'
import type { Run, Side } from './fixture.js'

// A disputed step under chunked state roots (docs/training.md "Chunked roots:
// design"), built from a recorded row + column tape the way the chunked tape
// is laid out: one @StateRead per state tensor at the head (every read of a
// state tensor then an op reference to it), one @StateWrite per @state input
// before @state, whose inputs are then chunked commitments; the state roots
// of the step chunked. Cheaters are derived like fixture.ts's tamperOp: one
// output wrong, everything after it recomputed (a conversion as the identity).

const rc = (t: TensorData): string => toHex(commitTensor(t).root)
const ch = (t: TensorData): string => toHex(commitChunked(t).root)

/** The commitment of output 0 of entry `e` holding `t`: chunked on a @StateWrite's output, row + column elsewhere. */
const outCommit = (e: TapeEntry, t: TensorData): string => e.kernel === STATE_WRITE_KERNEL ? ch(t) : rc(t)

/** `run` as a chunked tape of the same step, with the pre- and post-state roots chunked. */
export function chunkedRun (run: Run): Run {
  const n = run.before.length
  const last = run.entries.length - 1
  const state = run.entries[last]
  const entries: TapeEntry[] = []
  const values: OpValues[] = []
  run.before.forEach((t, i) => {
    entries.push(stateReadEntry(i, i, t.dtype, t.shape, ch(t), rc(t)))
    values.push({ inputs: [t], outputs: [t] })
  })
  const moved = (r: InputRef): InputRef => r.kind === 'state' ? { kind: 'op', index: r.index, output: 0 } : r.kind === 'op' ? { ...r, index: r.index + n } : r
  for (let j = 0; j < last; j++) {
    const e = run.entries[j]
    entries.push({ ...e, index: j + n, inputs: e.inputs.map(x => ({ ...x, ref: moved(x.ref) })), outputs: e.outputs.map(o => ({ ...o })) })
    values.push(run.values[j])
  }
  const post = run.values[last].inputs
  const writes = state.inputs.map((x, t) => {
    const from = moved(x.ref)
    if (from.kind !== 'op') throw new Error(`@state input ${t} is not an op output`)
    const index = entries.length
    entries.push(stateWriteEntry(index, from, x.dtype, x.shape, x.commitment, ch(post[t])))
    values.push({ inputs: [post[t]], outputs: [post[t]] })
    return index
  })
  entries.push({ ...state, index: entries.length, inputs: state.inputs.map((x, t) => ({ ...x, ref: { kind: 'op', index: writes[t], output: 0 }, commitment: ch(post[t]) })) })
  values.push({ inputs: post, outputs: [] })
  const roots = run.roots.slice()
  roots[run.step] = toHex(chunkedStateRoot(run.before, run.step))
  roots[run.step + 1] = toHex(chunkedStateRoot(post, run.step + 1))
  return { ...run, entries, values, roots, skeleton: skeletonLeaves(entries), chunked: true }
}

/** Entry index of the @StateRead of state tensor t, and of the @StateWrite of post-state tensor t, in a chunked tape. */
export const readOf = (run: Run, t: number): number => run.entries.findIndex(e => e.kernel === STATE_READ_KERNEL && e.inputs[0].ref.kind === 'state' && e.inputs[0].ref.index === t)
export const writeOf = (run: Run, t: number): number => {
  const state = run.entries[run.entries.length - 1]
  const r = state.inputs[t].ref
  return r.kind === 'op' ? r.index : -1
}

/** `t` with the bits of element `flat` changed (its lowest bit flipped). */
export function flipped (t: TensorData, flat: number): TensorData {
  const v = t.values.slice()
  new Uint32Array(v.buffer, v.byteOffset, v.length)[flat] ^= 1
  return { ...t, values: v }
}

/**
 * A consistent cheater on a chunked tape: output 0 of entry `i` becomes `out`
 * (or has element `el` flipped); every later entry reading it is recomputed
 * (conversions as identities), the post-state root is the chunked root of
 * what @state then lists.
 */
export function tamperChunked (run: Run, i: number, el = 0, out?: TensorData): Side {
  const entries: TapeEntry[] = run.entries.map(e => ({ ...e, inputs: e.inputs.map(x => ({ ...x })), outputs: e.outputs.map(o => ({ ...o })) }))
  const values: OpValues[] = run.values.map(v => ({ inputs: v.inputs, outputs: v.outputs }))
  const o = out ?? flipped(values[i].outputs[0], el)
  values[i] = { inputs: values[i].inputs, outputs: [o, ...values[i].outputs.slice(1)] }
  entries[i].outputs[0].commitment = outCommit(entries[i], o)
  const changed = new Set<number>([i])
  for (let j = i + 1; j < entries.length; j++) {
    const e = entries[j]
    let touched = false
    const ins = e.inputs.map((inp, k) => {
      if (inp.ref.kind === 'op' && changed.has(inp.ref.index)) { touched = true; return values[inp.ref.index].outputs[inp.ref.output] }
      return values[j].inputs[k]
    })
    if (!touched) continue
    changed.add(j)
    for (const inp of e.inputs) { inp.commitment = inp.ref.kind === 'op' ? entries[inp.ref.index].outputs[inp.ref.output].commitment : inp.commitment }
    if (e.kernel === STATE_PSEUDO_KERNEL) { values[j] = { inputs: ins, outputs: [] }; continue }
    const outs = isStateConversion(e.kernel) ? [ins[0]] : reexecuteOp(e, ins)
    values[j] = { inputs: ins, outputs: outs }
    outs.forEach((v, k) => { e.outputs[k].commitment = k === 0 ? outCommit(e, v) : rc(v) })
  }
  const post = toHex(chunkedStateRoot(values[values.length - 1].inputs, run.step + 1))
  const roots = [...run.roots.slice(0, run.step + 1), post, ...run.roots.slice(run.step + 2).map(() => post)]
  return { entries, values, roots }
}
