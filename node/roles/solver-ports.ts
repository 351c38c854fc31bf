import { availableParallelism } from 'node:os'
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { PublishedRun } from '../../actors/ports.js'
import { canonicalJson } from '../../protocols/program/canonical-json.js'
import { programHash, validateProgram, type TaskProgram } from '../../protocols/program/program.js'
import { validateProof } from '../../protocols/pol/proof.js'
import { RUN_INDEX_PREFIX, RUN_INDEX_VERSION, validateRunIndex, type RunIndex } from '../../protocols/verification/run-index.js'
import { chunkRootEntry, codedRoot, codingParams } from '../../protocols/erasure/index.js'
import { fromHex, toHex } from '../../protocols/commit/merkle.js'
import type { TaskInfo } from '../chain/client.js'
import { CHUNKS_FILE, CHUNK_LIST_FILE, codeRunWith } from '../erasure/coded-run.js'
import { CodeAhead, CodingPool } from '../erasure/coding-pool.js'
import { corruptCheckpoints } from '../availability/fault.js'
import { runEngineJob } from '../engine/engine.js'
import { anyEngineFault } from '../engine/protocol.js'
import { PortsPart, enc, hex0x } from './ports-part.js'
import { trainingEvents } from './work-progress.js'
import { checkCommitments } from './task-commitments.js'
import { checkpointDir } from '../train/store.js'
import { MAX_PROGRAM_FETCH_BYTES } from '../../protocols/verification/fetch-limits.js'
import { blockSignal } from './block-signal.js'
import { pskAddonMissing } from '../train/psk-available.js'

// The solver's ports: the task's program and dataset fetched and checked
// against the chain, training in the engine, the run published as shards
// (checkpoints erasure-coded) and its proof committed on chain.

export class SolverPorts extends PortsPart {
  private async programFor (taskId: number, task: TaskInfo): Promise<{ program: TaskProgram, datasetCid?: string, programCid: string, submitterPeer: string }> {
    const rec = await this.init.book.waitFor(taskId, r => r.task != null, 60_000, 'task announcement')
    const programCid = rec.task!.programCid
    const bytes = await this.shards.fetchBytes(programCid, { maxBytes: MAX_PROGRAM_FETCH_BYTES, preferred: [rec.task!.submitter] })
    const { info: _i, ...program } = validateProgram(JSON.parse(new TextDecoder().decode(bytes)))
    if (hex0x(programHash(program)) !== task.programHash) {
      throw new Error(`the program fetched for task ${taskId} hashes to ${programHash(program)}, but the chain has ${task.programHash}`)
    }
    return { program, datasetCid: rec.task!.datasetCid, programCid, submitterPeer: rec.task!.submitter }
  }

