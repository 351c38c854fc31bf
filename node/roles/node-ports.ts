import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { availableParallelism } from 'node:os'
import type { CollectedResult, DisputeResult, RolePorts, SubmitResult, TaskSpec, TextResult, TrainResult, VerifyResult } from '../../actors/ports.js'
import { canonicalJson } from '../../protocols/program/canonical-json.js'
import { programHash, validateProgram, type TaskProgram } from '../../protocols/program/program.js'
import { admissibility } from '../../protocols/program/admissible.js'
import { supportsElement } from '../../protocols/reference/index.js'
import { validateProof } from '../../protocols/pol/proof.js'
import { checkpointLoads, replaysFor, sampleSteps } from '../../protocols/verification/sample.js'
import { checkpointStepsOf, firstNeededCheckpoint } from '../../protocols/verification/checkpoint-steps.js'
import { requiredSample, verdictSteps, verifierSampleCount } from '../../protocols/verification/verdict.js'
import { RUN_INDEX_PREFIX, RUN_INDEX_VERSION, validateRunIndex, type RunIndex } from '../../protocols/verification/run-index.js'
import type { ChainClient, TaskView } from '../chain/client.js'
import type { Peer } from '../peer.js'
import type { ShardService } from '../shards/index.js'
import { runAvailabilityChallenge } from '../availability/challenger.js'
import { CHUNKS_FILE, CHUNK_LIST_FILE, codeRunWith } from '../erasure/coded-run.js'
import { CodeAhead, CodingPool } from '../erasure/coding-pool.js'
import { VerifierChunks } from '../erasure/verifier.js'
import { chunkRootEntry, codedRoot, codingParams } from '../../protocols/erasure/index.js'
import { fromHex, toHex } from '../../protocols/commit/merkle.js'
import { corruptCheckpoints } from '../availability/fault.js'
import { commitmentsInChild, evaluateInChild, trainInChild } from './engine.js'
import { WarmEngine } from './warm-engine.js'
import type { TaskBook } from './task-book.js'
import { initClaimBytes, initialStateMatches, stateFromCheckpoint } from './initial-state.js'

// The peer-side implementation of what role actors ask for: chain extrinsics
// through the typed client, artefacts through the shard exchange, training,
// replay and evaluation in child processes. Everything fetched is checked
// against what the chain committed before it is used.

export interface EconomicsConfig {
  solverReward: bigint
  verifierReward: bigint
  verifierCount: number
  /** blocks after the proof commitment for verdicts and disputes */
  challengeWindow: number
  /** blocks the selected solver has to commit */
  solveTimeout: number
  /** steps each verifier samples; absent: its share of what catches ≥ 10% faked steps with 99% probability (protocols/verification/sample.ts) */
  stepsPerVerifier?: number
}

export const DEFAULT_ECONOMICS: EconomicsConfig = {
  solverReward: 100n * 10n ** 12n,
  verifierReward: 10n * 10n ** 12n,
  verifierCount: 2,
  challengeWindow: 90,
  solveTimeout: 900
}

export interface NodePortsInit {
  peer: Peer
  chain: () => Promise<ChainClient>
  shards: ShardService
  book: TaskBook
  economics?: Partial<EconomicsConfig>
  /** where IDX datasets are read from when present locally */
  datasetDir?: string
  /** hooks for the dispute game (issue 7); absent → disputes are refused with a clear error */
  disputes?: {
    challenge: (taskId: number, against: 'solver' | 'verifier', step: number | undefined) => Promise<DisputeResult>
    defend: (taskId: number, disputeId: number) => Promise<DisputeResult>
  }
  // ---- disputes (issue 7) ----
  /** extra training-child arguments for a task: FAULT INJECTION and the chain's Truebit forced error (node/dispute/faults.ts) */
  trainFaultArgs?: (taskId: number, task: TaskView) => Promise<string[]>
  /** FAULT INJECTION `--fault bad-checkpoint`: publish checkpoints with one byte flipped, keeping no true copy */
  badCheckpoints?: boolean
  /** steps a whistleblower re-checks (default: all of them: catching forced errors is its job) */
  recheckSteps?: number
}

/** checkpoints a verifier fetches at once */
const CHECKPOINT_FETCHES = 4

const hex0x = (h: string): string => h.startsWith('0x') ? h : '0x' + h
const bare = (h: string): string => h.startsWith('0x') ? h.slice(2) : h
const enc = new TextEncoder()

function decodeCheckpointEntry (hex: string): string {
  return Buffer.from(bare(hex), 'hex').toString('utf8')
}

export function runIndexCidOf (task: TaskView): string | undefined {
  for (const c of task.checkpoints) {
    const s = decodeCheckpointEntry(c)
    if (s.startsWith(RUN_INDEX_PREFIX)) return s.slice(RUN_INDEX_PREFIX.length)
  }
  return undefined
}

