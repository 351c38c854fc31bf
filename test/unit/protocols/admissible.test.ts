import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import * as tf from '@tensorflow/tfjs'
import { matrixView, sizeOf, type TensorData, type TypedValues } from '../../../protocols/commit/tensor.js'
import { isBatchLayout } from '../../../protocols/data/layout.js'
import { CPU_RUNTIME, NODE_RUNTIME, WASM_PSK_RUNTIME, WASM_RUNTIME, admissibility, batchInputs, newProgram, stateEntryBound, parseProgramBytes, programBytes, stepKernels, validateProgram, type LayerJson, type SequentialJson, type TaskProgram } from '../../../protocols/program/index.js'
import { computeElement, elementOperands, opShapeOf, supportsElement, type OperandRef } from '../../../protocols/reference/index.js'
import { MAX_ENTRY_BYTES, STATE_PSEUDO_KERNEL, encodeEntry } from '../../../protocols/tape/tape.js'
import { initBackend } from '../../../node/train/backend.js'
import { datasetRef, syntheticDataset, textDataset, type Dataset } from '../../../node/train/dataset.js'
import { ASCII_VOCAB } from '../../../protocols/program/gpt.js'
import { CLAIM_FRAME, leafBytes, operandFrame, stepRoom } from '../../../protocols/program/claim-room.js'
import { Trainer } from '../../../node/train/trainer.js'
import { tapeStep, type StepTape } from '../../../node/train/tape-recorder.js'

// The admissibility rule against reality: a real training step of every
// admissible configuration is taped on the pinned runtime, and what the
// chain would have to judge (every op's element, every batch input's row)
// must be exactly what the rule promises it can.

let ds: Dataset
const CONFIGS = [['mlp', 'sgd'], ['mlp', 'adam'], ['cnn', 'sgd'], ['cnn', 'adam']] as const

function program (model: string, optimizer: 'sgd' | 'adam', runtime = WASM_RUNTIME): TaskProgram {
  return newProgram({ model, dataset: datasetRef(ds), steps: 3, optimizer, batchSize: 4, seed: 3, checkpointEvery: 3, runtime })
}

async function tape (p: TaskProgram): Promise<StepTape> {
  const t = await Trainer.create(p, ds)
  try { t.runStep(); return tapeStep(t) } finally { t.dispose() }
}

/**
 * claim-room.ts's bound against the real step: every op's element claim at
 * the sampled elements (its operand slices, the output's largest leaf) and
 * every taped tensor's largest leaf fit what the bound says a step needs.
 */
function checkRoom (p: TaskProgram, tr: StepTape, samples = 40): void {
  const room = stepRoom(validateProgram(p))
  for (const e of tr.entries) {
    for (const t of [...e.inputs, ...e.outputs]) expect(leafBytes(t.shape), `a leaf of ${e.kernel} [${t.shape.join(',')}]`).toBeLessThanOrEqual(room.leaf.bytes)
    if (e.kernel === STATE_PSEUDO_KERNEL) continue
    const op = opShapeOf(e); const n = sizeOf(op.output.shape)
    for (let f = 0; f < n; f += Math.max(1, Math.floor(n / samples))) {
      const refs = elementOperands(p.runtime, op, f)
      const bytes = refs.reduce((sum, r) => {
        const { rows, cols } = matrixView(op.inputs[r.input].shape)
        return sum + 4 * (r.axis === 'row' ? cols : rows)
      }, 0)
      expect(bytes + operandFrame(refs.length, refs.map(r => op.inputs[r.input].shape)) + leafBytes(op.output.shape) + CLAIM_FRAME, `${e.kernel} element ${f}`).toBeLessThanOrEqual(room.claim.bytes)
    }
  }
}

const taped = (tr: StepTape): string[] => [...new Set(tr.entries.filter(e => e.kernel !== STATE_PSEUDO_KERNEL).map(e => e.kernel))].sort()

beforeAll(async () => {
  await initBackend('wasm')
  ds = syntheticDataset(5, 64, 8)
})

