import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import * as tf from '@tensorflow/tfjs'
import { toHex } from '../../protocols/commit/merkle.js'
import { sizeOf } from '../../protocols/commit/tensor.js'
import { manifestHash } from '../../protocols/pol/checkpoint.js'
import { buildProof, type CheckpointRef, type ProofOfLearning } from '../../protocols/pol/proof.js'
import { programHash, validateProgram, type TaskProgram } from '../../protocols/program/program.js'
import { initBackend, type BackendChoice, type BackendInfo, type BackendLog } from './backend.js'
import { inputRows, labelRows, loadDatasetFor, type Dataset } from './dataset.js'
import { cachedDatasetFor } from './dataset-cache.js'
import { StateHasher } from './state-hasher.js'
import { RootsFile, atomicWrite, listCheckpoints, readCheckpoint, readJson, readProgram, readProof, readRoots } from './store.js'
import { Trainer, evaluateModel } from './trainer.js'
import { GptNet } from './gpt.js'
import { tokenize, unigramBaseline } from './text-dataset.js'
import { tapeStep, type StepTape } from './tape-recorder.js'
import { FaultInjector, hasFaults, type TrainFaults } from './fault.js'
import { NanWatch } from './nan-watch.js'
import { firstNaNOf } from '../../protocols/dispute/nan.js'

export interface Progress { step: number, steps: number, loss: number, samplesPerSec: number, etaSec: number }

export interface TrainOptions {
  program: TaskProgram
  outDir: string
  datasetDir?: string
  /** an already loaded dataset (tests); must match the program's hash */
  dataset?: Dataset
  backend?: BackendChoice
  resume?: boolean
  /** stop after this many completed steps (resume later with resume: true) */
  until?: number
  /** false: plain training without state roots/checkpoints/proof (benchmark baseline) */
  verifiable?: boolean
  /** hash state roots in a worker thread (default true when running compiled JS) */
  hashWorker?: boolean
  evaluate?: boolean
  log?: BackendLog
  onProgress?: (p: Progress) => void
  progressEveryMs?: number
  /** a checkpoint of state `step` is on disk, with every root before it */
  onCheckpoint?: (step: number) => void
  /** false: FAULT INJECTION, train on through a NaN and write a complete proof (an honest verifiable run ends at its first NaN) */
  haltOnNaN?: boolean
  /** FAULT INJECTION: claim the run diverged in 1-based step s (at the first matmul's element 0) without any NaN, to be paid without the rest of the work */
  fakeDivergence?: number
  /** FAULT INJECTION (tests, devnet, forced errors): corrupt ops/weights at given steps (node/train/fault.ts) */
  faults?: TrainFaults
}

export interface TrainResult {
  outDir: string
  programHash: string
  backend: BackendInfo
  steps: number
  completed: boolean
  resumedFrom?: number
  loss: number
  seconds: number
  samplesPerSec: number
  /** CPU time of the process (every thread) over the training loop: on a loaded machine, what the loop cost */
  cpuSeconds: number
  proofRoot?: string
  finalStateRoot?: string
  proofWritten: boolean
  accuracy?: number
  /** text tasks: held-out cross-entropy (nats/token), the corpus's unigram baseline, and a generated sample */
  text?: { validationLoss: number, unigramBaseline: number, sample: string }
  checkpoints: CheckpointRef[]
  /** the run ended at its first NaN (verifiable runs): step `step` (0-based) produced it at entry `entry`, element `flat` of its op tape; states 0..step are the proof's */
  divergence?: { step: number, entry: number, flat: number }
  /** how state roots were hashed; workerBusyMs = time the hashing thread was busy */
  hashing?: { mode: 'worker' | 'inline', workerBusyMs?: number, /** states the training thread hashed itself (worker behind) */ inlineJobs?: number }
}

const silent: BackendLog = { info: () => {}, warn: () => {} }

