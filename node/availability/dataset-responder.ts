import { join } from 'node:path'
import { DatasetServer } from '../../protocols/availability/index.js'
import { toHex } from '../../protocols/commit/merkle.js'
import type { TaskProgram } from '../../protocols/program/index.js'
import type { TaskInfo } from '../../protocols/pallet-types.js'
import type { ChainClient, ChainEvent } from '../chain/client.js'
import type { Logger } from '../log.js'
import { inputRows, labelRows, loadDatasetFor } from '../train/dataset.js'
import { readProgram } from '../train/store.js'
import { ChallengeResponder, errName, sleep } from './challenge-responder.js'

// The submitter's side of a dataset availability challenge (docs/economics.md
// "A withheld dataset"): when the chain reports a challenge of a task this
// node submitted, it loads the task's dataset (the program it wrote at
// submission, dataDir/submit/<program hash>/task.json, and its configured
// dataset directory), checks its rows make the committed dataset_root, and
// serves the rows of the challenged steps' batches on chain before the
// deadline, in parts of at most 1 MiB, resuming after the rows already in.
// An honest submitter that does not answer pays for the task as if that
// verifier's reject were right.

export interface DatasetResponderInit {
  dataDir: string
  /** the submitter's dataset directory (IDX files), as for `commitments` */
  datasetDir?: string
  chain: () => Promise<ChainClient>
  log: Logger
}

export interface AnsweredDatasetChallenge { challengeId: number, taskId: number, answered: boolean, rows?: number, bytes?: number, ms: number, reason?: string }

/** The server of a program's dataset rows: what dataset_root commits (the engine's `commitments` job computes the same root). */
export function datasetServerFor (program: TaskProgram, datasetDir?: string): DatasetServer {
  const ds = loadDatasetFor(program.dataset, datasetDir)
  const all = new Uint32Array(ds.trainSize).map((_, i) => i)
  const facts = { seed: program.seed, trainSize: ds.trainSize, batchSize: program.batchSize, rowSize: ds.rowSize, classes: ds.classes }
  return new DatasetServer(facts, inputRows(ds, all), labelRows(ds, all))
}

/** Where the submitter's node wrote the program of a task it submitted (node/roles/submitter-ports.ts). */
export const submittedTaskFile = (dataDir: string, programHash: string): string => join(dataDir, 'submit', programHash.replace(/^0x/, '').slice(0, 16), 'task.json')

export class DatasetResponder extends ChallengeResponder<AnsweredDatasetChallenge> {
  /** one server per program: building the trees of a dataset's rows takes seconds */
  private readonly servers = new Map<string, DatasetServer>()

  constructor (private readonly o: DatasetResponderInit) { super(o.chain, o.log, 'dataset challenge') }

  /** Feed every chain event here; challenges of this node's tasks are answered in the background. */
  onChainEvent (e: ChainEvent, me: string): void {
    if (e.section !== 'arbitration' || e.method !== 'DatasetChallenged' || e.data.submitter !== me) return
    this.start(Number(e.data.challengeId))
  }

  protected answers (task: TaskInfo, me: string): boolean { return task.submitter === me }
  protected async openChallenges (chain: ChainClient, taskId: bigint): Promise<number[]> { return await chain.openDatasetChallenges(taskId) }

  async answer (id: number): Promise<void> {
    const t0 = Date.now()
    const chain = await this.o.chain()
    const c = await chain.datasetChallenge(id)
    if (c == null || c.status !== 'Open' || c.submitter !== chain.accountId) return
    const taskId = Number(c.taskId)
    const task = await chain.task(taskId)
    if (task == null) return
    const done = (answered: boolean, extra: Partial<AnsweredDatasetChallenge>): void =>
      this.record({ challengeId: id, taskId, answered, ms: Date.now() - t0, ...extra })
    let server = this.servers.get(task.programHash)
    try {
      if (server === undefined) {
        server = datasetServerFor(readProgram(submittedTaskFile(this.o.dataDir, task.programHash)), this.o.datasetDir)
        this.servers.set(task.programHash, server)
      }
      if ('0x' + toHex(server.root) !== task.datasetRoot) throw new Error('the local dataset does not make the committed dataset_root')
    } catch (err) {
      this.o.log.error({ taskId, challengeId: id, reason: (err as Error).message }, 'cannot answer the dataset challenge: the task\'s dataset is not here (the task pays the verifier as if it could not replay)')
      done(false, { reason: (err as Error).message })
      return
    }
    let parts = server.parts(c.steps, { from: c.served })
    const bytes = parts.reduce((a, p) => a + p.length, 0)
    this.o.log.info({ taskId, challengeId: id, steps: c.steps.length, rows: c.total, parts: parts.length, bytes, deadline: c.deadline }, 'dataset serve parts built')
    for (let i = 0, failures = 0; i < parts.length && failures < 20;) {
      try {
        await chain.respondDataset(id, parts[i])
        i++
        failures = 0
      } catch (err) {
        failures++
        const name = errName(err)
        if (name === 'arbitration.DatasetChallengeClosed') return
        if (name === 'arbitration.InvalidDatasetServe' && i > 0) {
          // a part sent again after a lost acknowledgement: resume from what the chain holds
          parts = server.parts(c.steps, { from: (await chain.datasetChallenge(id))?.served ?? 0 })
          i = 0
          continue
        }
        if (name !== '') { done(false, { reason: name }); throw err }
        await sleep(500) // transport trouble: retry
      }
    }
    this.o.log.info({ taskId, challengeId: id, rows: c.total, bytes, ms: Date.now() - t0 }, 'served the challenged dataset rows on chain')
    done(true, { rows: c.total, bytes })
  }
}
