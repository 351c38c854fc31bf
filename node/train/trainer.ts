import * as tf from '@tensorflow/tfjs'
import type { TensorData, DType } from '../../protocols/commit/tensor.js'
import { stateRootUnder, type CommitScheme } from '../../protocols/commit/scheme.js'
import { commitSchemeOf } from '../../protocols/program/commit-scheme.js'
import { DataOrder } from '../../protocols/data/order.js'
import type { TaskProgram } from '../../protocols/program/program.js'
import { datasetBatches, type BatchSource } from './batch-source.js'
import { inputRows, labelRows, normalizeRows, type Dataset } from './dataset.js'
import { GptNet } from './gpt.js'
import { buildModel } from './model.js'
import { LayersNet, type Net, type StateVar } from './net.js'

// The deterministic training loop: custom loop with optimizer.minimize (never
// model.fit, which shuffles with Math.random), data order from protocols/data,
// batch bytes built in plain JS. The state is the trainable weights in model
// order, then (Adam) first moments, second moments, accBeta1, accBeta2 — the
// beta powers are state so a resumed run continues bit for bit.

export type { StateVar } from './net.js'

interface AdamInternals {
  accBeta1: tf.Variable
  accBeta2: tf.Variable
  accumulatedFirstMoment: Array<{ originalName: string, variable: tf.Variable }>
  accumulatedSecondMoment: Array<{ originalName: string, variable: tf.Variable }>
}

export interface Batch { rows: Uint32Array, x: Float32Array, y: Float32Array }

export class Trainer {
  /** number of completed steps (= index of the next step to run) */
  step = 0
  readonly state: StateVar[]
  private readonly order: DataOrder
  private readonly inputShape: number[]

  private constructor (
    readonly program: TaskProgram,
    readonly dataset: Dataset,
    readonly net: Net,
    readonly optimizer: tf.Optimizer,
    readonly weights: StateVar[],
    private readonly batches: BatchSource
  ) {
    this.order = new DataOrder(program.seed, dataset.trainSize, program.batchSize)
    const topo = program.model.topology
    this.inputShape = topo === undefined ? [dataset.rowSize] : (topo.config.layers[0].config.batch_input_shape as Array<number | null>).slice(1) as number[]
    this.state = [...weights]
    if (program.optimizer.name === 'adam') {
      const a = optimizer as unknown as AdamInternals
      // create the slots now (tfjs does it lazily on the first step) so the
      // step-0 state already contains them
      weights.forEach((w, i) => {
        a.accumulatedFirstMoment[i] = { originalName: `${w.variable.name}/m`, variable: tf.tidy(() => tf.zerosLike(w.variable).variable(false)) }
        a.accumulatedSecondMoment[i] = { originalName: `${w.variable.name}/v`, variable: tf.tidy(() => tf.zerosLike(w.variable).variable(false)) }
      })
      weights.forEach((w, i) => this.state.push({ name: `${w.name}/m`, variable: a.accumulatedFirstMoment[i].variable }))
      weights.forEach((w, i) => this.state.push({ name: `${w.name}/v`, variable: a.accumulatedSecondMoment[i].variable }))
      this.state.push({ name: 'adam/accBeta1', variable: a.accBeta1 }, { name: 'adam/accBeta2', variable: a.accBeta2 })
    }
  }

  /** `batches`: where the batch bytes come from (default: the dataset's rows; a replay may take the rows served on chain) */
  static async create (program: TaskProgram, dataset: Dataset, batches: BatchSource = datasetBatches(dataset)): Promise<Trainer> {
    if (dataset.sha256 !== program.dataset.sha256) throw new Error(`dataset hash ${dataset.sha256} does not match the program's ${program.dataset.sha256}`)
    const m = program.model
    let net: Net
    if (m.gpt !== undefined) {
      if (program.dataset.text === undefined) throw new Error('a GPT program needs a text dataset')
      net = new GptNet(m.gpt, program.dataset.text, program.seed)
    } else {
      net = new LayersNet(await buildModel(program))
    }
    const o = program.optimizer
    const optimizer = o.name === 'sgd' ? tf.train.sgd(o.learningRate) : tf.train.adam(o.learningRate, o.beta1, o.beta2, o.epsilon)
    return new Trainer(program, dataset, net, optimizer, net.weights, batches)
  }

  /** Rows and normalised batch bytes of 0-based step `step`. */
  batch (step: number): Batch {
    const rows = this.order.batch(step).slice()
    return { rows, ...this.batches.batch(step, rows) }
  }

  batchTensors (b: Batch): { x: tf.Tensor, y: tf.Tensor } {
    const n = b.rows.length
    return { x: tf.tensor(b.x, [n, ...this.inputShape], 'float32'), y: tf.tensor(b.y, [n, this.dataset.classes], 'float32') }
  }

  /** The loss closure of one step (exposed so the tape recorder runs the very same code). */
  lossFn (x: tf.Tensor, y: tf.Tensor): () => tf.Scalar {
    return () => this.net.loss(x, y)
  }

  /** Runs step `this.step` (0-based) and returns the batch loss; `onBatch` sees the batch tensors first (tape recorder). */
  runStep (onBatch?: (x: tf.Tensor, y: tf.Tensor) => void): number {
    const { x, y } = this.batchTensors(this.batch(this.step))
    onBatch?.(x, y)
    const cost = this.optimizer.minimize(this.lossFn(x, y), true, this.weights.map(w => w.variable))
    const loss = cost === null ? NaN : cost.dataSync()[0]
    cost?.dispose(); x.dispose(); y.dispose()
    this.step++
    return loss
  }