  /** `signal`: the actor no longer wants the result; the training job's engine process is ended */
  async train (taskId: number, signal?: AbortSignal): Promise<PublishedRun> {
    const task = await this.taskOrThrow(taskId)
    const { program, datasetCid, programCid, submitterPeer } = await this.programFor(taskId, task)
    // the dataset's download has half of what is left of the solve window, however slowly it is
    // served: a task it cannot fetch goes back for the fee (job-scheduler.ts), not to the timeout's slash
    const chain = await this.chain()
    const best = await chain.bestNumber()
    const by = blockSignal(chain, best + Math.ceil((task.deadline - best) / 2))
    let datasetDir: string | undefined
    try {
      datasetDir = await this.datasetDirFor(program, datasetCid, signal !== undefined ? AbortSignal.any([signal, by.signal]) : by.signal, submitterPeer)
    } finally { by.stop() }
    const runDir = join(this.dataDir, 'tasks', String(taskId), 'run')
    const taskFile = join(this.dataDir, 'tasks', String(taskId), 'task.json')
    mkdirSync(runDir, { recursive: true })
    writeFileSync(taskFile, canonicalJson(program))
    // disputes are judged against the submitter's roots: a task whose roots are not its program's and dataset's is a trap
    await checkCommitments(taskId, task, taskFile, datasetDir, canonicalJson(program.dataset), this.log)
    const resume = existsSync(join(runDir, 'task.json')) && existsSync(join(runDir, 'checkpoints'))
    this.log.info({ taskId, steps: program.steps, resume }, resume ? 'resuming training from the last checkpoint' : 'training')
    const jsKernels = pskAddonMissing(program.runtime)
    if (jsKernels !== undefined) this.log.warn({ taskId, runtime: program.runtime, reason: jsKernels }, `no usable psk1 addon on this peer: training task ${taskId} with the JavaScript kernels (far slower): build it with npm run build:kernels`)
    this.progress.set(taskId, { taskId, phase: 'training', step: 0, steps: program.steps, updatedAt: Date.now() })
    // disputes: fault injection / forced error for the training job
    const faults = await this.init.trainFaults?.(taskId, task)
    if (faults !== undefined && anyEngineFault(faults)) this.log.warn({ taskId, faults }, 'faults for training (a forced error and/or FAULT INJECTION)')
    // checkpoints are erasure-coded in a worker thread as training writes them (node/erasure/coding-pool.ts)
    const pool = new CodingPool(1)
    const ahead = new CodeAhead(runDir, pool)
    const curve: Array<[number, number]> = []
    const summary = await runEngineJob({ kind: 'train', taskFile, outDir: runDir, resume, datasetDir, faults }, this.log, 'training', { onEvent: trainingEvents(taskId, this.progress, this.log, curve, () => { ahead.poll() }), signal }).result.catch(async (err: Error) => {
      // taken from this solver (its solve deadline passed on chain, or handed back): said, or the run would seem to stall
      if (signal?.aborted === true) this.log.warn({ taskId, step: this.progress.get(taskId)?.step, steps: program.steps }, 'training stopped: the task is no longer ours on chain (its solve deadline passed, or it was handed back)')
      this.progress.set(taskId, { taskId, phase: 'failed', detail: err.message, updatedAt: Date.now() })
      await ahead.stop()
      await pool.close()
      throw err
    })
    await ahead.stop()
    await pool.close()
    this.log.info({ taskId, checkpoints: ahead.coded }, 'checkpoints erasure-coded during training')
    const div = summary.divergence
    if (div !== undefined) this.log.warn({ taskId, step: div.step, entry: div.entry, flat: div.flat }, 'the program diverged (a NaN): committing a diverged proof')
    else if (!summary.completed) throw new Error(`training of task ${taskId} stopped at step ${summary.steps}`)
    if (summary.proofRoot === undefined || summary.finalStateRoot === undefined) throw new Error(`training of task ${taskId} wrote no proof: the engine's backend ${summary.backend.name} does not implement the task's runtime ${program.runtime}`)
    this.progress.set(taskId, { taskId, phase: 'publishing', step: program.steps, steps: program.steps, curve, updatedAt: Date.now() })
    const index = await this.publishRun(taskId, program, programCid, runDir)
    this.progress.set(taskId, { taskId, phase: 'done', step: program.steps, steps: program.steps, detail: `proof root ${summary.proofRoot.slice(0, 16)}…`, curve, updatedAt: Date.now() })
    return {
      proofRoot: summary.proofRoot, finalStateRoot: summary.finalStateRoot,
      steps: div !== undefined ? div.step : program.steps, runIndex: index.cid, modelCid: index.index.model,
      checkpoints: index.index.checkpoints.map(c => ({ step: c.step, cid: c.data })), proofCid: index.index.proof,
      ...(div !== undefined ? { divergence: { entry: div.entry, flat: div.flat } } : {})
    }
  }

  private async publishRun (taskId: number, program: TaskProgram, programCid: string, runDir: string): Promise<{ cid: string, index: RunIndex }> {
    const proofBytes = readFileSync(join(runDir, 'proof.json'))
    const proof = validateProof(JSON.parse(proofBytes.toString('utf8')))
    const add = async (file: string, name: string, kind: 'checkpoint' | 'model' | 'file'): Promise<string> =>
      // checkpoints are served from the run directory instead of copied into the store (a copy
      // cost as much CPU as a training step per checkpoint; docs/shards.md, "Adding by reference"),
      // and get no DHT provider record: hundreds of them per task, announced at once, kept every
      // peer busy for a minute; verifiers ask the solver, whose peer id is on chain
      (await this.shards.addFile(file, { name, kind }, { reason: `task-${taskId}`, byReference: kind === 'checkpoint', provide: kind !== 'checkpoint' })).cid
    const checkpoints: RunIndex['checkpoints'] = []
    if (this.init.badCheckpoints === true) {
      const files = corruptCheckpoints(runDir, proof.checkpoints.map(c => c.step))
      this.log.warn({ taskId, files: files.length }, 'FAULT bad-checkpoint: flipped a byte in every checkpoint before publishing it')
    }
    // every checkpoint erasure-coded (docs/shards.md): chunks.bin is served with one chunk per block
    // what training left uncoded (its last checkpoints, or all of them without a worker), on every core now that training is over
    const curve = this.progress.get(taskId)?.curve
    const publishing = (detail: string): void => { this.progress.set(taskId, { taskId, phase: 'publishing', step: program.steps, steps: program.steps, detail, curve, updatedAt: Date.now() }) }
    const more = new CodingPool(Math.max(1, Math.min(2, availableParallelism())))
    let done = 0
    const total = proof.checkpoints.length
    const coded = await codeRunWith(runDir, {
      code: async (dir, step) => {
        const c = await more.code(dir, step)
        if (++done % 8 === 0 || done === total) publishing(`erasure-coded ${done}/${total} checkpoints`)
        return c
      }
    }).finally(async () => { await more.close() })
    this.log.info({ taskId, checkpoints: coded.checkpoints.length, ms: Math.round(coded.ms) }, 'checkpoints erasure-coded')
    publishing(`adding ${total} checkpoints to the shard store`)
    for (const [i, c] of proof.checkpoints.entries()) {
      const dir = checkpointDir(runDir, c.step)
      const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { dataFile?: string }
      const cc = coded.checkpoints[i]
      checkpoints.push({
        step: c.step,
        manifest: await add(join(dir, 'manifest.json'), `ckpt-${c.step}-manifest.json`, 'checkpoint'),
        data: await add(join(dir, manifest.dataFile ?? 'state.bin'), `ckpt-${c.step}-state.bin`, 'checkpoint'),
        coded: {
          dataBytes: cc.dataBytes,
          chunkRoot: toHex(cc.chunkRoot),
          list: await add(join(dir, CHUNK_LIST_FILE), `ckpt-${c.step}-chunks.json`, 'checkpoint'),
          chunks: (await this.shards.addFile(join(dir, CHUNKS_FILE), { name: `ckpt-${c.step}-chunks.bin`, kind: 'checkpoint' }, { reason: `task-${taskId}`, byReference: true, provide: false, blockSize: codingParams(cc.dataBytes).chunkBytes })).cid
        }
      })
    }
    let model: string | undefined
    const modelDir = join(runDir, 'model')
    if (existsSync(modelDir)) model = await this.publishBundle(modelDir, `task-${taskId}-model`, 'model', taskId)
    const index: RunIndex = {
      version: RUN_INDEX_VERSION,
      taskId,
      programHash: proof.programHash,
      proofRoot: proof.proofRoot,
      program: programCid,
      proof: await add(join(runDir, 'proof.json'), 'proof.json', 'file'),
      model,
      checkpoints
    }
    const cid = (await this.shards.addBytes(enc.encode(JSON.stringify(index)), { name: `task-${taskId}-run-index.json`, kind: 'file' }, { reason: `task-${taskId}` })).cid
    void program
    return { cid, index }
  }