export async function trainTask (o: TrainOptions): Promise<TrainResult> {
  const log = o.log ?? silent
  const program = validateProgram(o.program)
  const phash = programHash(program)
  const backend = await initBackend(o.backend ?? 'auto', program.runtime, log)
  let verifiable = o.verifiable !== false
  if (verifiable && backend.runtime !== program.runtime) {
    log.warn(`the task pins ${program.runtime} but backend ${backend.name} implements ${backend.runtime}: training without a proof-of-learning (roots would not be reproducible by verifiers)`)
    verifiable = false
  }
  const dataset = o.dataset ?? loadDatasetFor(program.dataset, o.datasetDir)
  if (dataset.sha256 !== program.dataset.sha256) throw new Error(`dataset hash ${dataset.sha256} does not match the task's ${program.dataset.sha256}`)
  const outDir = resolve(o.outDir)
  mkdirSync(outDir, { recursive: true })
  const trainer = await Trainer.create(program, dataset)
  const hasher = verifiable ? new StateHasher({ worker: o.hashWorker }) : undefined
  // fault injection: only when asked for (see fault.ts)
  const injector = hasFaults(o.faults) ? new FaultInjector(o.faults) : undefined
  // a NaN ends a verifiable run: every op output is watched for one
  let watch = verifiable && o.haltOnNaN !== false ? new NanWatch() : undefined
  let diverged: number | undefined
  const roots: Array<Promise<Uint8Array>> = []
  const checkpoints: CheckpointRef[] = []
  const pendingCheckpoints: Array<Promise<CheckpointRef>> = []
  const names = trainer.stateNames()
  const stateSizes = trainer.stateLayout().map(t => sizeOf(t.shape))
  let rootsFile: RootsFile | undefined
  let rootsWritten = 0 // roots handed to rootsFile: 0 … rootsWritten - 1
  // hands state `s` to the hasher: its root, and at checkpoint steps the
  // checkpoint (written by the hashing thread, then the roots since the last one here)
  const submitState = async (h: StateHasher, s: number): Promise<void> => {
    const isCheckpoint = s === 0 || s % program.checkpointEvery === 0 || s === program.steps
    const { result } = await h.submit({
      step: s, tensors: trainer.stateCopies(h.buffers(stateSizes)), checkpoint: isCheckpoint ? { runDir: outDir, programHash: phash, names } : undefined
    })
    roots.push(quiet(result.then(r => r.root)))
    if (isCheckpoint) {
      const from = rootsWritten
      const fresh = roots.slice(from)
      rootsWritten = roots.length
      pendingCheckpoints.push(quiet(result.then(async r => {
        // results arrive in order: every earlier root is known by now
        rootsFile?.write(from, await Promise.all(fresh))
        o.onCheckpoint?.(s)
        return { step: s, manifestHash: r.manifestHash as string }
      })))
    }
  }
  let resumedFrom: number | undefined
  try {
    const taskFile = join(outDir, 'task.json')
    if (o.resume === true) {
      if (!existsSync(taskFile)) throw new Error(`--resume: no task.json in ${outDir}`)
      const prev = readProgram(taskFile)
      if (programHash(prev) !== phash) throw new Error(`--resume: ${outDir} holds a run of a different task (program hash ${programHash(prev)})`)
    }
    if (o.resume !== true) {
      // a fresh run replaces the artefacts of an earlier run in the same directory
      for (const f of ['checkpoints', 'proof.json', 'state-roots.bin', 'model', 'run.json']) rmSync(join(outDir, f), { recursive: true, force: true })
    }
    atomicWrite(taskFile, JSON.stringify(program.info === undefined ? program : stripInfo(program), null, 2) + '\n')
    if (verifiable) {
      const listed = o.resume === true ? listCheckpoints(outDir).filter(s => s <= program.steps) : []
      // the latest checkpoint whose root state-roots.bin holds: a crash after a
      // checkpoint was written but before its roots were resumes from the one before
      const prevRoots = listed.length > 0 ? readRoots(outDir) : []
      const usable = listed.filter(s => s < prevRoots.length)
      let start: { c: number, ck: ReturnType<typeof readCheckpoint> } | undefined
      for (let i = usable.length - 1; i >= 0 && start === undefined; i--) {
        let ck: ReturnType<typeof readCheckpoint>
        try {
          ck = readCheckpoint(outDir, usable[i], { programHash: phash })
        } catch (e) {
          // e.g. a checkpoint cut short by the crash
          log.warn(`--resume: checkpoint ${usable[i]} is unusable (${(e as Error).message}); trying an earlier one`)
          continue
        }
        if (toHex(prevRoots[usable[i]]) === ck.manifest.stateRoot) start = { c: usable[i], ck }
        else log.warn(`--resume: state-roots.bin does not agree with checkpoint ${usable[i]}; trying an earlier one`)
      }
      if (listed.length > 0 && start === undefined) throw new Error(`--resume: state-roots.bin does not agree with any checkpoint (${listed.join(', ')})`)
      if (start !== undefined) {
        const { c, ck } = start
        if (c < listed[listed.length - 1]) log.warn(`--resume: checkpoints after ${c} have no roots in state-roots.bin (a crash before they were recorded): recomputed`)
        trainer.loadState(ck.tensors, c)
        for (const r of prevRoots.slice(0, c + 1)) roots.push(Promise.resolve(r))
        for (const s of listed.filter(x => x <= c)) {
          // each earlier checkpoint checked again (it will be served); c was just read
          const m = s === c ? ck : readCheckpoint(outDir, s, { programHash: phash })
          checkpoints.push({ step: s, manifestHash: manifestHash(m.manifest) })
        }
        rootsFile = new RootsFile(outDir, c + 1)
        rootsWritten = c + 1
        resumedFrom = c
        log.info(`resuming from checkpoint at step ${c}`)
      } else if (hasher !== undefined) {
        rootsFile = new RootsFile(outDir)
        injector?.initial(trainer)
        await submitState(hasher, 0)
      }
    } else if (o.resume === true) {
      throw new Error('--resume needs a verifiable run (checkpoints)')
    }
    const last = Math.min(program.steps, o.until ?? program.steps)
    const startStep = trainer.step
    const t0 = performance.now()
    const cpu0 = process.cpuUsage()
    let lastReport = 0
    let loss = NaN
    const every = o.progressEveryMs ?? 500
    while (trainer.step < last) {
      if (verifiable && o.fakeDivergence === trainer.step + 1) { diverged = trainer.step; break }
      injector?.before(trainer.step + 1)
      if (watch !== undefined) watch.seen = false
      loss = trainer.runStep()
      injector?.after(trainer)
      if (watch?.seen === true) { diverged = trainer.step - 1; break }
      const s = trainer.step
      if (hasher !== undefined) await submitState(hasher, s)
      const now = performance.now()
      if (o.onProgress !== undefined && (now - lastReport >= every || trainer.step === last)) {
        lastReport = now
        const done = trainer.step - startStep
        const sps = done * program.batchSize / ((now - t0) / 1000)
        o.onProgress({ step: trainer.step, steps: program.steps, loss, samplesPerSec: sps, etaSec: (program.steps - trainer.step) * program.batchSize / sps })
      }
    }
    const seconds = (performance.now() - t0) / 1000
    const cpu = process.cpuUsage(cpu0)
    const result: TrainResult = {
      outDir, programHash: phash, backend, steps: trainer.step, completed: trainer.step === program.steps, loss, seconds,
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
      samplesPerSec: (trainer.step - startStep) * program.batchSize / Math.max(seconds, 1e-9), proofWritten: false, checkpoints, resumedFrom
    }
    if (hasher !== undefined) {
      checkpoints.push(...await Promise.all(pendingCheckpoints))
      if (diverged !== undefined) {
        watch?.dispose(); watch = undefined
        result.divergence = await locateDivergence(trainer, hasher, diverged, {
          outDir, phash, names, stateSizes, checkpoints, fake: o.fakeDivergence !== undefined
        })
        result.steps = diverged
        const fresh = await Promise.all(roots.slice(rootsWritten))
        rootsFile?.write(rootsWritten, fresh)
        rootsWritten = roots.length
        log.warn(`the run diverged: step ${diverged + 1} produced a NaN (entry ${result.divergence.entry}, element ${result.divergence.flat} of its op tape); states 0..${diverged} are the proof's`)
      }
      const all = (await Promise.all(roots)).map(toHex)
      result.hashing = { mode: hasher.mode, workerBusyMs: hasher.workerBusyMs(), inlineJobs: hasher.inlineJobs }
      result.finalStateRoot = all[all.length - 1]
      if (result.completed || result.divergence !== undefined) {
        const proof = buildProof(phash, program.runtime, all, checkpoints)
        if (result.divergence !== undefined) proof.divergence = { entry: result.divergence.entry, flat: result.divergence.flat }
        atomicWrite(join(outDir, 'proof.json'), JSON.stringify(proof, null, 1) + '\n')
        result.proofRoot = proof.proofRoot
        result.proofWritten = true
      }
    }
    saveModel(join(outDir, 'model'), trainer, phash)
    if (o.evaluate !== false && result.completed && dataset.testSize > 0) {
      if (dataset.text === undefined) result.accuracy = trainer.evaluate()
      else result.text = textReport(trainer, dataset)
    }
    atomicWrite(join(outDir, 'run.json'), JSON.stringify({
      programHash: phash, backend, datasetDir: dataset.dir, datasetHash: dataset.sha256, steps: trainer.step, completed: result.completed,
      seconds, samplesPerSec: result.samplesPerSec, loss, accuracy: result.accuracy, text: result.text,
      proofRoot: result.proofRoot, divergence: result.divergence
    }, null, 2) + '\n')
    return result
  } finally {
    watch?.dispose()
    injector?.dispose()
    if (injector != null && injector.fired.length > 0) log.warn(`FAULT INJECTION: corrupted ${injector.fired.map(f => `${f.kernel}@${f.step}`).join(', ')}`)
    await hasher?.close()
    rootsFile?.close()
    trainer.dispose()
  }
}