export interface WorkProgress {
  taskId: number
  phase: 'training' | 'publishing' | 'verifying' | 'done' | 'failed'
  step?: number
  steps?: number
  loss?: number
  samplesPerSec?: number
  etaSec?: number
  detail?: string
  /** training: [step, loss] of the progress reports so far (thinned to at most CURVE_POINTS) */
  curve?: Array<[number, number]>
  updatedAt: number
}

export const CURVE_POINTS = 400

/**
 * Appends a point. A full curve keeps every other point, which doubles the
 * spacing of its first points; a newer point closer than that to the one
 * before replaces the newest instead of adding one, so the curve stays evenly
 * spread over the whole run and always ends at the latest report.
 */
export function addCurvePoint (curve: Array<[number, number]>, step: number, loss: number, max = CURVE_POINTS): void {
  if (!Number.isFinite(loss) || (curve.length > 0 && curve[curve.length - 1][0] >= step)) return
  const n = curve.length
  if (n >= 3 && curve[n - 1][0] - curve[n - 2][0] < curve[1][0] - curve[0][0]) { curve[n - 1] = [step, loss]; return }
  curve.push([step, loss])
  if (curve.length > max) {
    const kept = curve.filter((_, i) => i % 2 === 0 || i === curve.length - 1)
    curve.splice(0, curve.length, ...kept)
  }
}

/** "step 65/300 (21%)  loss 0.0015  1247 samples/s  ETA 12s" → fields */
export function parseProgressLine (line: string): Partial<WorkProgress> | undefined {
  const m = /step (\d+)\/(\d+).*?loss ([\d.eE+-]+|NaN).*?(\d+) samples\/s.*?ETA (\d+)s/.exec(line)
  if (m == null) return undefined
  return { step: Number(m[1]), steps: Number(m[2]), loss: Number(m[3]), samplesPerSec: Number(m[4]), etaSec: Number(m[5]) }
}

export class NodePorts implements RolePorts {
  readonly peerId: string
  /** what this peer's engine is doing, by task (for status, the devnet and the dashboard) */
  readonly progress = new Map<number, WorkProgress>()
  private readonly econ: EconomicsConfig
  private readonly log
  private readonly dataDir: string
  /** replays run in one long-lived engine process (started on first use; see warm-engine.ts) */
  private readonly engine: WarmEngine

  constructor (private readonly init: NodePortsInit) {
    this.peerId = init.peer.peerId
    this.econ = { ...DEFAULT_ECONOMICS, ...init.economics }
    this.log = init.peer.log.child({ component: 'ports' })
    this.dataDir = init.peer.opts.dataDir
    this.engine = new WarmEngine(this.log)
    init.peer.onStop(async () => { this.engine.stop() })
  }

  private get shards (): ShardService { return this.init.shards }
  private async chain (): Promise<ChainClient> { return await this.init.chain() }

  private async taskOrThrow (taskId: number): Promise<TaskView> {
    const t = await (await this.chain()).task(taskId)
    if (t == null) throw new Error(`task ${taskId} does not exist on chain`)
    return t
  }

  // ---- submitter ----

  async submitTask (spec: TaskSpec): Promise<SubmitResult> {
    const validated = validateProgram(spec.program)
    // refused here with the reason, before the commitments are computed (the chain refuses it too)
    const adm = admissibility(validated, supportsElement)
    if (!adm.ok) throw new Error(`task refused: ${adm.reason}`)
    const { info: _info, ...program } = validated
    const phash = programHash(program)
    const dir = join(this.dataDir, 'submit', phash.slice(0, 16))
    mkdirSync(dir, { recursive: true })
    const taskFile = join(dir, 'task.json')
    const programBytes = enc.encode(canonicalJson(program))
    writeFileSync(taskFile, programBytes)
    this.log.info({ programHash: phash }, 'computing the task commitments (skeleton, dataset)')
    // the configured directory holds IDX files; a text corpus is read where its package installs it
    const { skeletonRoot, datasetRoot } = await commitmentsInChild(taskFile, program.dataset.kind === 'idx' ? this.init.datasetDir : undefined, this.log).result
    const programCid = (await this.shards.addBytes(programBytes, { name: 'task.json', kind: 'file' }, { pin: true })).cid
    const datasetCid = await this.publishDataset(program)
    const chain = await this.chain()
    const o = spec.economics ?? {}
    const e: EconomicsConfig = {
      ...this.econ,
      ...(o.solverReward != null ? { solverReward: BigInt(o.solverReward) } : {}),
      ...(o.verifierReward != null ? { verifierReward: BigInt(o.verifierReward) } : {}),
      ...(o.verifierCount != null ? { verifierCount: o.verifierCount } : {}),
      ...(o.challengeWindow != null ? { challengeWindow: o.challengeWindow } : {}),
      ...(o.solveTimeout != null ? { solveTimeout: o.solveTimeout } : {})
    }
    const taskId = await chain.submitTask({
      programHash: hex0x(phash),
      program: programBytes,
      datasetRoot: hex0x(datasetRoot),
      skeletonRoot: hex0x(skeletonRoot),
      steps: program.steps,
      checkpointEvery: program.checkpointEvery,
      escrow: e.solverReward + e.verifierReward * BigInt(e.verifierCount),
      solverReward: e.solverReward,
      verifierReward: e.verifierReward,
      verifierCount: e.verifierCount,
      challengeWindow: e.challengeWindow,
      solveTimeout: e.solveTimeout
    })
    const id = Number(taskId)
    await this.init.book.publish('tasks', { taskId: id, programHash: hex0x(phash), programCid, datasetCid, submitter: this.peerId, steps: program.steps, createdAt: Date.now() })
    this.log.info({ taskId: id, programCid, datasetCid }, 'task submitted on chain and announced')
    return { taskId: id, programHash: phash }
  }

