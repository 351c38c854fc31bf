import { beforeAll, describe, expect, it } from 'vitest'
import { chunkedStateRoot, commitChunked } from '../../../protocols/commit/chunked.js'
import { fromHex, merkleRoot, toHex } from '../../../protocols/commit/merkle.js'
import { stepLeaf } from '../../../protocols/commit/state.js'
import { commitTensor, type TensorData } from '../../../protocols/commit/tensor.js'
import { newProgram, stateIsChunked, type TaskProgram } from '../../../protocols/program/index.js'
import { STATE_READ_KERNEL, STATE_WRITE_KERNEL, isStateConversion } from '../../../protocols/tape/state-io.js'
import { STATE_PSEUDO_KERNEL, validateTape, type InputRef } from '../../../protocols/tape/tape.js'
import { initBackend } from '../../../node/train/backend.js'
import { datasetRef, syntheticDataset, type Dataset } from '../../../node/train/dataset.js'
import { fastChunkedRoot } from '../../../node/train/fast-commit.js'
import { Trainer } from '../../../node/train/trainer.js'
import { reexecuteOp, sameBits, tapeStep, type StepTape } from '../../../node/train/tape-recorder.js'

// The tape of a step under a program's chunked state roots (docs/training.md
// "Chunked roots: design", step 2): @StateRead entries at the head, every
// state read rewired to them, @StateWrite entries before @state, whose
// commitments are the chunked post-state leaves.

let ds: Dataset
beforeAll(async () => { await initBackend('wasm'); ds = syntheticDataset(4, 128, 16) })

const prog = (opt: 'sgd' | 'adam', chunked: boolean): TaskProgram =>
  newProgram({ model: 'mlp', dataset: datasetRef(ds), steps: 10, optimizer: opt, batchSize: 16, seed: 3, ...(chunked ? { stateCommitment: 'chunked' as const } : {}) })

/** Tapes step `at` (0-based) of the program; also returns the state before and after it. */
async function tapeAt (p: TaskProgram, at: number): Promise<{ tr: StepTape, before: TensorData[], after: TensorData[], next: StepTape }> {
  const t = await Trainer.create(p, ds)
  try {
    while (t.step < at) t.runStep()
    const before = t.stateTensors().map(x => ({ ...x, values: x.values.slice() }))
    const tr = tapeStep(t)
    const after = t.stateTensors().map(x => ({ ...x, values: x.values.slice() }))
    return { tr, before, after, next: tapeStep(t) }
  } finally { t.dispose() }
}

/** The row + column tape's ref of what the chunked tape references, S entries later. */
function unshift (r: InputRef, S: number): InputRef {
  if (r.kind !== 'op') return r
  return r.index < S ? { kind: 'state', index: r.index } : { kind: 'op', index: r.index - S, output: r.output }
}