/**
 * Where the run's first NaN is: step `k` is re-run from the checkpoint before
 * it under the tape recorder, and the first op output holding a NaN is the
 * divergence point. State k, the proof's last, is written as a checkpoint
 * (verifiers replay step k from it) unless it is one already.
 */
async function locateDivergence (
  trainer: Trainer, hasher: StateHasher, k: number,
  o: { outDir: string, phash: string, names: string[], stateSizes: number[], checkpoints: CheckpointRef[], fake?: boolean }
): Promise<{ step: number, entry: number, flat: number }> {
  const c = Math.max(...o.checkpoints.filter(x => x.step <= k).map(x => x.step))
  const ck = readCheckpoint(o.outDir, c, { programHash: o.phash })
  trainer.loadState(ck.tensors, c)
  while (trainer.step < k) trainer.runStep()
  if (!o.checkpoints.some(x => x.step === k)) {
    const r = await (
      await hasher.submit({
        step: k, tensors: trainer.stateCopies(hasher.buffers(o.stateSizes)), checkpoint: { runDir: o.outDir, programHash: o.phash, names: o.names }
      })
    ).result
    o.checkpoints.push({ step: k, manifestHash: r.manifestHash as string })
  }
  const tr = tapeStep(trainer)
  const first = firstNaNOf(tr.values.map(v => v.outputs))
  if (first === undefined && o.fake === true) return { step: k, entry: Math.max(0, tr.entries.findIndex(e => e.kernel === '_FusedMatMul' || e.kernel === 'BatchMatMul')), flat: 0 }
  if (first === undefined) throw new Error(`step ${k + 1} produced a NaN in training but not when taped again: the runtime is not deterministic here`)
  // only output 0 has element references: a first NaN elsewhere could not be judged
  if (first.output !== 0) throw new Error(`step ${k + 1}: the first NaN is in output ${first.output} of entry ${first.entry}, which no claim can address`)
  return { step: k, entry: first.entry, flat: first.flat }
}