describe('admissibility vs taped training steps (wasm)', () => {
  for (const [model, optimizer] of CONFIGS) {
    it(`${model} ${optimizer}: every taped op has an element reference, every batch input a data claim`, async () => {
      const p = program(model, optimizer)
      const v = validateProgram(p)
      const adm = admissibility(v, supportsElement)
      expect(adm.reason).toBe('')
      expect(adm.ok).toBe(true)
      const tr = await tape(p)
      // the rule's kernel list is exactly what the step runs: no kernel the chain was not asked about
      expect(taped(tr)).toEqual(stepKernels(p))
      checkRoom(p, tr)
      const dataShapes = new Map(batchInputs(v).map(b => [b.name, b]))
      let data = 0
      for (const e of tr.entries) {
        if (e.kernel === STATE_PSEUDO_KERNEL) continue
        expect(supportsElement(p.runtime, e.kernel), e.kernel).toBe(true)
        // element claims are for output 0: a second output would be unjudgeable
        expect(e.outputs.length, e.kernel).toBe(1)
        // the reference accepts this op's attributes and shapes, at both ends of its output
        const op = opShapeOf(e)
        for (const flat of [0, sizeOf(op.output.shape) - 1]) expect(() => elementOperands(p.runtime, op, flat), `${e.kernel} ${JSON.stringify(e.attrs)}`).not.toThrow()
        for (const inp of e.inputs) {
          if (inp.ref.kind !== 'data') continue
          const b = dataShapes.get(inp.ref.name)!
          expect(inp.shape).toEqual(b.shape)
          expect(isBatchLayout(inp.shape, p.batchSize, b.width)).toBe(true)
          data++
        }
      }
      expect(data).toBeGreaterThanOrEqual(2)
    })
  }
})

// Other topologies the validator accepts (same padding, strides, pool 3x3, a Reshape input,
// no bias, a deeper MLP), at batch 1 and 64: the step's kernels are among the rule's, and each
// op's reference reproduces the backend's values on a sample of elements.
const g = { class_name: 'GlorotUniform', config: { seed: null } }
const conv = (name: string, filters: number, extra: Record<string, unknown>): LayerJson => ({ class_name: 'Conv2D', config: { name, filters, kernel_size: [3, 3], activation: 'relu', kernel_initializer: g, ...extra } })
const dense = (name: string, units: number, activation: string, extra: Record<string, unknown> = {}): LayerJson => ({ class_name: 'Dense', config: { name, units, activation, kernel_initializer: g, ...extra } })
const seq = (layers: LayerJson[]): SequentialJson => ({ class_name: 'Sequential', config: { layers } })
const VARIANTS: Record<string, SequentialJson> = {
  'conv same/stride 2, pool 3x3 same': seq([conv('c1', 4, { batch_input_shape: [null, 28, 28, 1], padding: 'same', strides: [2, 2] }), { class_name: 'MaxPooling2D', config: { name: 'p', pool_size: [3, 3], strides: [2, 2], padding: 'same' } }, { class_name: 'Flatten', config: { name: 'f' } }, dense('d', 10, 'linear')]),
  'reshape input, 5x4 kernel, no bias': seq([{ class_name: 'Reshape', config: { name: 'r', batch_input_shape: [null, 784], target_shape: [28, 28, 1] } }, conv('c1', 2, { use_bias: false, kernel_size: [5, 4] }), { class_name: 'Flatten', config: { name: 'f' } }, dense('h', 16, 'relu', { use_bias: false }), dense('d', 10, 'linear')]),
  'three dense layers': seq([dense('a', 64, 'relu', { batch_input_shape: [null, 784] }), dense('b', 50, 'relu'), dense('d', 10, 'linear')])
}

function slice (t: TensorData, r: OperandRef): TypedValues {
  const { rows, cols } = matrixView(t.shape)
  if (r.axis === 'row') return t.values.subarray(r.index * cols, (r.index + 1) * cols)
  const out = new Float32Array(rows)
  for (let i = 0; i < rows; i++) out[i] = t.values[i * cols + r.index]
  return out
}
const bits = (x: number): number => new Uint32Array(Float32Array.of(x).buffer)[0]

