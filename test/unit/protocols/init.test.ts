import { beforeAll, describe, expect, it } from 'vitest'
import { toHex } from '../../../protocols/commit/merkle.js'
import { alea } from '../../../protocols/program/alea.js'
import { InitUnsupported, initLayout, initialElement, initialState, initialStateRoot, initialTensor } from '../../../protocols/program/init.js'
import { newProgram, type TaskProgram } from '../../../protocols/program/index.js'
import { initBackend } from '../../../node/train/backend.js'
import { datasetRef, syntheticDataset, textDataset, type Dataset } from '../../../node/train/dataset.js'
import { ASCII_VOCAB } from '../../../protocols/program/gpt.js'
import { Trainer } from '../../../node/train/trainer.js'
import seedrandom from 'seedrandom'

// The pure initial state (protocols/program/init.ts) against the engine:
// Trainer.create builds the model through tfjs's modelFromJSON with seeded
// initialisers; every element's bits and the state root must be the same.

let ds: Dataset
beforeAll(async () => {
  await initBackend('wasm')
  ds = syntheticDataset(3, 64, 8)
})

const bits = (v: ArrayLike<number>): Uint32Array => new Uint32Array(Float32Array.from(v as ArrayLike<number>).buffer)

/**
 * The pure initial state of `p` against Trainer.create's: layout (names,
 * shapes, dtypes), every element's bits, the state root, and single
 * elements (first, middle, last of each tensor) computed on their own.
 */
async function expectInitialStateOfEngine (p: TaskProgram, data: Dataset): Promise<ReturnType<typeof initLayout>> {
  const t = await Trainer.create(p, data)
  try {
    const engine = t.stateTensors()
    const layout = initLayout(p)
    expect(layout.map(l => l.name)).toEqual(t.stateNames())
    expect(layout.map(l => [l.shape, l.dtype])).toEqual(t.stateLayout().map(l => [l.shape, l.dtype]))
    initialState(p).forEach((x, i) => {
      const want = bits(engine[i].values)
      const got = bits(x.values)
      let diff = -1
      for (let k = 0; k < want.length && diff < 0; k++) if (want[k] !== got[k]) diff = k
      expect(diff, `${layout[i].name}: first differing element`).toBe(-1)
      expect(got.length, layout[i].name).toBe(want.length)
    })
    expect(toHex(initialStateRoot(p))).toBe(toHex(t.stateRoot()))
    for (const [i, l] of layout.entries()) {
      const n = engine[i].values.length
      for (const k of [0, n >> 1, n - 1]) expect(bits([initialElement(l, k)])[0]).toBe(bits([engine[i].values[k]])[0])
    }
    return layout
  } finally { t.dispose() }
}

describe('initial state, element-addressable and pure', () => {
  it('alea is seedrandom\'s, draw for draw', () => {
    for (const seed of ['0', '1', '4294967295', '123456789']) {
      const a = alea(seed); const b = seedrandom.alea(seed)
      for (let i = 0; i < 2000; i++) expect(a()).toBe(b())
    }
  })

  for (const model of ['mlp', 'cnn'] as const) {
    for (const optimizer of ['sgd', 'adam'] as const) {
      it(`${model} × ${optimizer}: every element's bits and the state root equal Trainer.create's`, async () => {
        const p: TaskProgram = newProgram({ model, dataset: datasetRef(ds), steps: 3, optimizer, batchSize: 8, seed: 1234567 })
        await expectInitialStateOfEngine(p, ds)
      }, 60_000)
    }
  }

  for (const optimizer of ['sgd', 'adam'] as const) {
    it(`gpt × ${optimizer}: embeddings, layer norms, dense weights and slots equal the engine's bit for bit`, async () => {
      const text = textDataset('fortunes-min', { vocab: ASCII_VOCAB, context: 16 })
      const p = newProgram({ model: 'gpt', gpt: { layers: 2, dModel: 24, heads: 3, mlp: 40 }, dataset: datasetRef(text), steps: 3, optimizer, batchSize: 4, seed: 987654 })
      const layout = await expectInitialStateOfEngine(p, text)
      expect(new Set(layout.map(l => l.rule.kind === 'uniform' ? `uniform ${l.rule.min}` : `fill ${l.rule.value}`)).size).toBeGreaterThanOrEqual(4)
    }, 60_000)
  }

  it('another seed gives another state; a normal initializer is refused, not guessed', () => {
    const p = newProgram({ model: 'mlp', dataset: datasetRef(ds), steps: 3, optimizer: 'sgd', batchSize: 8, seed: 1 })
    const q = { ...p, seed: 2 }
    expect(toHex(initialStateRoot(p))).not.toBe(toHex(initialStateRoot(q)))
    const l = initLayout(p)[0]
    expect(initialTensor(l).values[5]).toBe(initialElement(l, 5))
    const normal = JSON.parse(JSON.stringify(p)) as TaskProgram
    normal.model.topology!.config.layers[0].config.kernel_initializer = { class_name: 'GlorotNormal', config: { seed: null } }
    expect(() => initLayout(normal)).toThrow(InitUnsupported)
  })
})