const SAMPLE_PROMPT = 'The '
const SAMPLE_LENGTH = 200

function textReport (trainer: Trainer, ds: Dataset): NonNullable<TrainResult['text']> {
  const t = ds.text
  if (t === undefined || !(trainer.net instanceof GptNet)) throw new Error('not a text task')
  const vocab = t.spec.vocab
  const prompt = [...tokenize(new TextEncoder().encode(SAMPLE_PROMPT), vocab)]
  const sample = trainer.net.sample(prompt, SAMPLE_LENGTH, trainer.program.seed).map(i => vocab[i]).join('')
  return {
    validationLoss: trainer.validationLoss(), unigramBaseline: unigramBaseline(t.train, t.test, vocab.length, t.spec.context), sample: SAMPLE_PROMPT + sample
  }
}

/** Marks a promise as handled (it is awaited later; an early exit must not crash the process). */
function quiet<T> (p: Promise<T>): Promise<T> {
  p.catch(() => {})
  return p
}

function stripInfo (p: TaskProgram & { info?: unknown }): TaskProgram {
  const { info: _i, ...rest } = p
  return rest
}

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

export interface RunAtOptions { proofDir: string, step: number, datasetDir?: string, backend?: BackendChoice, log?: BackendLog }

/** A run directory opened at step `step` (1-based): its program, proof, dataset and the nearest checkpoint before the step. */
export interface RunAt {
  dir: string
  program: TaskProgram
  phash: string
  proof: ProofOfLearning
  ref: CheckpointRef
  ds: Dataset
  ck: ReturnType<typeof readCheckpoint>
}