describe('admissibility vs taped steps of other admissible topologies (wasm)', () => {
  for (const [name, topology] of Object.entries(VARIANTS)) {
    for (const [optimizer, batchSize] of [['sgd', 1], ['adam', 64]] as const) {
      it(`${name}, ${optimizer}, batch ${batchSize}`, async () => {
        const p = newProgram({ model: 'mlp', dataset: datasetRef(ds), steps: 2, optimizer, batchSize, seed: 3 })
        p.model = { name, topology }
        const v = validateProgram(p)
        // every kernel judgeable; at batch 64 a convolution's kernel gradient reads columns too long for a claim
        const adm = admissibility(v, supportsElement)
        expect(adm.missingKernels).toEqual([])
        expect(adm.badInputs).toEqual([])
        expect(adm.ok).toBe(batchSize === 1 || name === 'three dense layers')
        const tr = await tape(p)
        expect(taped(tr).filter(k => !stepKernels(p).includes(k))).toEqual([])
        checkRoom(p, tr)
        let checked = 0
        for (const e of tr.entries) {
          if (e.kernel === STATE_PSEUDO_KERNEL) continue
          expect(e.outputs.length, e.kernel).toBe(1)
          const op = opShapeOf(e); const n = sizeOf(op.output.shape); const vals = tr.values[e.index]
          for (let f = 0; f < n; f += Math.max(1, Math.floor(n / 40))) {
            const got = computeElement(p.runtime, op, f, elementOperands(p.runtime, op, f).map(r => slice(vals.inputs[r.input], r)))
            const want = vals.outputs[0].values[f]
            if (!(Number.isNaN(got) && Number.isNaN(want))) expect(bits(got), `${e.kernel} element ${f} ${JSON.stringify(e.attrs)}`).toBe(bits(want))
            checked++
          }
          for (const inp of e.inputs) if (inp.ref.kind === 'data') expect(isBatchLayout(inp.shape, batchSize, inp.ref.name === 'x' ? ds.rowSize : ds.classes)).toBe(true)
        }
        expect(checked).toBeGreaterThan(500)
      })
    }
  }
})

describe('admissibility vs taped GPT steps (wasm)', () => {
  for (const optimizer of ['sgd', 'adam'] as const) {
    for (const [what, gpt, context] of [['default sizes', {}, 64], ['1 layer, 3 heads, context 5', { layers: 1, dModel: 12, heads: 3, mlp: 8 }, 5]] as const) {
      it(`gpt ${what}, ${optimizer}: the rule's kernels are exactly the step's, each judgeable; x and y have data claims`, async () => {
        const text = textDataset('fortunes-min', { vocab: ASCII_VOCAB, context })
        const p = newProgram({ model: 'gpt', gpt, dataset: datasetRef(text), steps: 2, optimizer, batchSize: 2, seed: 9 })
        const v = validateProgram(p)
        const adm = admissibility(v, supportsElement)
        expect(adm.reason).toBe('')
        const t = await Trainer.create(p, text)
        let tr: StepTape
        try { tr = tapeStep(t) } finally { t.dispose() }
        expect(taped(tr)).toEqual(stepKernels(p))
        checkRoom(p, tr, 8)
        const widths = new Map(batchInputs(v).map(b => [b.name, b.width]))
        expect(widths.get('x')).toBe(context * ASCII_VOCAB.length)
        let data = 0
        for (const e of tr.entries) {
          if (e.kernel === STATE_PSEUDO_KERNEL) continue
          expect(e.outputs.length, e.kernel).toBe(1)
          const op = opShapeOf(e)
          for (const flat of [0, sizeOf(op.output.shape) - 1]) expect(() => elementOperands(p.runtime, op, flat), `${e.kernel} ${JSON.stringify(e.attrs)}`).not.toThrow()
          for (const inp of e.inputs) if (inp.ref.kind === 'data') { expect(isBatchLayout(inp.shape, p.batchSize, widths.get(inp.ref.name)!)).toBe(true); data++ }
        }
        expect(data).toBeGreaterThanOrEqual(2)
        // the @state entry a state claim carries: within the bound the rule computes, and within the chain's limits
        const st = tr.entries[tr.entries.length - 1]
        expect(st.kernel).toBe(STATE_PSEUDO_KERNEL)
        const bound = stateEntryBound(v)
        expect(bound.inputs).toBe(st.inputs.length)
        expect(encodeEntry(st).length).toBeLessThanOrEqual(bound.bytes)
        expect(bound.bytes).toBeLessThanOrEqual(MAX_ENTRY_BYTES)
      }, 60_000)
    }
  }

  it('a GPT whose state is too many tensors for a state claim is refused (its @state entry could not be judged)', () => {
    const text = textDataset('fortunes-min', { vocab: ASCII_VOCAB, context: 8 })
    const big = validateProgram(newProgram({ model: 'gpt', gpt: { layers: 12, dModel: 8, heads: 2, mlp: 8 }, dataset: datasetRef(text), steps: 2, batchSize: 2, optimizer: 'adam' }))
    expect(stateEntryBound(big).bytes).toBeGreaterThan(MAX_ENTRY_BYTES)
    const adm = admissibility(big, supportsElement)
    expect(adm.ok).toBe(false)
    expect(adm.missingKernels).toEqual([])
    expect(adm.reason).toMatch(/@state entry .* exceeds what a state claim carries/)
    // the same model with SGD (a third of the state tensors) fits
    const { info: _info, ...bare } = big
    expect(admissibility(validateProgram({ ...bare, optimizer: { name: 'sgd', learningRate: 0.1 } }), supportsElement).ok).toBe(true)
  })

  it('a GPT is refused when any one of its kernels lacks a reference (never passed silently)', () => {
    const text = textDataset('fortunes-min', { vocab: ASCII_VOCAB, context: 8 })
    const v = validateProgram(newProgram({ model: 'gpt', gpt: { layers: 1, dModel: 8, heads: 2, mlp: 8 }, dataset: datasetRef(text), steps: 2, batchSize: 2 }))
    for (const k of stepKernels(v)) {
      const adm = admissibility(v, (rt, kk) => kk !== k && supportsElement(rt, kk))
      expect(adm, k).toMatchObject({ ok: false, missingKernels: [k] })
    }
  })
})

