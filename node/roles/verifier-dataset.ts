import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { encodeServedRows, servedRowBatches, type ServedRows } from '../../protocols/availability/index.js'
import { fromHex } from '../../protocols/commit/merkle.js'
import type { TaskProgram } from '../../protocols/program/program.js'
import type { ChainClient, TaskInfo } from '../chain/client.js'
import type { DisputeResult } from '../../actors/ports.js'
import { answeredOwnChallenge, runDatasetChallenge } from '../availability/dataset-challenger.js'
import { SERVED_ROWS_FILE } from '../train/batch-source.js'
import { PortsPart, hex0x } from './ports-part.js'

// The dataset a verifier replays with (docs/economics.md "A withheld
// dataset"): the configured directory or the one fetched from the swarm, once
// the engine has loaded it (its files' content hash is the program's) and its
// rows make the task's dataset_root; or, once the submitter answered this
// node's dataset challenge, the rows served on chain, written into the run
// directory (node/train/batch-source.ts). What cannot be had is the reason
// for a reject backed by a dataset challenge.

export type TaskDataset =
  | { dir?: string, served?: false }
  | { served: true }
  | { unavailable: string }

export class VerifierDataset extends PortsPart {
  /**
   * The rows this node's answered dataset challenge of the task put on chain, written
   * into `runDir` for the engine (checked against dataset_root); false when it has none.
   */
  async servedRows (chain: ChainClient, taskId: number, task: TaskInfo, runDir: string): Promise<boolean> {
    const file = join(runDir, SERVED_ROWS_FILE)
    const id = await answeredOwnChallenge(chain, taskId)
    if (id === undefined) {
      rmSync(file, { force: true })
      return false
    }
    const c = await chain.datasetChallenge(id)
    if (c == null) return false
    const parts = await chain.datasetServedParts(id)
    const rows: Omit<ServedRows, 'v'> = {
      datasetRoot: fromHex(task.datasetRoot.replace(/^0x/, '')),
      facts: { seed: c.seed, trainSize: c.trainSize, batchSize: c.batchSize, rowSize: c.rowSize, classes: c.classes },
      steps: c.steps,
      parts
    }
    // what the chain took, checked again: a serve whose parts cannot be read back is no input to replay from
    servedRowBatches({ v: 1, ...rows })
    writeFileSync(file, encodeServedRows(rows))
    this.log.info({ taskId, challengeId: id, steps: c.steps.length, parts: parts.length }, 'dataset rows read from their serve on chain')
    return true
  }

  /**
   * A dataset directory for the task's replay: the configured one if it is the task's, else the one
   * its announcement names fetched from the swarm (`signal` ends the downloads); each loaded by the
   * engine (content hash) and its dataset_root compared with the task's. Unavailable: why none can
   * be used. None when `served`: servedRows wrote the rows into the run directory.
   */
  async datasetFor (taskId: number, task: TaskInfo, program: TaskProgram, runDir: string, served: boolean, signal?: AbortSignal): Promise<TaskDataset> {
    if (program.dataset.kind !== 'idx' || served) {
      // synthetic and text datasets are generated or installed: nothing to fetch, and no challenge of them is taken;
      // served rows are in the run directory, where the engine finds them
      await this.engine.warm(join(runDir, 'task.json'), undefined, program.runtime)
      return served ? { served: true } : {}
    }
    const announced = (await this.init.book.get(taskId))?.task
    const local = this.localDatasetDir()
    const candidates: Array<() => Promise<string>> = [
      ...(local !== undefined ? [async () => local] : []),
      async () => await this.fetchDataset(program, announced?.datasetCid, signal, announced?.submitter)
    ]
    const why: string[] = []
    for (const get of candidates) {
      try {
        const dir = await get()
        // the engine checks the files' content hash as it loads them: a root known for that hash is theirs
        const known = this.knownRoots()[program.dataset.sha256]
        const w = await this.engine.warm(join(runDir, 'task.json'), dir, program.runtime, { datasetRoot: known === undefined })
        const root = known ?? w.datasetRoot
        if (known === undefined && root !== undefined) this.rememberRoot(program.dataset.sha256, root)
        if (root !== undefined && hex0x(root) === task.datasetRoot) return { dir }
        why.push(`the rows in ${dir} do not make the task's dataset_root`)
      } catch (err) {
        why.push((err as Error).message)
      }
    }
    return { unavailable: why.join('; ') }
  }

  /** This node's dataset challenge of the task (rejecting: it cannot obtain the dataset), followed until served or timed out. */
  async challengeDataset (taskId: number): Promise<DisputeResult> {
    const chain = await this.chain()
    // the program bytes the task was submitted with: the chain takes the data order and the shapes from them
    const program = await chain.taskProgram(taskId)
    if (program == null) throw new Error(`task ${taskId}: its program is not on chain`)
    const r = await runDatasetChallenge(chain, taskId, program, this.log)
    return { disputeId: r.challengeId, winner: r.winner, reason: `dataset: ${r.reason}`, ...(r.served === true ? { served: true } : {}) }
  }

  /** dataset_root by dataset content hash, as this peer's engine computed them (building one takes seconds and a copy of the rows as float32) */
  private knownRoots (): Record<string, string> {
    try { return JSON.parse(readFileSync(this.rootsFile, 'utf8')) as Record<string, string> } catch { return {} }
  }

  private rememberRoot (sha256: string, root: string): void {
    const all = { ...this.knownRoots(), [sha256]: root }
    mkdirSync(join(this.dataDir, 'datasets'), { recursive: true })
    writeFileSync(this.rootsFile, JSON.stringify(all))
  }

  private get rootsFile (): string { return join(this.dataDir, 'datasets', 'roots.json') }
}