/** A run directory opened for re-execution: its program, proof and dataset, on the task's runtime. */
export type OpenRun = Omit<RunAt, 'ref' | 'ck'>

/** What replay, taping and dispute taping share: open the run, check the runtime, load the dataset. */
export async function openRun (o: Omit<RunAtOptions, 'step'>, what: string): Promise<OpenRun> {
  const dir = resolve(o.proofDir)
  const program = readProgram(join(dir, 'task.json'))
  const phash = programHash(program)
  const proof: ProofOfLearning = readProof(dir)
  const run = existsSync(join(dir, 'run.json')) ? readJson(join(dir, 'run.json'), 'run info') as { datasetDir?: string } : {}
  const backend = await initBackend(o.backend ?? 'auto', program.runtime, o.log)
  if (backend.runtime !== program.runtime) throw new Error(`${what} needs the task's runtime ${program.runtime}, but backend ${backend.name} implements ${backend.runtime}`)
  const ds = cachedDatasetFor(program.dataset, o.datasetDir ?? run.datasetDir)
  return { dir, program, phash, proof, ds }
}

/** The checkpoint a re-execution of 1-based step `step` starts from: the latest at or before step - 1. */
export function checkpointBefore (proof: ProofOfLearning, step: number): CheckpointRef {
  // a diverged proof's last step (steps + 1) is taped too: it ends at its divergence point
  const last = proof.steps + (proof.divergence !== undefined ? 1 : 0)
  if (!Number.isInteger(step) || step < 1 || step > last) throw new Error(`step must be in [1, ${last}], got ${step}`)
  const ref = proof.checkpoints.filter(c => c.step <= step - 1).pop()
  if (ref === undefined) throw new Error(`no checkpoint at or before step ${step - 1}`)
  return ref
}

/** openRun, then the nearest checkpoint before `o.step`. */
export async function openRunAt (o: RunAtOptions, what: string): Promise<RunAt> {
  const r = await openRun(o, what)
  const ref = checkpointBefore(r.proof, o.step)
  const ck = readCheckpoint(r.dir, ref.step, { programHash: r.phash, manifestHash: ref.manifestHash })
  return { ...r, ref, ck }
}

export interface TapeOptions { proofDir: string, step: number, datasetDir?: string, backend?: BackendChoice, log?: BackendLog }

/** Op tape of step `step` (1-based) of a run, re-executed from the nearest checkpoint. */
export async function tapeRunStep (o: TapeOptions): Promise<StepTape> {
  const { program, ref, ds, ck } = await openRunAt(o, 'taping')
  const trainer = await Trainer.create(program, ds)
  try {
    trainer.loadState(ck.tensors, ref.step)
    while (trainer.step < o.step - 1) trainer.runStep()
    return tapeStep(trainer)
  } finally {
    trainer.dispose()
  }
}