describe('op tape recorder under stateCommitment "chunked" (wasm)', () => {
  for (const [opt, kernels] of [['sgd', 74], ['adam', 126]] as const) {
    it(`MLP ${opt}: ${kernels} kernels framed by one @StateRead per state tensor and one @StateWrite per updated one`, async () => {
      const p = prog(opt, true)
      expect(stateIsChunked(p)).toBe(true)
      const { tr, before, after, next } = await tapeAt(p, 1)
      const plain = await tapeAt(prog(opt, false), 1)
      const S = before.length
      expect(tr.stateNames.length).toBe(S)
      // taping under the field does not change the arithmetic: the same post-state as the row + column tape's
      after.forEach((t, i) => expect(sameBits(t, plain.after[i])).toBe(true))
      // every state tensor is updated by both optimizers: S reads, the kernels, S writes, @state
      expect(tr.entries.length).toBe(S + kernels + S + 1)
      validateTape(tr.entries, S)
      // the head: @StateRead t of state tensor t, chunked in, row + column out
      for (let t = 0; t < S; t++) {
        const e = tr.entries[t]
        expect(e.kernel).toBe(STATE_READ_KERNEL)
        expect(e.inputs.map(i => i.ref)).toEqual([{ kind: 'state', index: t }])
        expect(e.inputs[0].commitment).toBe(toHex(commitChunked(before[t]).root))
        expect(e.outputs[0].commitment).toBe(toHex(commitTensor(before[t]).root))
        expect(sameBits(tr.values[t].inputs[0], before[t]) && sameBits(tr.values[t].outputs[0], before[t])).toBe(true)
      }
      // the kernels: the row + column tape's, S entries later, reading the state only through the reads
      const ops = tr.entries.slice(S, S + kernels)
      expect(ops.some(e => isStateConversion(e.kernel) || e.kernel === STATE_PSEUDO_KERNEL)).toBe(false)
      expect(ops.flatMap(e => e.inputs).some(i => i.ref.kind === 'state')).toBe(false)
      expect(ops.flatMap(e => e.inputs).some(i => i.ref.kind === 'op' && i.ref.index < S)).toBe(true)
      ops.forEach((e, k) => {
        const q = plain.tr.entries[k]
        expect({ ...e, index: e.index - S, inputs: e.inputs.map(i => ({ ...i, ref: unshift(i.ref, S) })) }).toEqual(q)
      })
      // the writes, then @state: each new state tensor's chunked commitment, from the op output that became it
      const st = tr.entries[tr.entries.length - 1]
      const plainSt = plain.tr.entries[plain.tr.entries.length - 1]
      expect(st.kernel).toBe(STATE_PSEUDO_KERNEL)
      expect(st.inputs.map(i => i.name)).toEqual(tr.stateNames)
      for (let t = 0; t < S; t++) {
        const w = tr.entries[S + kernels + t]
        expect(w.kernel).toBe(STATE_WRITE_KERNEL)
        const from = plainSt.inputs[t].ref
        expect(from.kind).toBe('op')
        if (from.kind === 'op') expect(w.inputs[0].ref).toEqual({ kind: 'op', index: from.index + S, output: from.output })
        expect(w.inputs[0].commitment).toBe(toHex(commitTensor(after[t]).root))
        expect(w.outputs[0].commitment).toBe(toHex(commitChunked(after[t]).root))
        expect(st.inputs[t].ref).toEqual({ kind: 'op', index: w.index, output: 0 })
        expect(st.inputs[t].commitment).toBe(w.outputs[0].commitment)
      }
      // the state claim recomputes the chunked post-state root from @state's commitments
      const fromState = toHex(merkleRoot([...st.inputs.map(i => fromHex(i.commitment)), stepLeaf(tr.step + 1)]))
      expect(fromState).toBe(toHex(chunkedStateRoot(after, 2)))
      expect(tr.stateRootAfter).toBe(fromState)
      expect(tr.stateRootBefore).toBe(toHex(chunkedStateRoot(before, 1)))
      expect(plain.tr.stateRootAfter).not.toBe(tr.stateRootAfter)
      // every entry but @state re-executes bitwise from its recorded inputs; a conversion is an identity
      for (const e of tr.entries.slice(0, -1)) {
        const outs = reexecuteOp(e, tr.values[e.index].inputs)
        outs.forEach((o, j) => {
          expect(sameBits(o, tr.values[e.index].outputs[j]), `${e.index} ${e.kernel}`).toBe(true)
          expect(toHex(e.kernel === STATE_WRITE_KERNEL ? commitChunked(o).root : commitTensor(o).root)).toBe(e.outputs[j].commitment)
        })
      }
      // the skeleton is the same every step (and not the row + column program's), the tape root is not
      expect(next.skeletonRoot).toBe(tr.skeletonRoot)
      expect(next.tapeRoot).not.toBe(tr.tapeRoot)
      expect(tr.skeletonRoot).not.toBe(plain.tr.skeletonRoot)
      // the recorder's fast chunked commitment is protocols/commit's
      for (const t of after) expect(toHex(fastChunkedRoot(t))).toBe(toHex(commitChunked(t).root))
    })
  }

  it('a conversion re-executed from a tampered input returns the tampered bits (an identity, not a recomputation)', () => {
    const t: TensorData = { shape: [3, 2], dtype: 'float32', values: Float32Array.of(1, -0, Number.NaN, 4, 5, 6) }
    for (const kernel of [STATE_READ_KERNEL, STATE_WRITE_KERNEL]) {
      const [o] = reexecuteOp({ kernel, attrs: {}, inputs: [{ name: 'x', ref: { kind: 'const' }, dtype: 'float32', shape: [3, 2], commitment: '' }] }, [t])
      expect(sameBits(o, t)).toBe(true)
      expect(o.values).not.toBe(t.values)
      expect(() => reexecuteOp({ kernel, attrs: {}, inputs: [] }, [t, t])).toThrow(/one input/)
    }
  })
})
