import { toHex } from '../../../protocols/commit/merkle.js'
import { stateRoot } from '../../../protocols/commit/state.js'
import { commitTensor, sizeOf, type TensorData } from '../../../protocols/commit/tensor.js'
import { STATE_PSEUDO_KERNEL, type TapeEntry } from '../../../protocols/tape/tape.js'
import { reexecuteOp, type OpValues } from '../../../node/train/tape-recorder.js'
import type { Run, Side } from './fixture.js'

// A solver that trains on other data than the program's: example `example`
// of the batch input `name` is replaced by dataset row `fromRow` (another
// image, or another label), and the whole step is re-executed on it, so its
// tape is consistent and only the batch differs from the dataset.

const commitHex = (t: TensorData): string => toHex(commitTensor(t).root)

export function trainOnOtherRow (run: Run, name: 'x' | 'y', example: number, fromRow: number): Side {
  const source = name === 'x' ? run.x : run.y
  const width = source.shape[1]
  const first = run.entries.findIndex(e => e.inputs.some(i => i.ref.kind === 'data' && i.ref.name === name))
  const k = run.entries[first].inputs.findIndex(i => i.ref.kind === 'data' && i.ref.name === name)
  const batch = run.values[first].inputs[k]
  if (sizeOf(batch.shape) / batch.shape[0] !== width) throw new Error(`batch ${name} does not hold rows of ${width}`)
  const values = batch.values.slice() as Float32Array
  values.set(source.values.subarray(fromRow * width, (fromRow + 1) * width), example * width)
  const other: TensorData = { ...batch, values }
  if (commitHex(other) === commitHex(batch)) throw new Error('the replacement row equals the original one')

  const out: OpValues[] = run.values.map(v => ({ inputs: v.inputs, outputs: v.outputs }))
  const entries: TapeEntry[] = run.entries.map(e => ({ ...e, inputs: e.inputs.map(x => ({ ...x })), outputs: e.outputs.map(o => ({ ...o })) }))
  const changed = new Set<number>()
  for (let j = 0; j < entries.length; j++) {
    const e = entries[j]
    let touched = false
    const ins = e.inputs.map((inp, i) => {
      if (inp.ref.kind === 'data' && inp.ref.name === name) { touched = true; return other }
      if (inp.ref.kind === 'op' && changed.has(inp.ref.index)) { touched = true; return out[inp.ref.index].outputs[inp.ref.output] }
      return out[j].inputs[i]
    })
    if (!touched) continue
    changed.add(j)
    ins.forEach((v, i) => { e.inputs[i].commitment = commitHex(v) })
    if (e.kernel === STATE_PSEUDO_KERNEL) { out[j] = { inputs: ins, outputs: [] }; continue }
    const outs = reexecuteOp(e, ins)
    out[j] = { inputs: ins, outputs: outs }
    outs.forEach((v, i) => { e.outputs[i].commitment = commitHex(v) })
  }
  const post = toHex(stateRoot(out[out.length - 1].inputs, run.step + 1))
  const roots = [...run.roots.slice(0, run.step + 1), post, ...run.roots.slice(run.step + 2).map(() => post)]
  return { entries, values: out, roots }
}
