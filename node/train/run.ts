import { existsSync, mkdirSync, rmSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { toHex } from '../../protocols/commit/merkle.js'
import { commitSchemeOf } from '../../protocols/program/commit-scheme.js'
import { sizeOf } from '../../protocols/commit/tensor.js'
import { manifestHash } from '../../protocols/pol/checkpoint.js'
import { buildProof, type CheckpointRef } from '../../protocols/pol/proof.js'
import { programHash, rootEveryOf, validateProgram, type TaskProgram } from '../../protocols/program/program.js'
import { initBackend, type BackendChoice, type BackendInfo, type BackendLog } from './backend.js'
import { loadDatasetFor, type Dataset } from './dataset.js'
import { StateHasher } from './state-hasher.js'
import { atomicWrite, readCheckpoint, readProgram } from './store.js'
import { Trainer } from './trainer.js'
import { FaultInjector, hasFaults, type TrainFaults } from './fault.js'
import { NanWatch } from './nan-watch.js'
import { ProofRecorder } from './proof-recorder.js'
import { findResumePoint } from './resume.js'
import { locateDivergence } from './divergence-point.js'
import { textReport, type TextReport } from './text-report.js'
import { saveModel } from './saved-model.js'

// The training loop of a task: fresh or resumed, verifiable (every committed
// state's root recorded — every state's at m = 1, every m-th and the last's
// with roots every m steps —, checkpoints, a proof-of-learning at the end) or plain.

export { saveModel, evaluateSaved, type EvaluateOptions, type EvaluateResult } from './saved-model.js'
export {
  openRun, openRunAt, checkpointBefore, tapeRunStep, type RunAtOptions, type RunAt, type OpenRun, type TapeOptions
} from './run-dir.js'

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
  /** hash state roots in a worker thread (default: when running compiled JS in a process that may use more than one core; inline on one) */
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
  /** FAULT INJECTION (tests, devnet): corrupt ops/weights at given steps (node/train/fault.ts) */
  faults?: TrainFaults
  /**
   * Truebit forced errors at on-chain steps f (the solver's VRF draw): the root of
   * each state f + 1 is committed as its forced mark (protocols/dispute/forced-leaf.ts);
   * the states, their continuation and every checkpoint stay honest. A resumed run
   * marks the same leaves again (the draw is deterministic).
   */
  forcedSteps?: number[]
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
  text?: TextReport
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
  const rootEvery = rootEveryOf(program)
  const phash = programHash(program)
  // the committed states' roots and checkpoints are under the program's scheme (docs/training.md "Chunked roots: design")
  const scheme = commitSchemeOf(program)
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
  const names = trainer.stateNames()
  const stateSizes = trainer.stateLayout().map(t => sizeOf(t.shape))
  const recorder = verifiable
    ? new ProofRecorder(new StateHasher({ worker: o.hashWorker }), {
        outDir, phash, names, stateSizes, checkpointEvery: program.checkpointEvery, steps: program.steps, rootEvery, onCheckpoint: o.onCheckpoint,
        stateCommitment: scheme,
        ...(o.forcedSteps !== undefined ? { forcedSteps: o.forcedSteps } : {})
      })
    : undefined
  const hasher = recorder?.hasher
  // fault injection: only when asked for (see fault.ts)
  const injector = hasFaults(o.faults) ? new FaultInjector(o.faults) : undefined
  // a NaN ends a verifiable run: every op output is watched for one
  let watch = verifiable && o.haltOnNaN !== false ? new NanWatch() : undefined
  let diverged: number | undefined
  const checkpoints: CheckpointRef[] = recorder?.checkpoints ?? []
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
    if (recorder !== undefined) {
      const start = o.resume === true ? findResumePoint(outDir, program.steps, phash, log, rootEvery, scheme) : undefined
      if (start !== undefined) {
        const { c, ck, listed, prevRoots } = start
        if (c < listed[listed.length - 1]) log.warn(`--resume: checkpoints after ${c} have no roots in state-roots.bin (a crash before they were recorded): recomputed`)
        trainer.loadState(ck.tensors, c)
        // each earlier checkpoint checked again (it will be served); c was just read
        const earlier = listed.filter(x => x <= c).map(s => {
          const m = s === c ? ck : readCheckpoint(outDir, s, { programHash: phash }, { stateCommitment: scheme })
          return { step: s, manifestHash: manifestHash(m.manifest) }
        })
        recorder.resumeAt(c, prevRoots, earlier)
        resumedFrom = c
        log.info(`resuming from checkpoint at step ${c}`)
      } else {
        recorder.startFresh()
        injector?.initial(trainer)
        await recorder.submit(trainer, 0)
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
      if (recorder !== undefined) await recorder.submit(trainer, s)
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
    if (recorder !== undefined && hasher !== undefined) {
      await recorder.settleCheckpoints()
      if (diverged !== undefined) {
        watch?.dispose(); watch = undefined
        const located = await locateDivergence(trainer, hasher, diverged, {
          outDir, phash, names, stateSizes, checkpoints, fake: o.fakeDivergence !== undefined, stateCommitment: scheme
        })
        result.divergence = { step: located.step, entry: located.entry, flat: located.flat }
        result.steps = diverged
        // the proof of `diverged` steps commits its last state whatever its remainder mod m
        if (!recorder.commits(diverged)) recorder.addRoot(located.stateRoot)
        await recorder.writeRemainingRoots()
        log.warn(`the run diverged: step ${diverged + 1} produced a NaN (entry ${result.divergence.entry}, element ${result.divergence.flat} of its op tape); states 0..${diverged} are the proof's`)
      }
      const all = (await Promise.all(recorder.roots)).map(toHex)
      result.hashing = { mode: hasher.mode, workerBusyMs: hasher.workerBusyMs(), inlineJobs: hasher.inlineJobs }
      result.finalStateRoot = all[all.length - 1]
      if (result.completed || result.divergence !== undefined) {
        const proof = buildProof(phash, program.runtime, all, checkpoints, rootEvery > 1 ? { rootEvery, steps: result.steps } : undefined)
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
    recorder?.close()
    trainer.dispose()
  }
}

function stripInfo (p: TaskProgram & { info?: unknown }): TaskProgram {
  const { info: _i, ...rest } = p
  return rest
}
