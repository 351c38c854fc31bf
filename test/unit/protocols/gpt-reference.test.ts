import { beforeAll, describe, expect, it } from 'vitest'
import { buildElementClaim, checkElementClaim } from '../../../protocols/reference/claim.js'
import { opShapeOf } from '../../../protocols/reference/index.js'
import { newProgram, type TaskProgram } from '../../../protocols/program/index.js'
import { ASCII_VOCAB, type GptSpec } from '../../../protocols/program/gpt.js'
import { STATE_PSEUDO_KERNEL } from '../../../protocols/tape/tape.js'
import { initBackend } from '../../../node/train/backend.js'
import { datasetRef, textDataset, type Dataset } from '../../../node/train/dataset.js'
import { Trainer } from '../../../node/train/trainer.js'
import { tapeStep, type StepTape } from '../../../node/train/tape-recorder.js'
import type { TensorData } from '../../../protocols/commit/index.js'
import { bitsAt, check, checkOp, f32FromBits, refusedAmbiguousNaN } from './ref-check.js'

// the special-values corpus (as in special-values.test.ts)
const SPECIAL = [
  0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007fffff, 0x807fffff, 0x00800000, 0x80800000, 0x3f800000, 0xbf800000,
  0x7f7fffff, 0xff7fffff, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000, 0x7fc00001, 0xffc00001, 0x7f800001, 0xff800001
]
const refused = (): number => [...refusedAmbiguousNaN.values()].reduce((a, b) => a + b, 0)

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

async function taped (gpt: Partial<GptSpec>, context: number, optimizer: 'sgd' | 'adam'): Promise<{ p: TaskProgram, tr: StepTape }> {
  const ds: Dataset = textDataset('fortunes-min', { vocab: ASCII_VOCAB, context })
  const p = newProgram({ model: 'gpt', gpt, dataset: datasetRef(ds), steps: 4, optimizer, batchSize: 3, seed: 11, learningRate: 0.01 })
  const t = await Trainer.create(p, ds)
  try {
    t.runStep(); t.runStep() // a state off the initial one
    return { p, tr: tapeStep(t) }
  } finally { t.dispose() }
}

describe('GPT training step: every op = its element reference (wasm)', () => {
  for (const [what, gpt, context] of SIZES) {
    for (const optimizer of ['adam', 'sgd'] as const) {
      it(`${what}, ${optimizer}`, async () => {
        const { p, tr } = await taped(gpt, context, optimizer)
        const refusedBefore = refused()
        const perKernel = new Map<string, number>()
        for (let i = 0; i < tr.entries.length; i++) {
          const e = tr.entries[i]
          if (e.kernel === STATE_PSEUDO_KERNEL) continue
          const v = tr.values[i]
          const n = checkOp(p.runtime, opShapeOf(e), v.inputs, v.outputs[0].values, 24)
          perKernel.set(e.kernel, (perKernel.get(e.kernel) ?? 0) + n)
        }
        // ordinary training values: nothing refused, every kernel checked
        expect(refused()).toBe(refusedBefore)
        expect([...perKernel.keys()].sort()).toEqual(expect.arrayContaining(['BatchMatMul', 'Transpose', 'Exp', 'Mean', 'Max', 'Sum', 'Sqrt']))
        for (const [k, n] of perKernel) expect(n, k).toBeGreaterThan(0)
      }, 120_000)
    }
  }

  it('the GPT\'s op shapes on the edge-value corpus (±0, subnormals, ±max, ±Inf, NaNs with payloads, signalling)', () => {
    let seed = 3
    const rand = (): number => { seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0; return seed / 2 ** 32 }
    const ORD = [0x3f800000, 0xbf000000, 0x40490fdb, 0xc1200000, 0x3e4ccccd, 0xce6e6b28] // 1, -0.5, pi, -10, 0.2, -1e9 (the mask)
    const mixed = (shape: number[], share: number): TensorData => {
      const n = shape.reduce((a, b) => a * b, 1)
      return f32FromBits(
        Array.from({ length: n }, () => rand() < share ? SPECIAL[Math.floor(rand() * SPECIAL.length)] : ORD[Math.floor(rand() * ORD.length)]), shape
      )
    }
    let n = 0
    for (const share of [0.05, 0.3]) {
      // attention: heads split/merged, scores, masked add, softmax pieces over the last axis of a rank-3 tensor
      const x4 = mixed([2, 5, 3, 4], share)
      n += check(W, 'Transpose', ['x'], [x4], { perm: [0, 2, 1, 3] })
      const q = mixed([6, 5, 4], share); const k = mixed([6, 5, 4], share)
      n += check(W, 'BatchMatMul', ['a', 'b'], [q, k], { transposeA: false, transposeB: true })
      n += check(W, 'BatchMatMul', ['a', 'b'], [mixed([6, 5, 5], share), q], { transposeA: true, transposeB: false })
      n += check(W, 'BatchMatMul', ['a', 'b'], [mixed([6, 5, 5], share), q], { transposeA: false, transposeB: false })
      const s = mixed([6, 5, 5], share)
      n += check(W, 'Add', ['a', 'b'], [s, mixed([5, 5], share)])
      for (const kernel of ['Max', 'Sum']) n += check(W, kernel, ['x'], [s], kernel === 'Max' ? { reductionIndices: [2], keepDims: true } : { axis: [2], keepDims: true })
      // layer norm: Mean over the last axis, broadcast [N,1] operands; bias/position gradients: Sum over axis 0
      const h = mixed([7, 6], share)
      n += check(W, 'Mean', ['x'], [h], { axis: [1], keepDims: true })
      n += check(W, 'Sub', ['a', 'b'], [h, mixed([7, 1], share)])
      n += check(W, 'RealDiv', ['a', 'b'], [h, mixed([7, 1], share)])
      n += check(W, 'Multiply', ['a', 'b'], [h, mixed([6], share)])
      n += check(W, 'Sum', ['x'], [mixed([3, 24], share)], { axis: [0], keepDims: false })
      // the one-hot embedding matmul and the dense layers (batch 1, no transpose), and their gradients
      n += check(W, 'BatchMatMul', ['a', 'b'], [mixed([1, 9, 7], share), mixed([1, 7, 6], share)], { transposeA: false, transposeB: false })
      n += check(W, 'BatchMatMul', ['a', 'b'], [mixed([1, 9, 7], share), mixed([1, 9, 6], share)], { transposeA: true, transposeB: false })
      n += check(W, 'BatchMatMul', ['a', 'b'], [mixed([1, 9, 6], share), mixed([1, 7, 6], share)], { transposeA: false, transposeB: true })
    }
    expect(n).toBeGreaterThan(1000)
  })

  it('one op of each kernel as an element claim: the true bits are accepted, one flipped bit is refused', async () => {
    const { p, tr } = await taped(SIZES[1][1], SIZES[1][2], 'adam')
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
