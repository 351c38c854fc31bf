import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import * as tf from '@tensorflow/tfjs'
import type { TaskProgram } from '../../protocols/program/program.js'
import { initBackend, type BackendChoice, type BackendLog } from './backend.js'
import { inputRows, labelRows, loadDatasetFor, type Dataset } from './dataset.js'
import { atomicWrite, readJson, readProgram } from './store.js'
import { evaluateModel, type Trainer } from './trainer.js'
import { GptNet } from './gpt.js'
import { tokenize, unigramBaseline } from './text-dataset.js'
import { SAMPLE_LENGTH, SAMPLE_PROMPT } from './text-report.js'

// A run's trained weights as a tfjs layers-model, and their test accuracy
// (or, for a GPT, held-out loss) read back from disk.

/** Writes the current weights as a tfjs layers-model (model.json + weights.bin). */
export function saveModel (dir: string, trainer: Trainer, phash: string): void {
  const specs = trainer.weights.map(w => ({ name: w.name, shape: [...w.variable.shape], dtype: 'float32' }))
  const parts = trainer.weights.map(w => w.variable.dataSync() as Float32Array)
  const total = parts.reduce((n, p) => n + p.byteLength, 0)
  const bin = new Uint8Array(total)
  let off = 0
  for (const p of parts) { bin.set(new Uint8Array(p.buffer, p.byteOffset, p.byteLength), off); off += p.byteLength }
  atomicWrite(join(dir, 'weights.bin'), bin)
  atomicWrite(join(dir, 'model.json'), JSON.stringify({
    format: 'layers-model',
    generatedBy: 'proofswarm',
    convertedBy: null,
    modelTopology: trainer.program.model.topology ?? null,
    ...(trainer.program.model.gpt !== undefined ? { gpt: trainer.program.model.gpt, text: trainer.program.dataset.text } : {}),
    weightsManifest: [{ paths: ['weights.bin'], weights: specs }],
    proofswarm: { programHash: phash, step: trainer.step }
  }) + '\n')
}

export interface EvaluateOptions { modelDir: string, datasetDir?: string, backend?: BackendChoice, log?: BackendLog }
/** accuracy: NaN for a GPT, which reports validationLoss (nats per token on the held-out windows) */
export interface EvaluateResult {
  accuracy: number
  validationLoss?: number
  testSize: number
  modelDir: string
  step?: number
  backend: string
  text?: { validationLoss: number, unigramBaseline: number, sample: string }
}

/** Held-out loss of saved GPT weights (saveModel writes them in state order with their names). */
function evaluateSavedGpt (
  program: TaskProgram, ds: Dataset, specs: tf.io.WeightsManifestEntry[], bin: Buffer
): { validationLoss: number, unigramBaseline: number, sample: string } {
  const gpt = program.model.gpt; const text = program.dataset.text
  if (gpt === undefined || text === undefined) throw new Error('not a GPT program')
  const net = new GptNet(gpt, text, program.seed)
  try {
    if (specs.length !== net.weights.length) throw new Error(`model.json lists ${specs.length} weights, the GPT has ${net.weights.length}`)
    let off = 0
    net.weights.forEach((w, i) => {
      const s = specs[i]; const n = w.variable.size
      if (s.name !== w.name || s.shape.length !== w.variable.shape.length || s.shape.some((d, k) => d !== w.variable.shape[k])) throw new Error(`model.json weight ${i} is ${s.name} [${s.shape.join(',')}], expected ${w.name} [${w.variable.shape.join(',')}]`)
      if (off + n * 4 > bin.length) throw new Error('weights.bin is too short')
      const v = new Float32Array(bin.buffer.slice(bin.byteOffset + off, bin.byteOffset + off + n * 4))
      tf.tidy(() => w.variable.assign(tf.tensor(v, w.variable.shape)))
      off += n * 4
    })
    if (off !== bin.length) throw new Error('weights.bin is longer than the weights it lists')
    const validationLoss = net.meanLoss(ds.testSize, (from, n) => {
      const rows = new Uint32Array(n).map((_, i) => from + i)
      return { x: inputRows(ds, rows, 'test'), y: labelRows(ds, rows, 'test') }
    })
    // the same report as training's (textReport): baseline of the corpus and a sample after the same prompt
    const t = ds.text
    if (t === undefined) throw new Error('a GPT program without a text dataset')
    const vocab = t.spec.vocab
    const sample = net.sample([...tokenize(new TextEncoder().encode(SAMPLE_PROMPT), vocab)], SAMPLE_LENGTH, program.seed).map(i => vocab[i]).join('')
    return { validationLoss, unigramBaseline: unigramBaseline(t.train, t.test, vocab.length, t.spec.context), sample: SAMPLE_PROMPT + sample }
  } finally { net.dispose() }
}

/** Test accuracy of a saved model (a run directory or its model/ subdirectory). */
export async function evaluateSaved (o: EvaluateOptions): Promise<EvaluateResult> {
  let modelDir = resolve(o.modelDir)
  if (!existsSync(join(modelDir, 'model.json')) && existsSync(join(modelDir, 'model', 'model.json'))) modelDir = join(modelDir, 'model')
  const mj = readJson(join(modelDir, 'model.json'), 'model') as { modelTopology: unknown, weightsManifest: Array<{ paths: string[], weights: tf.io.WeightsManifestEntry[] }>, proofswarm?: { step?: number } }
  const runDir = dirname(modelDir)
  const program = readProgram(join(runDir, 'task.json'))
  const run = existsSync(join(runDir, 'run.json')) ? readJson(join(runDir, 'run.json'), 'run info') as { datasetDir?: string } : {}
  const backend = await initBackend(o.backend ?? 'auto', program.runtime, o.log)
  const ds = loadDatasetFor(program.dataset, o.datasetDir ?? run.datasetDir)
  const m = mj.weightsManifest?.[0]
  if (m === undefined || !Array.isArray(m.paths) || m.paths.length !== 1 || !/^[\w.-]+$/.test(m.paths[0])) throw new Error('model.json: unsupported weightsManifest')
  const bin = readFileSync(join(modelDir, m.paths[0]))
  if (program.model.gpt !== undefined) {
    const text = evaluateSavedGpt(program, ds, m.weights, bin)
    return { accuracy: NaN, validationLoss: text.validationLoss, text, testSize: ds.testSize, modelDir, step: mj.proofswarm?.step, backend: backend.name }
  }
  const model = await tf.loadLayersModel(tf.io.fromMemory({
    modelTopology: mj.modelTopology as tf.io.ModelJSON['modelTopology'],
    weightSpecs: m.weights,
    weightData: bin.buffer.slice(bin.byteOffset, bin.byteOffset + bin.byteLength)
  }))
  if (program.model.topology === undefined) throw new Error('the program has no Layers topology')
  const first = program.model.topology.config.layers[0].config.batch_input_shape as number[]
  const accuracy = evaluateModel(model, ds, first.slice(1))
  model.dispose()
  return { accuracy, testSize: ds.testSize, modelDir, step: mj.proofswarm?.step, backend: backend.name }
}
