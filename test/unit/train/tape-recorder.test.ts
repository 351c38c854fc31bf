import { beforeAll, describe, expect, it } from 'vitest'
import { commitTensor, toHex } from '../../../protocols/commit/index.js'
import { newProgram, type TaskProgram } from '../../../protocols/program/index.js'
import { STATE_PSEUDO_KERNEL, validateTape } from '../../../protocols/tape/index.js'
import { initBackend } from '../../../node/train/backend.js'
import { datasetRef, syntheticDataset, type Dataset } from '../../../node/train/dataset.js'
import { Trainer } from '../../../node/train/trainer.js'
import { reexecuteOp, sameBits, tapeStep } from '../../../node/train/tape-recorder.js'

let ds: Dataset
const prog = (model: string, opt: 'sgd' | 'adam'): TaskProgram => newProgram({ model, dataset: datasetRef(ds), steps: 10, optimizer: opt, batchSize: model === 'cnn' ? 4 : 16, seed: 3 })
beforeAll(async () => { await initBackend('wasm'); ds = syntheticDataset(4, 128, 16) })

async function check (model: string, opt: 'sgd' | 'adam', kernels: number): Promise<void> {
  const p = prog(model, opt)
  const plain = await Trainer.create(p, ds)
  const steps = opt === 'adam' ? 3 : 2
  for (let i = 0; i < steps; i++) plain.runStep()
  const want = toHex(plain.stateRoot())
  plain.dispose()
  const t = await Trainer.create(p, ds)
  if (opt === 'adam') {
    // the very first step (fresh moments, accBeta = beta) has the same structure too
    expect(tapeStep(t).skeletonRoot).toBe(tapeStep(t).skeletonRoot)
  } else {
    t.runStep()
  }
  const tr = tapeStep(t)
  // taping does not change the arithmetic
  expect(tr.stateRootAfter).toBe(want)
  expect(tr.entries.length - 1).toBe(kernels)
  validateTape(tr.entries, t.state.length)
  // every op re-executes bitwise from its recorded inputs
  let n = 0
  for (const e of tr.entries) {
    if (e.kernel === STATE_PSEUDO_KERNEL) continue
    const outs = reexecuteOp(e, tr.values[e.index].inputs)
    expect(outs.length).toBe(e.outputs.length)
    outs.forEach((o, j) => {
      expect(sameBits(o, tr.values[e.index].outputs[j]), `${e.index} ${e.kernel}`).toBe(true)
      expect(toHex(commitTensor(o).root)).toBe(e.outputs[j].commitment)
    })
    n++
  }
  expect(n).toBe(kernels)
  // the @state entry maps every new state tensor to an op output, with matching commitments
  const st = tr.entries[tr.entries.length - 1]
  expect(st.inputs.map(i => i.name)).toEqual(tr.stateNames)
  st.inputs.forEach((inp, i) => {
    expect(inp.ref.kind).toBe('op')
    if (inp.ref.kind === 'op') expect(tr.entries[inp.ref.index].outputs[inp.ref.output].commitment).toBe(inp.commitment)
    expect(inp.commitment).toBe(toHex(commitTensor(t.stateTensors()[i]).root))
  })
  // the skeleton is the same for every step, the tape root is not
  const tr2 = tapeStep(t)
  expect(tr2.skeletonRoot).toBe(tr.skeletonRoot)
  expect(tr2.tapeRoot).not.toBe(tr.tapeRoot)
  // a corrupted input makes some op's output differ
  const e = tr.entries.find(x => x.kernel === 'BatchMatMul')!
  const ins = tr.values[e.index].inputs.map(v => ({ ...v, values: v.values.slice() }))
  ins[0].values[0] += 1
  expect(sameBits(reexecuteOp(e, ins)[0], tr.values[e.index].outputs[0])).toBe(false)
  t.dispose()
}

describe('op tape recorder (wasm)', () => {
  it('MLP SGD step: 74 kernels, all re-execute bitwise', async () => { await check('mlp', 'sgd', 74) })
  it('MLP Adam step: 126 kernels, all re-execute bitwise', async () => { await check('mlp', 'adam', 126) })
  it('CNN SGD step (with the added Conv2DBackpropFilter) re-executes bitwise', async () => { await check('cnn', 'sgd', 105) })
})