describe('tfjs-cpu is not admissible', () => {
  beforeAll(async () => { await tf.setBackend('cpu') })
  afterAll(async () => { await tf.setBackend('wasm') })

  for (const [model, optimizer] of CONFIGS) {
    it(`${model} ${optimizer}: its step runs kernels without a cpu reference`, async () => {
      const p = program(model, optimizer, CPU_RUNTIME)
      const adm = admissibility(validateProgram(p), supportsElement)
      expect(adm.ok).toBe(false)
      const tr = await tape(p)
      expect(taped(tr)).toEqual(stepKernels(p))
      // the missing kernels are really emitted: a dispute could narrow to one of them
      const unjudgeable = taped(tr).filter(k => !supportsElement(CPU_RUNTIME, k))
      expect(unjudgeable.length).toBeGreaterThan(0)
      expect(adm.missingKernels).toEqual(unjudgeable)
      expect(adm.reason).toMatch(new RegExp(`no element reference for .*${unjudgeable[0]}`))
    })
  }
})

describe('the rule', () => {
  it('psk1 (tfjs-wasm@4.22.0-simd+psk1): the zoo programs are admissible, their steps the same kernels (taped on psk1 in psk-reference.test.ts)', () => {
    for (const [model, optimizer] of CONFIGS) {
      const adm = admissibility(validateProgram(program(model, optimizer, WASM_PSK_RUNTIME)), supportsElement)
      expect(adm.reason).toBe('')
      expect(adm.kernels).toEqual(stepKernels(program(model, optimizer)))
    }
    // its table is the old one's with psk1's own kernels, none missing
    for (const k of ['BatchMatMul', '_FusedMatMul', 'Conv2D', 'Conv2DBackpropInput', 'Conv2DBackpropFilter', 'MaxPoolGrad', 'MaxPool', 'Relu', 'Exp']) expect(supportsElement(WASM_PSK_RUNTIME, k), k).toBe(true)
  })

  it('refuses runtimes without references and reference tables missing a kernel', () => {
    const p = validateProgram(program('cnn', 'adam', NODE_RUNTIME))
    expect(admissibility(p, supportsElement)).toMatchObject({ ok: false })
    expect(admissibility(p, supportsElement).reason).toMatch(/not bitwise reproducible/)
    const wasm = validateProgram(program('cnn', 'adam'))
    const noPoolGrad = admissibility(wasm, (rt, k) => k !== 'MaxPoolGrad' && supportsElement(rt, k))
    expect(noPoolGrad).toMatchObject({ ok: false, missingKernels: ['MaxPoolGrad'] })
    // the mlp has no pooling: unaffected
    expect(admissibility(validateProgram(program('mlp', 'adam')), (rt, k) => k !== 'MaxPoolGrad' && supportsElement(rt, k)).ok).toBe(true)
  })

  it('program bytes: canonical, parsed back to the same program', () => {
    const p = program('cnn', 'sgd')
    const bytes = programBytes(p)
    const back = parseProgramBytes(bytes)
    expect(programBytes(back)).toEqual(bytes)
    expect(() => parseProgramBytes(new TextEncoder().encode(JSON.stringify(p, null, 2)))).toThrow(/not canonical/)
    expect(() => parseProgramBytes(Uint8Array.of(0xff, 0xfe))).toThrow(/not UTF-8 JSON/)
    expect(() => parseProgramBytes(new Uint8Array(16 * 1024 + 1))).toThrow(/more than 16384/)
  })
})
