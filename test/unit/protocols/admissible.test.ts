import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import * as tf from '@tensorflow/tfjs'
import { sizeOf } from '../../../protocols/commit/tensor.js'
import { isBatchLayout } from '../../../protocols/data/layout.js'
import { CPU_RUNTIME, NODE_RUNTIME, WASM_RUNTIME, admissibility, batchInputs, newProgram, parseProgramBytes, programBytes, stepKernels, validateProgram, type TaskProgram } from '../../../protocols/program/index.js'
import { elementOperands, opShapeOf, supportsElement } from '../../../protocols/reference/index.js'
import { STATE_PSEUDO_KERNEL } from '../../../protocols/trace/trace.js'
import { initBackend } from '../../../node/train/backend.js'
import { datasetRef, syntheticDataset, type Dataset } from '../../../node/train/dataset.js'
import { Trainer } from '../../../node/train/trainer.js'
import { traceStep, type StepTrace } from '../../../node/train/tracer.js'

// The admissibility rule against reality: a real training step of every
// admissible configuration is traced on the pinned runtime, and what the
// chain would have to judge (every op's element, every batch input's row)
// must be exactly what the rule promises it can.

let ds: Dataset
const CONFIGS = [['mlp', 'sgd'], ['mlp', 'adam'], ['cnn', 'sgd'], ['cnn', 'adam']] as const

function program (model: string, optimizer: 'sgd' | 'adam', runtime = WASM_RUNTIME): TaskProgram {
  return newProgram({ model, dataset: datasetRef(ds), steps: 3, optimizer, batchSize: 4, seed: 3, checkpointEvery: 3, runtime })
}

async function trace (p: TaskProgram): Promise<StepTrace> {
  const t = await Trainer.create(p, ds)
  try { t.runStep(); return traceStep(t) } finally { t.dispose() }
}

const traced = (tr: StepTrace): string[] => [...new Set(tr.entries.filter(e => e.kernel !== STATE_PSEUDO_KERNEL).map(e => e.kernel))].sort()

beforeAll(async () => {
  await initBackend('wasm')
  ds = syntheticDataset(5, 64, 8)
})

describe('admissibility vs traced training steps (wasm)', () => {
  for (const [model, optimizer] of CONFIGS) {
    it(`${model} ${optimizer}: every traced op has an element reference, every batch input a data claim`, async () => {
      const p = program(model, optimizer)
      const v = validateProgram(p)
      const adm = admissibility(v, supportsElement)
      expect(adm.reason).toBe('')
      expect(adm.ok).toBe(true)
      const tr = await trace(p)
      // the rule's kernel list is exactly what the step runs: no kernel the chain was not asked about
      expect(traced(tr)).toEqual(stepKernels(p))
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

describe('tfjs-cpu is not admissible', () => {
  beforeAll(async () => { await tf.setBackend('cpu') })
  afterAll(async () => { await tf.setBackend('wasm') })

  for (const [model, optimizer] of CONFIGS) {
    it(`${model} ${optimizer}: its step runs kernels without a cpu reference`, async () => {
      const p = program(model, optimizer, CPU_RUNTIME)
      const adm = admissibility(validateProgram(p), supportsElement)
      expect(adm.ok).toBe(false)
      const tr = await trace(p)
      expect(traced(tr)).toEqual(stepKernels(p))
      // the missing kernels are really emitted: a dispute could narrow to one of them
      const unjudgeable = traced(tr).filter(k => !supportsElement(CPU_RUNTIME, k))
      expect(unjudgeable.length).toBeGreaterThan(0)
      expect(adm.missingKernels).toEqual(unjudgeable)
      expect(adm.reason).toMatch(new RegExp(`no element reference for .*${unjudgeable[0]}`))
    })
  }
})

describe('the rule', () => {
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