  /** A directory as shards: every file, plus a JSON bundle naming them. */
  private async publishBundle (dir: string, name: string, kind: 'model' | 'checkpoint', taskId: number): Promise<string> {
    const files: Array<{ name: string, cid: string }> = []
    for (const f of readdirSync(dir).sort()) {
      files.push({ name: f, cid: (await this.shards.addFile(join(dir, f), { name: f, kind }, { reason: `task-${taskId}` })).cid })
    }
    return (await this.shards.addBytes(enc.encode(JSON.stringify({ kind: 'bundle', files })), { name, kind }, { reason: `task-${taskId}` })).cid
  }

  async commitProof (taskId: number, r: PublishedRun): Promise<void> {
    if (r.runIndex == null || r.proofCid == null) throw new Error(`task ${taskId}: the run was not published, nothing to commit`)
    const x = { ...r, runIndex: r.runIndex, proofCid: r.proofCid, checkpoints: r.checkpoints ?? [] }
    const chain = await this.chain()
    // the erasure-coded checkpoints named by the run index, and their coded root (bound with the proof)
    const indexed = validateRunIndex(JSON.parse(new TextDecoder().decode(await this.shards.read(x.runIndex)))).checkpoints
    const coded = indexed.flatMap(c => c.coded != null ? [c.coded.list, c.coded.chunks] : [])
    const root = codedRoot(indexed.map(c => ({ step: c.step, dataBytes: c.coded?.dataBytes ?? 0, chunkRoot: fromHex(c.coded?.chunkRoot ?? '00'.repeat(32)) })))
    // the coded root of the run's erasure-coded checkpoints is bound with the proof (chunk sampling)
    const committed = {
      proofRoot: hex0x(r.proofRoot), finalStateRoot: hex0x(r.finalStateRoot), stepCount: r.steps,
      checkpoints: [RUN_INDEX_PREFIX + x.runIndex, chunkRootEntry(root)]
    }
    const { challengeEnd } = r.divergence !== undefined
      ? await chain.commitDiverged(taskId, { ...committed, ...r.divergence })
      : await chain.commitProof(taskId, committed)
    // keep every artefact of the run at least until the challenge window closes
    // and the erasure-coded chunks with their lists
    for (const cid of [x.runIndex, x.proofCid, ...(x.modelCid != null ? [x.modelCid] : []), ...x.checkpoints.map(c => c.cid), ...coded]) {
      await this.shards.retain(cid, { untilBlock: challengeEnd + 10 }, `task-${taskId}`).catch(() => {})
    }
    await this.init.book.publish('proofs', {
      taskId, solver: this.peerId, proofRoot: hex0x(r.proofRoot), finalStateRoot: hex0x(r.finalStateRoot),
      proofCid: x.proofCid, modelCid: x.modelCid, checkpoints: x.checkpoints.slice(0, 4096)
    })
    this.log.info({ taskId, proofRoot: r.proofRoot, challengeEnd }, 'proof committed on chain')
  }
}
