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
  /**
   * The rows and trees of the last dataset served (building them takes seconds), by content hash,
   * shared by every program on it (each its own data order: withOrder). One per program, kept for
   * good, was a float32 copy of the dataset each (188 MB for Fashion-MNIST): a verifier drawn on a
   * submitter's tasks (a sweep of programs over one dataset) grew its node by that per challenge.
   */
  private held?: { sha256: string, server: DatasetServer }

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
    let server: DatasetServer
    try {
      const program = readProgram(submittedTaskFile(this.o.dataDir, task.programHash))
      if (this.held?.sha256 !== program.dataset.sha256) {
        this.held = undefined // the last one's rows go before the next one's are built
        this.held = { sha256: program.dataset.sha256, server: datasetServerFor(program, this.o.datasetDir) }
      }
      server = this.held.server.withOrder(program.seed, program.batchSize)
      if ('0x' + toHex(server.root) !== task.datasetRoot) throw new Error('the local dataset does not make the committed dataset_root')
    } catch (err) {
      this.o.log.error({ taskId, challengeId: id, reason: (err as Error).message }, 'cannot answer the dataset challenge: the task\'s dataset is not here (the task pays the verifier as if it could not replay)')
      done(false, { reason: (err as Error).message })
      return
    }
    // built part by part as it is sent: a serve is 45-63 MB on the devnet's task (240 MB at a checkpoint every 100)
    this.o.log.info({ taskId, challengeId: id, steps: c.steps.length, rows: c.total, from: c.served, deadline: c.deadline }, 'serving the challenged dataset rows')
    let bytes = 0
    let from = c.served
    for (let sent = 0, failures = 0; from < c.total && failures < 20;) {
      const part = server.part(c.steps, from)
      try {
        await chain.respondDataset(id, part.bytes)
        from = part.next
        bytes += part.bytes.length
        sent++
        failures = 0
      } catch (err) {
        failures++
        const name = errName(err)
        if (name === 'arbitration.DatasetChallengeClosed') return
        if (name === 'arbitration.InvalidDatasetServe' && sent > 0) {
          // a part sent again after a lost acknowledgement: resume from what the chain holds
          from = (await chain.datasetChallenge(id))?.served ?? 0
          sent = 0
          continue
        }
        if (name !== '') { done(false, { reason: name }); throw err }
        await sleep(500) // transport trouble: retry
      }
    }
    if (from < c.total) {
      this.o.log.error({ taskId, challengeId: id, served: from, rows: c.total }, 'serving the challenged dataset rows failed 20 times in a row: given up')
      done(false, { reason: 'the chain could not be reached' })
      return
    }
    this.o.log.info({ taskId, challengeId: id, rows: c.total, bytes, ms: Date.now() - t0 }, 'served the challenged dataset rows on chain')
    done(true, { rows: c.total, bytes })
  }
}
