import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { CollectedResult, SubmitResult, TaskSpec } from '../../actors/ports.js'
import { canonicalJson } from '../../protocols/program/canonical-json.js'
import { programHash, rootEveryOf, validateProgram, type TaskProgram } from '../../protocols/program/program.js'
import { admissibility } from '../../protocols/program/admissible.js'
import { supportsElement } from '../../protocols/reference/index.js'
import { runIndexCidOf, validateRunIndex } from '../../protocols/verification/run-index.js'
import type { EconomicsConfig } from './economics.js'
import { runEngineJob } from '../engine/engine.js'
import { taskFeasibility } from '../../protocols/scheduling/feasibility.js'
import { PortsPart, enc, hex0x } from './ports-part.js'
import { offeredRewards, units } from './offered-rewards.js'
import { MAX_PROGRAM_FETCH_BYTES, MAX_RUN_INDEX_BYTES, modelFileMaxBytes } from '../../protocols/verification/fetch-limits.js'
import { fetchBundle } from './bundle-fetch.js'

const mib = (b: number): number => Math.ceil(b / 2 ** 20)

// The submitter's ports: a task's commitments computed by the engine, its
// program and dataset published as shards, the task put on chain and
// announced; at the end, the trained model fetched and evaluated.

export class SubmitterPorts extends PortsPart {
  async submitTask (spec: TaskSpec): Promise<SubmitResult> {
    const validated = validateProgram(spec.program)
    // refused here with the reason, before the commitments are computed (the chain refuses it too)
    const adm = admissibility(validated, supportsElement)
    if (!adm.ok) throw new Error(`task refused: ${adm.reason}`)
    // the chain's feasibility bounds, checked here with their numbers before any work
    const chain = await this.chain()
    const bounds = await chain.params()
    if (rootEveryOf(validated) > bounds.maxRootEvery) {
      throw new Error(`task refused: the program commits a state root every ${rootEveryOf(validated)} steps; this chain takes at most ${bounds.maxRootEvery} (max_root_every)`)
    }
    const asked = spec.economics ?? {}
    const verifierCount = asked.verifierCount ?? this.econ.verifierCount
    const times = { solveTimeout: asked.solveTimeout ?? undefined, challengeWindow: asked.challengeWindow ?? undefined, verifierCount }
    const f = taskFeasibility(validated, bounds, times)
    if (f.error === 'TaskTooLarge') {
      throw new Error(`task refused: one training job needs ~${mib(f.memory)} MiB, more than this chain's max_task_memory (${mib(Number(bounds.maxTaskMemory))} MiB)`)
    }
    if (f.error === 'SolveTimeoutTooShort') {
      throw new Error(`task refused: --solve-timeout ${String(asked.solveTimeout)} is shorter than the ${f.minSolveBlocks} blocks this chain requires for its training (twice its work at the network's reference speed)`)
    }
    if (f.error === 'ChallengeWindowTooShort') {
      throw new Error(`task refused: --challenge-window ${String(asked.challengeWindow)} is shorter than the ${f.minChallengeBlocks} blocks this chain requires for ${verifierCount} verifier(s) (twice a verifier's replay of its sample and a reject's evidence at the network's reference speed, plus the draw and the transactions)`)
    }
    const rewards = offeredRewards(validated, bounds, verifierCount, asked, this.econ)
    const { info: _info, ...program } = validated
    const phash = programHash(program)
    const dir = join(this.dataDir, 'submit', phash.slice(0, 16))
    mkdirSync(dir, { recursive: true })
    const taskFile = join(dir, 'task.json')
    const programBytes = enc.encode(canonicalJson(program))
    writeFileSync(taskFile, programBytes)
    this.log.info({ programHash: phash }, 'computing the task commitments (skeleton, dataset)')
    // the configured directory holds IDX files; a text corpus is read where its package installs it
    const { skeletonRoot, datasetRoot } = await runEngineJob({ kind: 'commitments', taskFile, datasetDir: program.dataset.kind === 'idx' ? this.init.datasetDir : undefined }, this.log, 'task commitments').result
    const programCid = (await this.shards.addBytes(programBytes, { name: 'task.json', kind: 'file' }, { pin: true })).cid
    const datasetCid = await this.publishDataset(program)
    const o = spec.economics ?? {}
    const e: EconomicsConfig = {
      ...this.econ,
      solveTimeout: Math.max(this.econ.solveTimeout, f.minSolveBlocks),
      challengeWindow: Math.max(this.econ.challengeWindow, f.minChallengeBlocks),
      solverReward: rewards.solverReward,
      verifierReward: rewards.verifierReward,
      ...(o.verifierCount != null ? { verifierCount: o.verifierCount } : {}),
      ...(o.challengeWindow != null ? { challengeWindow: o.challengeWindow } : {}),
      ...(o.solveTimeout != null ? { solveTimeout: o.solveTimeout } : {})
    }
    const least = { solverReward: units(rewards.floor.minSolverReward), verifierReward: units(rewards.floor.minVerifierReward) }
    this.log.info({ solverReward: units(e.solverReward), verifierReward: units(e.verifierReward), least }, 'rewards offered, and the least this chain takes for the task (reference_block_price)')
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
    if (this.init.withholdDataset === true) {
      this.log.warn({ dataset: program.dataset.name }, 'FAULT INJECTION withhold-dataset: the task is announced without its dataset')
      return undefined
    }
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
    const index = validateRunIndex(JSON.parse(new TextDecoder().decode(await this.shards.fetchBytes(indexCid, { maxBytes: MAX_RUN_INDEX_BYTES }))))
    if (index.model == null) return {}
    const dir = join(this.dataDir, 'results', String(taskId))
    // the evaluator reads the program next to the model (dataset reference); it bounds the model's files
    mkdirSync(dir, { recursive: true })
    await this.shards.fetchToFile(index.program, join(dir, 'task.json'), { maxBytes: MAX_PROGRAM_FETCH_BYTES })
    const { info: _i, ...program } = validateProgram(JSON.parse(readFileSync(join(dir, 'task.json'), 'utf8')))
    if (hex0x(programHash(program)) !== task.programHash) throw new Error(`the program of task ${taskId}'s run does not hash to the task's program hash`)
    const solverNode = task.solver != null ? await (await this.chain()).node(task.solver) : null
    const solverPeer = solverNode != null ? Buffer.from(solverNode.peerId.replace(/^0x/, ''), 'hex').toString('utf8') : undefined
    await fetchBundle(this.shards, index.model, join(dir, 'model'), name => modelFileMaxBytes(program, name), { preferred: solverPeer !== undefined ? [solverPeer] : undefined })
    const r = await runEngineJob({ kind: 'evaluate', modelDir: dir, datasetDir: this.init.datasetDir }, this.log, 'evaluation').result
    this.log.info({ taskId, accuracy: r.accuracy, validationLoss: r.text?.validationLoss }, 'collected the trained model')
    // a GPT has no accuracy (NaN): its held-out loss, the corpus's unigram baseline and a sample
    return r.text != null ? { modelCid: index.model, text: r.text } : { accuracy: r.accuracy, modelCid: index.model }
  }
}
