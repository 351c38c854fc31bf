import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { DisputeResult } from '../../actors/ports.js'
import type { TaskProgram } from '../../protocols/program/program.js'
import { idxFileMaxBytes } from '../../protocols/verification/fetch-limits.js'
import type { ChainClient, TaskInfo } from '../chain/client.js'
import type { EngineFaults } from '../engine/protocol.js'
import type { WarmEngine } from '../engine/warm-engine.js'
import type { Logger } from '../log.js'
import type { Peer } from '../peer.js'
import type { ShardService } from '../shards/index.js'
import { installFetchedDataset } from '../train/fetched-dataset.js'
import { fetchBundle } from './bundle-fetch.js'
import type { EconomicsConfig } from './economics.js'
import type { TaskBook } from './task-book.js'
import type { WorkProgress } from './work-progress.js'

// What every role's ports share (node-ports.ts composes them): the peer's
// services, its engine, its progress table, and the helpers more than one role needs.

export interface NodePortsInit {
  peer: Peer
  chain: () => Promise<ChainClient>
  shards: ShardService
  book: TaskBook
  economics?: Partial<EconomicsConfig>
  /** where IDX datasets are read from when present locally */
  datasetDir?: string
  /** hooks for the dispute game; absent → disputes are refused with a clear error */
  disputes?: {
    challenge: (taskId: number, against: 'solver' | 'verifier', step: number | undefined) => Promise<DisputeResult>
    defend: (taskId: number, disputeId: number) => Promise<DisputeResult>
  }
  // ---- disputes ----
  /** the faults of a task's training job: FAULT INJECTION and the chain's Truebit forced error (node/dispute/faults.ts) */
  trainFaults?: (taskId: number, task: TaskInfo) => Promise<EngineFaults>
  /** FAULT INJECTION `--fault bad-checkpoint`: publish checkpoints with one byte flipped, keeping no true copy */
  badCheckpoints?: boolean
  /** FAULT INJECTION `--fault withhold-dataset`: announce tasks without their dataset (only the submitter's own solver has it) */
  withholdDataset?: boolean
  /** steps a whistleblower re-checks (default: all of them: catching forced errors is its job) */
  recheckSteps?: number
}

/** The state the role ports share, made once per peer by NodePorts. */
export interface PortsShared {
  init: NodePortsInit
  peerId: string
  /** what this peer's engine is doing, by task (for status, the devnet and the dashboard) */
  progress: Map<number, WorkProgress>
  econ: EconomicsConfig
  log: Logger
  dataDir: string
  /** replays run in one long-lived engine process (started on first use; see warm-engine.ts) */
  engine: WarmEngine
}

export const hex0x = (h: string): string => h.startsWith('0x') ? h : '0x' + h
export const enc = new TextEncoder()

/** One role's ports: the shared state under the names the methods use. */
export abstract class PortsPart {
  protected readonly init: NodePortsInit
  protected readonly peerId: string
  protected readonly progress: Map<number, WorkProgress>
  protected readonly econ: EconomicsConfig
  protected readonly log: Logger
  protected readonly dataDir: string
  protected readonly engine: WarmEngine

  constructor (shared: PortsShared) {
    this.init = shared.init
    this.peerId = shared.peerId
    this.progress = shared.progress
    this.econ = shared.econ
    this.log = shared.log
    this.dataDir = shared.dataDir
    this.engine = shared.engine
  }

  protected get shards (): ShardService { return this.init.shards }
  protected async chain (): Promise<ChainClient> { return await this.init.chain() }

  protected async taskOrThrow (taskId: number): Promise<TaskInfo> {
    const t = await (await this.chain()).task(taskId)
    if (t == null) throw new Error(`task ${taskId} does not exist on chain`)
    return t
  }

  /**
   * A local directory with the task's dataset: the configured one, or fetched from the swarm
   * (only the IDX files the loader reads, each within what the program's sizes allow), ending with
   * `signal`, asked of the submitter's peer (`submitterPeer`, from its checked announcement) first.
   */
  protected async datasetDirFor (
    program: TaskProgram, datasetCid: string | undefined, signal?: AbortSignal, submitterPeer?: string
  ): Promise<string | undefined> {
    if (program.dataset.kind !== 'idx') return undefined
    return this.localDatasetDir() ?? await this.fetchDataset(program, datasetCid, signal, submitterPeer)
  }

  /** The configured dataset directory (or the packaged Fashion-MNIST) when it holds IDX files (not checked to be any task's). */
  protected localDatasetDir (): string | undefined {
    const local = this.init.datasetDir ?? '/usr/share/datasets/fashion-mnist'
    return existsSync(join(local, 'train-images-idx3-ubyte.gz')) || existsSync(join(local, 'train-images-idx3-ubyte')) ? local : undefined
  }

  /**
   * The task's dataset fetched from the swarm (the bundle its announcement names) into the data directory, unless it
   * is there already, and kept only when its content hash is the program's: only the
   * IDX files the loader reads, each within what the program's sizes allow; `signal` ends the downloads; asked of
   * the submitter's peer (`submitterPeer`, from its checked announcement) first.
   */
  protected async fetchDataset (program: TaskProgram, datasetCid: string | undefined, signal?: AbortSignal, submitterPeer?: string): Promise<string> {
    if (datasetCid == null) throw new Error(`the dataset ${program.dataset.name} is not in ${this.init.datasetDir ?? '/usr/share/datasets/fashion-mnist'} and the task names no dataset CID`)
    const preferred = submitterPeer !== undefined ? [submitterPeer] : undefined
    // kept under its content hash once it is the program's (and not fetched again): another task naming
    // the same hash with files of its own cannot replace what this one's replays and tapes read
    return await installFetchedDataset(this.dataDir, program.dataset, async dir =>
      await fetchBundle(this.shards, datasetCid, dir, name => idxFileMaxBytes(program.dataset, name), { signal, preferred }))
  }
}
