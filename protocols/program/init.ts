import { chunkedStateRoot } from '../commit/chunked.js'
import { stateRoot } from '../commit/state.js'
import { sizeOf, type DType, type TensorData } from '../commit/tensor.js'
import { deriveSeed } from '../data/prng.js'
import { INIT_DOMAIN } from '../data/order.js'
import { alea } from './alea.js'
import type { TaskProgram } from './program.js'
import { stateIsChunked } from './state-commitment.js'
import { EMBEDDING_RANGE, gptWeights, type GptInit } from './gpt.js'
import { SEEDED_INITIALIZERS, validateTopology, type LayerJson } from './topology.js'

// The program's initial state, element by element, without tfjs: what
// node/train's Trainer.create holds before step 0. Weights in model order
// (kernel, then bias, per layer), each from its initializer with seed
// deriveSeed(seed, INIT_DOMAIN, w) (node/train/model.ts seededTopology); then,
// for Adam, the first moments, the second moments (zeros) and accBeta1,
// accBeta2 (scalars beta1, beta2). Uniform initializers are tfjs's
// VarianceScaling arithmetic over UniformRandom (seedrandom's alea keyed by the
// seed's decimal string): element i is min + range * (draw i), rounded to
// float32 when stored. Element i costs i + 1 draws, so the chain can judge one
// element without materialising the tensor.

export type InitRule =
  | { kind: 'uniform', seed: string, min: number, range: number }
  | { kind: 'fill', value: number }

export interface StateTensorInit { name: string, shape: number[], dtype: DType, rule: InitRule }

export class InitUnsupported extends Error {
  constructor (message: string) { super(message); this.name = 'InitUnsupported' }
}

// tfjs-layers VarianceScaling subclasses with uniform distribution: [scale, mode]
const UNIFORM: Record<string, [number, 'fanIn' | 'fanAvg']> = {
  GlorotUniform: [1.0, 'fanAvg'],
  HeUniform: [2.0, 'fanIn'],
  LecunUniform: [1.0, 'fanIn'],
  LeCunUniform: [1.0, 'fanIn']
}

/** tfjs-layers computeFans (channelsLast). */
function fans (shape: readonly number[]): [number, number] {
  if (shape.length === 2) return [shape[0], shape[1]]
  if (shape.length >= 3 && shape.length <= 5) {
    let rf = 1
    for (let i = 0; i < shape.length - 2; i++) rf *= shape[i]
    return [shape[shape.length - 2] * rf, shape[shape.length - 1] * rf]
  }
  const p = Math.sqrt(sizeOf(shape))
  return [p, p]
}

function weightRule (className: string, shape: readonly number[], seed: number): InitRule {
  if (className === 'Zeros') return { kind: 'fill', value: 0 }
  const u = UNIFORM[className]
  if (u === undefined) throw new InitUnsupported(`initializer ${className} has no element-addressable initial value (supported: Zeros, ${Object.keys(UNIFORM).join(', ')})`)
  const [fanIn, fanOut] = fans(shape)
  let scale = u[0]
  scale /= u[1] === 'fanIn' ? Math.max(1, fanIn) : Math.max(1, (fanIn + fanOut) / 2)
  const limit = Math.sqrt(3 * scale)
  // tfjs: randomUniform(shape, -limit, limit) → UniformRandom(min, max): range = max - min
  return { kind: 'uniform', seed: String(seed), min: -limit, range: limit - -limit }
}

// GPT weights (gpt.ts): tfjs's glorotUniform, randomUniform(-0.05, 0.05)
// (tfjs's Embedding default), ones and zeros, seeded like Layers weights.
function gptRule (init: GptInit, shape: readonly number[], seed: number): InitRule {
  if (init === 'Ones') return { kind: 'fill', value: 1 }
  if (init === 'Zeros') return { kind: 'fill', value: 0 }
  if (init === 'Embedding') return { kind: 'uniform', seed: String(seed), min: -EMBEDDING_RANGE, range: EMBEDDING_RANGE - -EMBEDDING_RANGE }
  return weightRule(init, shape, seed)
}