  stateTensors (): TensorData[] {
    return this.state.map(s => ({ shape: [...s.variable.shape], dtype: s.variable.dtype as DType, values: s.variable.dataSync() as Float32Array }))
  }

  /**
   * Like stateTensors, but into buffers the caller owns and may transfer:
   * `reuse` (same sizes) when given, else new ones. On wasm the values are
   * copied straight from the wasm heap, so a training loop that recycles its
   * buffers allocates nothing per step.
   */
  stateCopies (reuse?: Float32Array[]): TensorData[] {
    const b = tf.backend() as unknown as { dataIdMap?: { get: (id: object) => { memoryOffset: number } | undefined }, wasm?: { HEAPU8: Uint8Array } }
    const wasm = tf.getBackend() === 'wasm' && b.wasm !== undefined && b.dataIdMap !== undefined
    // fresh buffers: one ArrayBuffer for the whole state, so handing it to the
    // hashing thread transfers one buffer rather than one per tensor
    const fits = reuse !== undefined && reuse.length === this.state.length && this.state.every((s, i) => reuse[i].length === s.variable.size)
    const fresh = fits ? undefined : new ArrayBuffer(this.state.reduce((a, s) => a + s.variable.size * 4, 0))
    let off = 0
    return this.state.map((s, i) => {
      const v = s.variable
      const n = v.size
      const dst = fresh === undefined ? (reuse as Float32Array[])[i] : new Float32Array(fresh, off, n)
      off += n * 4
      const d = wasm ? b.dataIdMap?.get(v.dataId) : undefined
      if (d !== undefined && b.wasm !== undefined && v.dtype === 'float32') dst.set(new Float32Array(b.wasm.HEAPU8.buffer, d.memoryOffset, n))
      else dst.set(v.dataSync() as Float32Array)
      return { shape: [...v.shape], dtype: v.dtype as DType, values: dst }
    })
  }

  /** Name, shape and dtype of each state tensor, in state order (a checkpoint's layout, without reading values). */
  stateLayout (): Array<{ name: string, shape: number[], dtype: DType }> {
    return this.state.map(s => ({ name: s.name, shape: [...s.variable.shape], dtype: s.variable.dtype as DType }))
  }

  stateNames (): string[] {
    return this.state.map(s => s.name)
  }

  /** The program's state commitment scheme (row + column unless it says chunked). */
  get commitScheme (): CommitScheme { return commitSchemeOf(this.program) }

  stateRoot (): Uint8Array {
    return stateRootUnder(this.commitScheme, this.stateTensors(), this.step)
  }

  /** Restores a state (tensors in state order) reached after `step` steps. */
  loadState (tensors: readonly TensorData[], step: number): void {
    if (tensors.length !== this.state.length) throw new Error(`state has ${tensors.length} tensors, the program needs ${this.state.length}`)
    tensors.forEach((t, i) => {
      const v = this.state[i].variable
      if (t.dtype !== v.dtype || t.shape.length !== v.shape.length || t.shape.some((d, k) => d !== v.shape[k])) {
        throw new Error(`state tensor ${i} (${this.state[i].name}) is ${t.dtype}[${t.shape.join(',')}], expected ${v.dtype}[${v.shape.join(',')}]`)
      }
      tf.tidy(() => v.assign(tf.tensor(t.values, t.shape, t.dtype)))
    })
    this.step = step
  }

  /** Test-set accuracy with the current weights (a Layers model; NaN for a GPT: see validationLoss). */
  evaluate (batch = 1000): number {
    if (!(this.net instanceof LayersNet)) return NaN
    return evaluateModel(this.net.model, this.dataset, this.inputShape, batch)
  }

  /** Mean cross-entropy (nats per token) of the held-out windows of a text dataset. */
  validationLoss (): number {
    if (!(this.net instanceof GptNet) || this.dataset.testSize === 0) return NaN
    return this.net.meanLoss(this.dataset.testSize, (from, n) => {
      const rows = new Uint32Array(n).map((_, i) => from + i)
      return { x: inputRows(this.dataset, rows, 'test'), y: labelRows(this.dataset, rows, 'test') }
    })
  }

  dispose (): void {
    this.net.dispose()
    this.optimizer.dispose()
    if (this.program.optimizer.name === 'adam') for (const s of this.state.slice(this.weights.length)) s.variable.dispose()
  }
}

export function evaluateModel (model: tf.LayersModel, ds: Dataset, inputShape: number[], batch = 1000): number {
  if (ds.testSize === 0) return NaN
  let correct = 0
  for (let s = 0; s < ds.testSize; s += batch) {
    const n = Math.min(batch, ds.testSize - s)
    const rows = new Uint32Array(n).map((_, i) => s + i)
    const pred = tf.tidy(() => {
      const x = tf.tensor(normalizeRows(ds.testImages, ds.rowSize, rows), [n, ...inputShape], 'float32')
      return (model.predict(x) as tf.Tensor).argMax(-1)
    })
    const p = pred.dataSync(); pred.dispose()
    for (let i = 0; i < n; i++) if (p[i] === ds.testLabels[s + i]) correct++
  }
  return correct / ds.testSize
}