  /** Publishes the dataset's files as shards (once per dataset), returning a bundle CID. */
  private async publishDataset (program: TaskProgram): Promise<string | undefined> {
    if (program.dataset.kind !== 'idx') return undefined
    const dir = this.init.datasetDir ?? '/usr/share/datasets/fashion-mnist'
    const files = readdirSync(dir).filter(f => /idx\d-ubyte(\.gz)?$/.test(f)).sort()
    const entries: Array<{ name: string, cid: string }> = []
    for (const f of files) {
      const r = await this.shards.addFile(join(dir, f), { name: f, kind: 'dataset' }, { pin: true })
      entries.push({ name: f, cid: r.cid })
    }
    const bundle = enc.encode(JSON.stringify({ kind: 'dataset-bundle', sha256: program.dataset.sha256, files: entries }))
    return (await this.shards.addBytes(bundle, { name: `${program.dataset.name}.bundle.json`, kind: 'dataset' }, { pin: true })).cid
  }

  async collectResult (taskId: number): Promise<CollectedResult> {
    const task = await this.taskOrThrow(taskId)
    const indexCid = runIndexCidOf(task)
    if (indexCid == null || !task.phase.startsWith('Settled')) return {}
    const index = validateRunIndex(JSON.parse(new TextDecoder().decode(await this.shards.fetchBytes(indexCid))))
    if (index.model == null) return {}
    const dir = join(this.dataDir, 'results', String(taskId))
    await this.fetchBundleTo(index.model, join(dir, 'model'))
    // the evaluator reads the program next to the model (dataset reference)
    await this.shards.fetchToFile(index.program, join(dir, 'task.json'))
    // evaluate's JSON also has `text` for a GPT (node/train/run.ts EvaluateResult)
    const r: { accuracy: number, text?: TextResult } = await evaluateInChild(dir, this.init.datasetDir, this.log).result
    this.log.info({ taskId, accuracy: r.accuracy, validationLoss: r.text?.validationLoss }, 'collected the trained model')
    // a GPT has no accuracy (NaN, which JSON cannot carry): its held-out loss, the corpus's unigram baseline and a sample
    return r.text != null ? { modelCid: index.model, text: r.text } : { accuracy: r.accuracy, modelCid: index.model }
  }

  // ---- solver ----

  private async programFor (taskId: number, task: TaskView): Promise<{ program: TaskProgram, datasetCid?: string, programCid: string }> {
    const rec = await this.init.book.waitFor(taskId, r => r.task != null, 60_000, 'task announcement')
    const programCid = rec.task!.programCid
    const bytes = await this.shards.fetchBytes(programCid)
    const { info: _i, ...program } = validateProgram(JSON.parse(new TextDecoder().decode(bytes)))
    if (hex0x(programHash(program)) !== task.programHash) {
      throw new Error(`the program fetched for task ${taskId} hashes to ${programHash(program)}, but the chain has ${task.programHash}`)
    }
    return { program, datasetCid: rec.task!.datasetCid, programCid }
  }