function weightsLayout (program: TaskProgram): StateTensorInit[] {
  const m = program.model
  if (m.gpt !== undefined) {
    const text = program.dataset.text
    if (text === undefined) throw new InitUnsupported('a GPT program needs dataset.text')
    return gptWeights(m.gpt, text).map((w, i) => ({ name: w.name, shape: [...w.shape], dtype: 'float32', rule: gptRule(w.init, w.shape, deriveSeed(program.seed, INIT_DOMAIN, i)) }))
  }
  const topo = m.topology
  const weights = validateTopology(topo, program.dataset.rowSize, program.dataset.classes).weights
  const layers = new Map<string, LayerJson>()
  topo.config.layers.forEach((l, i) => layers.set(typeof l.config.name === 'string' ? l.config.name : `layer${i}`, l))
  return weights.map((w, i): StateTensorInit => {
    const c = layers.get(w.layer)?.config ?? {}
    const key = w.name === 'kernel' ? 'kernel_initializer' : 'bias_initializer'
    const init = c[key] as { class_name?: unknown } | undefined | null
    const className = typeof init?.class_name === 'string' ? init.class_name : (w.name === 'kernel' ? 'GlorotUniform' : 'Zeros')
    if (!SEEDED_INITIALIZERS.has(className) && className !== 'Zeros') throw new InitUnsupported(`initializer ${className}`)
    return { name: `${w.layer}/${w.name}`, shape: [...w.shape], dtype: 'float32', rule: weightRule(className, w.shape, deriveSeed(program.seed, INIT_DOMAIN, i)) }
  })
}

/** The state tensors of a program's initial state in the trainer's order, with how each element is initialised. */
export function initLayout (program: TaskProgram): StateTensorInit[] {
  const out = weightsLayout(program)
  const o = program.optimizer
  if (o.name === 'adam') {
    const zeros = { kind: 'fill', value: 0 } as const
    const n = out.length
    for (let i = 0; i < n; i++) out.push({ name: `${out[i].name}/m`, shape: [...out[i].shape], dtype: 'float32', rule: zeros })
    for (let i = 0; i < n; i++) out.push({ name: `${out[i].name}/v`, shape: [...out[i].shape], dtype: 'float32', rule: zeros })
    out.push({ name: 'adam/accBeta1', shape: [], dtype: 'float32', rule: { kind: 'fill', value: o.beta1 } })
    out.push({ name: 'adam/accBeta2', shape: [], dtype: 'float32', rule: { kind: 'fill', value: o.beta2 } })
  }
  return out
}

/** Element `flat` (row-major) of an initial state tensor, as the float32 value tfjs stores. */
export function initialElement (t: StateTensorInit, flat: number): number {
  if (!Number.isInteger(flat) || flat < 0 || flat >= sizeOf(t.shape)) throw new RangeError(`element ${flat} outside ${t.name} [${t.shape.join(',')}]`)
  const r = t.rule
  if (r.kind === 'fill') return Math.fround(r.value)
  const next = alea(r.seed)
  for (let i = 0; i < flat; i++) next()
  return Math.fround(r.min + r.range * next())
}

/** All elements of an initial state tensor. */
export function initialTensor (t: StateTensorInit): TensorData {
  const values = new Float32Array(sizeOf(t.shape))
  const r = t.rule
  if (r.kind === 'fill') values.fill(r.value)
  else {
    const next = alea(r.seed)
    for (let i = 0; i < values.length; i++) values[i] = r.min + r.range * next()
  }
  return { shape: [...t.shape], dtype: t.dtype, values }
}

export function initialState (program: TaskProgram): TensorData[] {
  return initLayout(program).map(initialTensor)
}

/** stateRoots[0] of an honest proof of `program`: under its state commitment (row + column, or chunked). */
export function initialStateRoot (program: TaskProgram): Uint8Array {
  const state = initialState(program)
  return stateIsChunked(program) ? chunkedStateRoot(state, 0) : stateRoot(state, 0)
}
