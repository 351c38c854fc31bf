import { beforeAll, describe, expect, it } from 'vitest'
import { buildElementClaim, checkElementClaim, opShapeOf } from '../../../protocols/reference/index.js'
import { newProgram, type TaskProgram } from '../../../protocols/program/index.js'
import { ASCII_VOCAB, type GptSpec } from '../../../protocols/program/gpt.js'
import { STATE_PSEUDO_KERNEL } from '../../../protocols/trace/trace.js'
import { initBackend } from '../../../node/train/backend.js'
import { datasetRef, textDataset, type Dataset } from '../../../node/train/dataset.js'
import { Trainer } from '../../../node/train/trainer.js'
import { traceStep, type StepTrace } from '../../../node/train/tracer.js'
import { bitsAt, checkOp, refusedAmbiguousNaN } from './ref-check.js'

// Every op of real GPT training steps (the zoo's default sizes on the real
// fortunes-min corpus, and a small odd-sized one) against its element
// reference, bit for bit, on a spread of each op's elements; then one op of
// each kernel as an element claim the chain would judge.

const SIZES: Array<[string, Partial<GptSpec>, number]> = [
  ['default (2 layers, d 64, 4 heads, context 64)', {}, 64],
  ['small odd (1 layer, d 12, 3 heads, mlp 20, context 7)', { layers: 1, dModel: 12, heads: 3, mlp: 20 }, 7]
]

let W: string
beforeAll(async () => { W = (await initBackend('wasm')).runtime })

async function traced (gpt: Partial<GptSpec>, context: number, optimizer: 'sgd' | 'adam'): Promise<{ p: TaskProgram, tr: StepTrace }> {
  const ds: Dataset = textDataset('fortunes-min', { vocab: ASCII_VOCAB, context })
  const p = newProgram({ model: 'gpt', gpt, dataset: datasetRef(ds), steps: 4, optimizer, batchSize: 3, seed: 11, learningRate: 0.01 })
  const t = await Trainer.create(p, ds)
  try {
    t.runStep(); t.runStep() // a state off the initial one
    return { p, tr: traceStep(t) }
  } finally { t.dispose() }
}

describe('GPT training step: every op = its element reference (wasm)', () => {
  for (const [what, gpt, context] of SIZES) {
    for (const optimizer of ['adam', 'sgd'] as const) {
      it(`${what}, ${optimizer}`, async () => {
        const { p, tr } = await traced(gpt, context, optimizer)
        const perKernel = new Map<string, number>()
        for (let i = 0; i < tr.entries.length; i++) {
          const e = tr.entries[i]
          if (e.kernel === STATE_PSEUDO_KERNEL) continue
          const v = tr.values[i]
          const n = checkOp(p.runtime, opShapeOf(e), v.inputs, v.outputs[0].values, 24)
          perKernel.set(e.kernel, (perKernel.get(e.kernel) ?? 0) + n)
        }
        // ordinary training values: nothing refused, every kernel checked
        expect(refusedAmbiguousNaN.size).toBe(0)
        expect([...perKernel.keys()].sort()).toEqual(expect.arrayContaining(['BatchMatMul', 'Transpose', 'Exp', 'Mean', 'Max', 'Sum', 'Sqrt']))
        for (const [k, n] of perKernel) expect(n, k).toBeGreaterThan(0)
      }, 120_000)
    }
  }

  it('one op of each kernel as an element claim: the true bits are accepted, one flipped bit is refused', async () => {
    const { p, tr } = await traced(SIZES[1][1], SIZES[1][2], 'adam')
    const seen = new Set<string>()
    for (let i = 0; i < tr.entries.length; i++) {
      const e = tr.entries[i]
      if (e.kernel === STATE_PSEUDO_KERNEL || seen.has(e.kernel)) continue
      seen.add(e.kernel)
      const v = tr.values[i]
      const flat = v.outputs[0].values.length - 1
      const bits = bitsAt(v.outputs[0].values, flat)
      const good = checkElementClaim(W, e, buildElementClaim(p.runtime, e, v.inputs, flat, bits))
      expect(good.valid, `${e.kernel}: ${good.reason ?? ''}`).toBe(true)
      const bad = checkElementClaim(W, e, buildElementClaim(p.runtime, e, v.inputs, flat, bits ^ 1))
      expect(bad.valid, e.kernel).toBe(false)
    }
    expect(seen.size).toBeGreaterThanOrEqual(15)
  }, 60_000)
})