  /** A local directory with the task's dataset: the configured one, or fetched from the swarm. */
  private async datasetDirFor (program: TaskProgram, datasetCid: string | undefined): Promise<string | undefined> {
    if (program.dataset.kind !== 'idx') return undefined
    const local = this.init.datasetDir ?? '/usr/share/datasets/fashion-mnist'
    if (existsSync(join(local, 'train-images-idx3-ubyte.gz')) || existsSync(join(local, 'train-images-idx3-ubyte'))) return local
    if (datasetCid == null) throw new Error(`the dataset ${program.dataset.name} is not in ${local} and the task names no dataset CID`)
    const dir = join(this.dataDir, 'datasets', program.dataset.sha256.slice(0, 16))
    const bundle = JSON.parse(new TextDecoder().decode(await this.shards.fetchBytes(datasetCid))) as { files: Array<{ name: string, cid: string }> }
    mkdirSync(dir, { recursive: true })
    for (const f of bundle.files) {
      if (!/^[\w.-]+$/.test(f.name)) throw new Error(`bad file name in dataset bundle: ${f.name}`)
      await this.shards.fetchToFile(f.cid, join(dir, f.name))
    }
    return dir // the engine checks the content hash before training
  }

  async train (taskId: number): Promise<TrainResult> {
    const task = await this.taskOrThrow(taskId)
    const { program, datasetCid, programCid } = await this.programFor(taskId, task)
    const datasetDir = await this.datasetDirFor(program, datasetCid)
    const runDir = join(this.dataDir, 'tasks', String(taskId), 'run')
    const taskFile = join(this.dataDir, 'tasks', String(taskId), 'task.json')
    mkdirSync(runDir, { recursive: true })
    writeFileSync(taskFile, canonicalJson(program))
    const resume = existsSync(join(runDir, 'task.json')) && existsSync(join(runDir, 'checkpoints'))
    this.log.info({ taskId, steps: program.steps, resume }, resume ? 'resuming training from the last checkpoint' : 'training')
    let lastLog = 0
    this.progress.set(taskId, { taskId, phase: 'training', step: 0, steps: program.steps, updatedAt: Date.now() })
    // disputes (issue 7): fault injection / forced error for the training child
    const extra = (await this.init.trainFaultArgs?.(taskId, task)) ?? []
    if (extra.length > 0) this.log.warn({ taskId, args: extra.join(' ') }, 'fault arguments for training (a forced error and/or FAULT INJECTION)')
    // checkpoints are erasure-coded in a worker thread as training writes them (node/erasure/coding-pool.ts)
    const pool = new CodingPool(1)
    const ahead = new CodeAhead(runDir, pool)
    const curve: Array<[number, number]> = []
    const summary = await trainInChild(taskFile, runDir, { resume, datasetDir, extra }, this.log, line => {
      const p = parseProgressLine(line)
      if (p != null) {
        if (p.step != null && p.loss != null) addCurvePoint(curve, p.step, p.loss)
        this.progress.set(taskId, { taskId, phase: 'training', ...p, curve, updatedAt: Date.now() })
      }
      if (Date.now() - lastLog > 5000) { lastLog = Date.now(); this.log.info({ taskId }, line.trim()) }
      ahead.poll()
    }).result.catch(async (err: Error) => {
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
    this.progress.set(taskId, { taskId, phase: 'publishing', step: program.steps, steps: program.steps, curve, updatedAt: Date.now() })
    const index = await this.publishRun(taskId, program, programCid, runDir)
    this.progress.set(taskId, { taskId, phase: 'done', step: program.steps, steps: program.steps, detail: `proof root ${summary.proofRoot.slice(0, 16)}…`, curve, updatedAt: Date.now() })
    return { proofRoot: summary.proofRoot, finalStateRoot: summary.finalStateRoot, steps: div !== undefined ? div.step : program.steps, runIndex: index.cid, modelCid: index.index.model, checkpoints: index.index.checkpoints.map(c => ({ step: c.step, cid: c.data })), proofCid: index.index.proof, ...(div !== undefined ? { divergence: { entry: div.entry, flat: div.flat } } : {}) }
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
      const dir = join(runDir, 'checkpoints', `step-${String(c.step).padStart(8, '0')}`)
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

  private async fetchBundleTo (cid: string, dir: string): Promise<void> {
    const bundle = JSON.parse(new TextDecoder().decode(await this.shards.fetchBytes(cid))) as { files: Array<{ name: string, cid: string }> }
    mkdirSync(dir, { recursive: true })
    for (const f of bundle.files) {
      if (!/^[\w.-]+$/.test(f.name)) throw new Error(`bad file name in bundle ${cid}: ${f.name}`)
      await this.shards.fetchToFile(f.cid, join(dir, f.name))
    }
  }

  async commitProof (taskId: number, r: TrainResult): Promise<void> {
    if (r.runIndex == null || r.proofCid == null) throw new Error(`task ${taskId}: the run was not published, nothing to commit`)
    const x = { ...r, runIndex: r.runIndex, proofCid: r.proofCid, checkpoints: r.checkpoints ?? [] }
    const chain = await this.chain()
    // the erasure-coded checkpoints named by the run index, and their coded root (bound with the proof)
    const indexed = validateRunIndex(JSON.parse(new TextDecoder().decode(await this.shards.read(x.runIndex)))).checkpoints
    const coded = indexed.flatMap(c => c.coded != null ? [c.coded.list, c.coded.chunks] : [])
    const root = codedRoot(indexed.map(c => ({ step: c.step, dataBytes: c.coded?.dataBytes ?? 0, chunkRoot: fromHex(c.coded?.chunkRoot ?? '00'.repeat(32)) })))
    // the coded root of the run's erasure-coded checkpoints is bound with the proof (chunk sampling)
    const committed = { proofRoot: hex0x(r.proofRoot), finalStateRoot: hex0x(r.finalStateRoot), stepCount: r.steps, checkpoints: [RUN_INDEX_PREFIX + x.runIndex, chunkRootEntry(root)] }
    const { challengeEnd } = r.divergence !== undefined ? await chain.commitDiverged(taskId, { ...committed, ...r.divergence }) : await chain.commitProof(taskId, committed)
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

  // ---- verifier / whistleblower ----

  async verify (taskId: number, sampleCount?: number): Promise<VerifyResult> {
    const chain = await this.chain()
    const task = await this.taskOrThrow(taskId)
    const indexCid = runIndexCidOf(task)
    if (indexCid == null) throw new Error(`task ${taskId} has no run index committed`)
    // randomness: the hash of a block produced after the commitment; an assigned verifier's
    // sample is seeded by its own draw's block (a replacement's is later than committed_at + 1)
    const seedBlock = (await chain.myAssignment(taskId))?.seedBlock ?? task.committedAt + 1
    const seed = await this.waitForRandomness(chain, seedBlock)
    // never fewer than the chain requires of an accepting verdict (a larger sample contains the required one)
    const count = sampleCount ?? verifierSampleCount(task.verifierCount, this.econ.stepsPerVerifier)
    const runDir = join(this.dataDir, 'verify', String(taskId))
    mkdirSync(runDir, { recursive: true })
    let index: RunIndex
    let program: TaskProgram
    let proof: ReturnType<typeof validateProof>
    try {
      index = validateRunIndex(JSON.parse(new TextDecoder().decode(await this.shards.fetchBytes(indexCid))))
      if (hex0x(index.proofRoot) !== task.proofRoot) throw new Error(`the run index names proof root ${index.proofRoot}, the chain has ${task.proofRoot}`)
      const programBytes = await this.shards.fetchBytes(index.program)
      const { info: _i, ...p } = validateProgram(JSON.parse(new TextDecoder().decode(programBytes)))
      program = p
      if (hex0x(programHash(program)) !== task.programHash) throw new Error(`program of task ${taskId} does not match the chain's program hash`)
      writeFileSync(join(runDir, 'task.json'), canonicalJson(program))
      await this.shards.fetchToFile(index.proof, join(runDir, 'proof.json'))
      proof = validateProof(JSON.parse(readFileSync(join(runDir, 'proof.json'), 'utf8')))
      if (hex0x(proof.proofRoot) !== task.proofRoot) throw new Error(`proof.json of task ${taskId} does not hash to the committed proof root`)
      if (proof.steps !== task.stepCount) throw new Error(`proof.json of task ${taskId} has ${proof.steps} steps, the task ${task.stepCount}`)
      if (proof.divergence !== undefined) {
        const div = proof.divergence
        // a diverged proof (a NaN ended the run): the chain holds the same divergence point
        if (task.divergence == null || task.divergence.entry !== div.entry || task.divergence.flat !== div.flat) throw new Error(`proof.json of task ${taskId} names another divergence point than the chain`)
        if (proof.steps >= task.steps || program.steps !== task.steps) throw new Error(`diverged proof of task ${taskId} covers ${proof.steps} of ${task.steps} steps`)
      } else if (proof.steps !== task.steps || program.steps !== task.steps) {
        // a truncated proof is never verified as if it were the task (the chain refuses it too: IncompleteProof)
        throw new Error(`proof of task ${taskId} covers ${proof.steps} of the program's ${program.steps} steps, the task asks for ${task.steps}`)
      }
    } catch (err) {
      // what the solver published cannot be obtained or is not what it committed: not a reason to stay
      // silent, but a data-availability challenge of the first checkpoint this sample needs
      const step = firstNeededCheckpoint(task.stepCount === 0 ? [] : sampleSteps(seed, chain.accountId, task.stepCount, count), task.stepCount, task.checkpointEvery)
      const reason = `run of task ${taskId} unusable: ${(err as Error).message}`
      this.log.warn({ taskId, step, reason }, 'cannot obtain the published run')
      return { accept: false, checkedSteps: [], unavailable: { step, reason } }
    }
    const div = proof.divergence
    // replays check transitions only: the first state must be the program's initialisation
    const init = await this.checkInitialState(chain, taskId, program, proof.stateRoots, index, runDir)
    if (init !== undefined) return init
    const datasetDir = await this.datasetDirFor(program, (await this.init.book.get(taskId))?.task?.datasetCid)
    // the engine loads its backend and the dataset while the checkpoints download
    const warming = this.engine.warm(join(runDir, 'task.json'), datasetDir, program.runtime).catch((err: Error) => { this.log.warn({ taskId, err: err.message }, 'engine warm-up failed') })
    const sampled = proof.steps === 0 ? [] : sampleSteps(seed, chain.accountId, proof.steps, count)
    const intervals = replaysFor(sampled, proof.steps, program.checkpointEvery)
    this.log.info({ taskId, sampledSteps: sampled.length, replays: intervals.length }, 'verification sample drawn')
    // fetch every checkpoint the sample needs (a few at a time: each fetch waits on
    // provider lookups more than on bytes), then replay all of them in one engine run
    // exactly the checkpoints the replay will load (node/train/replay-many.ts follows the same rule)
    const loads = new Set(sampled.length === 0 ? [] : checkpointLoads(sampled, index.checkpoints.map(c => c.step)))
    // every verifier replays a diverged proof's last step, from the checkpoint of its last state
    if (div !== undefined) loads.add(proof.steps)
    const needed = index.checkpoints.filter(c => loads.has(c.step))
    // checkpoints have no DHT provider records (publishRun): they come from the solver
    const solverPeer = await this.solverPeerOf(chain, task.solver)
    // erasure-coded checkpoints: the run index's codings must be what the solver committed;
    // a needed checkpoint that cannot be fetched whole is rebuilt from any k of its chunks
    const chunks = new VerifierChunks({ shards: this.shards, chain: async () => await this.chain(), log: this.log })
    const coded = chunks.checkIndex(taskId, index, task.checkpoints.map(decodeCheckpointEntry))
    const problems: Array<{ step: number, reason: string }> = []
    let next = 0
    let fetched = 0
    const fetchNext = async (): Promise<void> => {
      while (next < needed.length && problems.length === 0) {
        const ck = needed[next++]
        const dir = join(runDir, 'checkpoints', `step-${String(ck.step).padStart(8, '0')}`)
        mkdirSync(dir, { recursive: true })
        // a checkpoint nobody serves makes the interval unreplayable: a data-availability challenge
        let problem = await this.fetchCheckpoint(ck, dir, solverPeer)
        if (problem != null && coded) problem = await chunks.rebuild(taskId, ck, join(dir, 'state.bin'), solverPeer, problem)
        if (problem != null) { problems.push({ step: ck.step, reason: problem }); return }
        fetched++
        this.progress.set(taskId, { taskId, phase: 'verifying', step: 0, steps: intervals.length, detail: `fetched checkpoint ${fetched}/${needed.length} (step ${ck.step})`, updatedAt: Date.now() })
      }
    }
    const tFetch = performance.now()
    await Promise.all(Array.from({ length: Math.min(CHECKPOINT_FETCHES, needed.length) }, fetchNext))
    this.log.info({ taskId, checkpoints: fetched, seconds: +((performance.now() - tFetch) / 1000).toFixed(2) }, 'checkpoints fetched')
    // a cheap availability sample of the coded chunks of one checkpoint (escalated to the chain in the background if a chunk cannot be fetched)
    if (coded && needed.length > 0) await chunks.sample(taskId, needed[Math.floor(Math.random() * needed.length)], solverPeer)
    if (problems.length > 0) {
      const { step, reason } = problems.sort((a, b) => a.step - b.step)[0]
      this.log.warn({ taskId, step, reason }, 'cannot replay from the published checkpoint')
      this.progress.set(taskId, { taskId, phase: 'failed', detail: `checkpoint ${step} unavailable: ${reason}`, updatedAt: Date.now() })
      return { accept: false, checkedSteps: [], unavailable: { step, reason } }
    }
    this.progress.set(taskId, { taskId, phase: 'verifying', step: 0, steps: intervals.length, detail: `replaying ${sampled.length} sampled step(s) from ${needed.length} checkpoint(s)`, updatedAt: Date.now() })
    await warming
    const tReplay = performance.now()
    // every sampled step is replayed from its checkpoint and its transition (roots
    // before and after it) compared: those are the steps this verdict vouches for.
    // The engine checks each checkpoint as it loads it; one that is not the
    // committed state (or is corrupt) is, like a missing one, a data-availability problem.
    const out = sampled.length === 0 ? { results: [] } : await this.engine.replay(runDir, sampled, datasetDir, program.runtime, 'program')
    if (out.unavailable != null) {
      const { step, reason } = out.unavailable
      this.log.warn({ taskId, step, reason }, 'cannot replay from the published checkpoint')
      this.progress.set(taskId, { taskId, phase: 'failed', detail: `checkpoint ${step} unusable: ${reason}`, updatedAt: Date.now() })
      return { accept: false, checkedSteps: [], unavailable: { step, reason } }
    }
    const { results } = out
    const checked: number[] = []
    for (const r of results) {
      if (r.nanStep != null && r.nanStep <= (r.firstMismatch ?? r.step)) {
        // the replay met a NaN in a committed step: the run should have ended there (docs/disputes.md, "NaN")
        this.log.warn({ taskId, step: r.nanStep }, 'a committed step holds a NaN')
        return { accept: false, checkedSteps: [...checked.filter(s => s < r.nanStep!), r.nanStep], firstBadStep: r.nanStep }
      }
      if (!r.match || r.firstMismatch != null) {
        const bad = r.firstMismatch ?? r.step
        this.log.warn({ taskId, step: bad }, 'replay disagrees with the committed proof')
        return { accept: false, checkedSteps: [...checked.filter(s => s < bad), bad], firstBadStep: bad }
      }
      checked.push(r.step)
    }
    if (results.length !== sampled.length) throw new Error(`the replay stopped after ${results.length} of ${sampled.length} sampled steps`)
    if (div !== undefined) {
      const dc = await this.engine.checkDivergence(runDir, datasetDir, program.runtime, 'program')
      if (dc.unavailable != null) return { accept: false, checkedSteps: [], unavailable: dc.unavailable }
      const k1 = dc.check.step
      if (!dc.check.ok) {
        this.log.warn({ taskId, step: k1, reason: dc.check.reason }, 'the diverged step does not diverge as the proof says')
        return { accept: false, checkedSteps: [...checked, k1], firstBadStep: k1 }
      }
      this.log.info({ taskId, step: k1, reason: dc.check.reason }, 'the diverged step replays to its divergence point')
      checked.push(k1)
    }
    this.log.info({ taskId, sampledSteps: sampled.length, checkpoints: needed.length, seconds: +((performance.now() - tReplay) / 1000).toFixed(2) }, 'every sampled step replays bit for bit')
    this.progress.set(taskId, { taskId, phase: 'done', step: intervals.length, steps: intervals.length, detail: `accepted: ${checked.length} sampled steps replayed bit for bit`, updatedAt: Date.now() })
    return { accept: true, checkedSteps: checked }
  }

  /**
   * Compares the proof's stateRoots[0] with the program's initial state root; on a
   * mismatch, claims the first wrong element of the solver's checkpoint 0 on chain
   * (challenge_initial_state) and returns the reject verdict. Undefined: it matches.
   */
  private async checkInitialState (chain: ChainClient, taskId: number, program: TaskProgram, stateRoots: string[], index: RunIndex, runDir: string): Promise<VerifyResult | undefined> {
    const t0 = performance.now()
    const v = initialStateMatches(program, stateRoots[0])
    this.log.debug({ taskId, ms: +(performance.now() - t0).toFixed(1) }, 'initial state compared')
    if (v.ok) {
      if ('unsupported' in v) this.log.warn({ taskId, reason: v.unsupported }, 'the initial state cannot be checked')
      return undefined
    }
    this.log.warn({ taskId }, 'the proof does not start from the program\'s initial state')
    const ck = index.checkpoints.find(c => c.step === 0)
    if (ck == null) return { accept: false, checkedSteps: [], unavailable: { step: 0, reason: 'no checkpoint of step 0 published' } }
    const dir = join(runDir, 'checkpoints', `step-${String(0).padStart(8, '0')}`)
    mkdirSync(dir, { recursive: true })
    const problem = await this.fetchCheckpoint(ck, dir, await this.solverPeerOf(chain, (await this.taskOrThrow(taskId)).solver))
    if (problem != null) return { accept: false, checkedSteps: [], unavailable: { step: 0, reason: problem } }
    const state = stateFromCheckpoint(program, readFileSync(join(dir, 'state.bin')), stateRoots[0])
    // a checkpoint that is not the committed state is a data-availability matter
    if (typeof state === 'string') return { accept: false, checkedSteps: [], unavailable: { step: 0, reason: state } }
    const r = await chain.challengeInitialState(taskId, initClaimBytes(program, stateRoots, state))
    this.log.info({ taskId, solverWrong: r.solverWrong, slashed: r.slashed.toString(), reason: r.reason }, 'initial state challenged on chain')
    return { accept: false, checkedSteps: [], initialState: { solverWrong: r.solverWrong, reason: r.reason } }
  }

  /** The solver's libp2p peer id, as registered on chain (undefined when it is not registered). */
  private async solverPeerOf (chain: ChainClient, solver: string | null | undefined): Promise<string | undefined> {
    if (solver == null) return undefined
    const node = await chain.node(solver)
    return node == null ? undefined : Buffer.from(node.peerId.replace(/^0x/, ''), 'hex').toString('utf8')
  }

  /**
   * Fetches a checkpoint's data (state.bin) into `dir` from the solver; returns why it cannot be obtained.
   * Not its manifest: the engine lays the data out as the program's state and checks it by the
   * state roots it replays (node/train/replay-many.ts loadByProgram), so the manifest's fetch
   * (a whole request for 2.6 kB) and a sha256 of the file are saved.
   */
  private async fetchCheckpoint (ck: RunIndex['checkpoints'][number], dir: string, solverPeer: string | undefined): Promise<string | undefined> {
    try {
      await this.shards.fetchToFile(ck.data, join(dir, 'state.bin'), { contentHash: false, ...(solverPeer != null ? { providers: [solverPeer] } : {}) })
      return undefined
    } catch (err) {
      return `not obtainable: ${(err as Error).message}`
    }
  }

  /**
   * Data-availability challenge of the solver's checkpoint at `step`; resolves when the chain has ruled.
   * An assigned verifier needs a challenge of its own (it backs its reject): when another node already
   * challenged that checkpoint, it challenges another checkpoint of the run.
   */
  async challengeAvailability (taskId: number, step: number): Promise<DisputeResult> {
    const chain = await this.chain()
    let alternatives: number[] = []
    if (await chain.myAssignment(taskId) != null) {
      const t = await this.taskOrThrow(taskId)
      alternatives = checkpointStepsOf(t.stepCount, t.checkpointEvery).filter(s => s !== step)
    }
    const r = await runAvailabilityChallenge(chain, taskId, step, this.log, { alternatives })
    return { disputeId: r.challengeId, winner: r.winner, reason: `availability: ${r.reason}` }
  }

  private async waitForRandomness (chain: ChainClient, block: number): Promise<string> {
    const deadline = Date.now() + 120_000
    while (Date.now() < deadline) {
      const r = await chain.randomness(block)
      if (r != null) return r
      await new Promise(resolve => setTimeout(resolve, 500))
    }
    throw new Error(`block ${block} (verification randomness) was not produced within 120 s`)
  }

  async submitVerdict (taskId: number, v: VerifyResult): Promise<void> {
    const chain = await this.chain()
    // only the verifiers the chain drew give verdicts (a reject must then be backed by our own dispute or challenge)
    const mine = await chain.myAssignment(taskId)
    if (mine == null) throw new Error(`task ${taskId}: this peer is not an assigned verifier (or its assignment is over): a verdict would not count`)
    const best = await chain.bestNumber()
    if (best >= mine.deadline) this.log.warn({ taskId, best, deadline: mine.deadline }, 'the verdict is late for this assignment: the chain will refuse it')
    // an accepting verdict must list this verifier's own sample (the chain checks it):
    // it goes first, so a verifier that replayed more than the cap still lists it
    let required: number[] = []
    if (v.accept) {
      const task = await this.taskOrThrow(taskId)
      // a proof that diverged at its first step has no completed step to sample
      required = task.stepCount === 0 ? [] : requiredSample(await this.waitForRandomness(chain, mine.seedBlock), chain.accountId, task.stepCount, task.verifierCount)
    }
    const listed = verdictSteps(required, v.checkedSteps)
    // on chain, step i is the transition from state i to state i+1 (0-based); ours are 1-based
    await chain.submitVerdict(taskId, v.accept, listed.map(s => s - 1))
    await this.init.book.publish('verdicts', { taskId, verifier: this.peerId, accept: v.accept, checkedSteps: listed, firstBadStep: v.firstBadStep })
    this.log.info({ taskId, accept: v.accept, firstBadStep: v.firstBadStep }, 'verdict submitted')
  }

  async recheckVerdict (taskId: number, _verifier: string): Promise<VerifyResult> {
    // a whistleblower samples its own steps (its account mixes into the seed);
    // by default it replays all of them (issue 7): catching forced errors is what it is paid for
    return await this.verify(taskId, this.init.recheckSteps ?? Number.MAX_SAFE_INTEGER)
  }

  async challenge (taskId: number, against: 'solver' | 'verifier', step: number | undefined): Promise<DisputeResult> {
    if (this.init.disputes == null) throw new Error('the dispute protocol is not available on this peer yet')
    return await this.init.disputes.challenge(taskId, against, step)
  }

  async defend (taskId: number, disputeId: number): Promise<DisputeResult> {
    if (this.init.disputes == null) throw new Error('the dispute protocol is not available on this peer yet')
    return await this.init.disputes.defend(taskId, disputeId)
  }
}
